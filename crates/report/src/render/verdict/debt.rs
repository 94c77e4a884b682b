//! Whether a run's compaction kept up with its ingestion: the engine's
//! pending compaction bytes (its debt) after each batch, tested for a
//! rising trend. The month is predicted from batch times, which leave out
//! the work an engine defers to the background, so a config whose debt
//! rose across its run is set aside rather than ranked.
//!
//! The test is Mann-Kendall's (a rank test for a monotonic trend: robust to
//! the dips a finished compaction makes, with no assumption of a straight
//! line), and the size of the rise is Sen's slope (the median of the
//! pairwise slopes), as hydrology and climate series are judged.

use ledgerbench_results::BackendRun;

/// The one-sided level at which a rise is called, as `ledgerbench ab` calls
/// a change.
const ALPHA: f64 = 0.01;
/// A smaller rise a batch, as a share of a batch's data, is not called:
/// over the month's 234 batches it comes to about two batches' data.
const MIN_RISE: f64 = 0.01;
/// The normal approximation of Mann-Kendall's statistic holds from about
/// ten points: a shorter run is not judged.
const MIN_BATCHES: usize = 10;

/// A run whose debt in a store rose across its batches.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Rising {
    /// The run's label.
    pub(super) run: String,
    /// Debt after the first and the last batch, MiB.
    pub(super) first_mib: f64,
    pub(super) last_mib: f64,
    pub(super) batches: usize,
    /// Sen's slope a batch, percent of the store's mean batch data.
    pub(super) rise_pct: f64,
    /// Mann-Kendall's one-sided p of a rising trend.
    pub(super) p: f64,
}

impl Rising {
    /// The rise in a few words, for the recommendation's text.
    pub(super) fn text(&self) -> String {
        format!(
            "debt {:.0} -> {:.0} MiB over {} batches in `{}`, rising {:.1}% of a batch's data a batch, Mann-Kendall p = {:.0e}",
            self.first_mib, self.last_mib, self.batches, self.run, self.rise_pct, self.p
        )
    }
}

/// The run's debt in `store` when it rose: measured after every batch,
/// at least [`MIN_BATCHES`] of them, a rising trend at [`ALPHA`] and a rise
/// over [`MIN_RISE`] of a batch's data a batch. None otherwise, and for an
/// engine that does not report a debt (it defers no compaction).
pub(super) fn rising(label: &str, r: &BackendRun, store: &str) -> Option<Rising> {
    let mut debt = Vec::with_capacity(r.batches.len());
    let mut bytes = 0.0;
    for b in &r.batches {
        let s = b.stores.iter().find(|s| s.store == store)?;
        debt.push(s.engine.pending_compaction_bytes? as f64);
        bytes += s.logical_bytes as f64;
    }
    if debt.len() < MIN_BATCHES {
        return None;
    }
    let per_batch = (bytes / debt.len() as f64).max(1.0);
    let (p, slope) = trend(&debt)?;
    let rise = slope / per_batch;
    (p < ALPHA && rise > MIN_RISE).then(|| Rising {
        run: label.to_string(),
        first_mib: debt[0] / f64::from(1 << 20),
        last_mib: debt[debt.len() - 1] / f64::from(1 << 20),
        batches: debt.len(),
        rise_pct: rise * 100.0,
        p,
    })
}

/// Mann-Kendall's one-sided p of a rising trend in `x` (the normal
/// approximation, its variance corrected for ties, with a continuity
/// correction) and Sen's slope a step; none for fewer than three points.
fn trend(x: &[f64]) -> Option<(f64, f64)> {
    let n = x.len();
    if n < 3 {
        return None;
    }
    let mut s = 0i64;
    let mut slopes = Vec::with_capacity(n * (n - 1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            let d = x[j] - x[i];
            s += i64::from(d > 0.0) - i64::from(d < 0.0);
            slopes.push(d / (j - i) as f64);
        }
    }
    slopes.sort_by(f64::total_cmp);
    let m = slopes.len();
    let sen = (slopes[(m - 1) / 2] + slopes[m / 2]) / 2.0;
    // Each group of t equal values takes t(t-1)(2t+5) from the variance:
    // a run whose debt sits at zero for many batches has many ties.
    let mut sorted = x.to_vec();
    sorted.sort_by(f64::total_cmp);
    let ties: f64 = sorted
        .chunk_by(|a, b| a == b)
        .map(|g| {
            let t = g.len() as f64;
            t * (t - 1.0) * (2.0 * t + 5.0)
        })
        .sum();
    let nf = n as f64;
    let var = (nf * (nf - 1.0) * (2.0 * nf + 5.0) - ties) / 18.0;
    if var <= 0.0 {
        // Every value the same: no trend.
        return Some((1.0, sen));
    }
    let z = (s - s.signum()) as f64 / var.sqrt();
    Some((upper_tail(z), sen))
}

/// P(Z > z) for a standard normal Z, by Abramowitz and Stegun's 7.1.26
/// (absolute error under 1.5e-7, ample for a p compared with 0.01).
fn upper_tail(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    if z >= 0.0 {
        erfc / 2.0
    } else {
        1.0 - erfc / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_normal_tail_matches_known_values() {
        for (z, p) in [
            (0.0, 0.5),
            (1.0, 0.158_655),
            (2.326_348, 0.01),
            (-1.644_854, 0.95),
        ] {
            assert!((upper_tail(z) - p).abs() < 1e-6, "{z}: {}", upper_tail(z));
        }
    }

    #[test]
    fn a_rise_with_dips_is_a_trend_and_a_flat_or_falling_series_is_not() {
        // BlobDB's txdata debt at 128 MiB, MiB after each of 18 batches
        // (results/verdict-txdata-one-machine-2026-11-25): two dips.
        let blob = [
            5., 7., 12., 17., 16., 21., 27., 32., 37., 43., 48., 53., 59., 52., 58., 63., 68., 74.,
        ];
        let (p, sen) = trend(&blob).expect("trend");
        assert!(p < 1e-6, "{p}");
        assert!((sen - 4.17).abs() < 0.01, "{sen}");
        // Debt that comes and goes around a level, and zero throughout.
        let level = [
            20., 0., 35., 10., 0., 28., 5., 40., 0., 12., 30., 0., 25., 8., 0., 33., 2., 15.,
        ];
        let (p, _) = trend(&level).expect("trend");
        assert!(p > 0.2, "{p}");
        assert_eq!(trend(&[0.0; 18]), Some((1.0, 0.0)));
        let falling: Vec<f64> = blob.iter().rev().copied().collect();
        assert!(trend(&falling).expect("trend").0 > 0.99);
        // A single late step (a compaction still running at the end) among
        // ties at zero is not enough.
        let mut late = [0.0; 18];
        late[17] = 500.0;
        assert!(trend(&late).expect("trend").0 > ALPHA);
    }

    /// The smoke fixture's first run with `debt` MiB after each batch (its
    /// first batch repeated), `txdata` 100 MiB a batch.
    fn run_with(debt: &[Option<u64>]) -> BackendRun {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/results/stellar-smoke/results.json"
        );
        let all: serde_json::Value =
            serde_json::from_slice(&std::fs::read(path).expect("fixture")).expect("json");
        let mut run = all["runs"][0].clone();
        let first = run["batches"][0].clone();
        let batches: Vec<serde_json::Value> = debt
            .iter()
            .map(|d| {
                let mut b = first.clone();
                for s in b["stores"].as_array_mut().expect("stores") {
                    if s["store"] == "txdata" {
                        s["logical_bytes"] = serde_json::json!(100u64 << 20);
                        s["engine"]["pending_compaction_bytes"] =
                            serde_json::json!(d.map(|m| m << 20));
                    }
                }
                b
            })
            .collect();
        run["batches"] = serde_json::json!(batches);
        serde_json::from_value(run).expect("run")
    }

    #[test]
    fn a_run_falls_behind_only_on_a_material_measured_rise_over_enough_batches() {
        let rise: Vec<Option<u64>> = (0..18).map(|i| Some(5 + 4 * i)).collect();
        let r = rising("blob@128MiB", &run_with(&rise), "txdata").expect("rising");
        assert_eq!((r.run.as_str(), r.batches), ("blob@128MiB", 18));
        assert_eq!((r.first_mib, r.last_mib), (5.0, 73.0));
        assert!((r.rise_pct - 4.0).abs() < 1e-9 && r.p < ALPHA, "{r:?}");
        // The same rise in another store is not this one's.
        assert_eq!(rising("blob", &run_with(&rise), "ledgers"), None);
        // Half a MiB a batch of 100 is under the 1% that counts.
        let slight: Vec<Option<u64>> = (0..18).map(|i| Some(i / 2)).collect();
        assert_eq!(rising("slight", &run_with(&slight), "txdata"), None);
        // Nine batches are too few to judge; a batch without the figure
        // leaves the run unjudged, not judged flat or rising.
        assert_eq!(rising("short", &run_with(&rise[..9]), "txdata"), None);
        let mut gap = rise.clone();
        gap[3] = None;
        assert_eq!(rising("gap", &run_with(&gap), "txdata"), None);
    }
}

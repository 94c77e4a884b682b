//! Whether a run's compaction kept up with its ingestion: the engine's
//! pending compaction bytes (its debt) after each batch, tested for a
//! rise. The month is predicted from batch times, which leave out the work
//! an engine defers to the background, so a config whose debt rose across
//! its run is set aside rather than ranked.
//!
//! Debt is a running total: what a batch leaves owed adds to what the one
//! before left, so its levels wander like a random walk even when nothing
//! is falling behind, and a trend test on them (Mann-Kendall's, first
//! tried) calls such wandering a rise about half the time. The test is on
//! the batch-to-batch changes instead, which a walk without a drift
//! centres on zero: their Hodges-Lehmann estimate and its exact interval
//! (the signed-rank machinery `ledgerbench ab` judges timings with). A
//! rise that levels off inside the run is not called: the changes
//! after it centre on zero again.

use ledgerbench_results::BackendRun;

use crate::ab::hodges_lehmann;

/// The interval is two-sided at this level, so its lower bound is a
/// one-sided 99% bound: `ledgerbench ab`'s 0.01.
const ALPHA: f64 = 0.02;
/// A smaller rise a batch, as a share of a batch's data, is not called:
/// over the month's 234 batches it comes to about two batches' data.
const MIN_RISE: f64 = 0.01;
/// Fewer batches leave the interval too wide to bound anything: a shorter
/// run is not judged.
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
    /// The rise a batch (Hodges-Lehmann) and its one-sided 99% lower
    /// bound, MiB.
    pub(super) rise_mib: f64,
    pub(super) low_mib: f64,
    /// The rise as a share of the store's mean batch data, percent.
    pub(super) rise_pct: f64,
}

impl Rising {
    /// The rise in a few words, for the recommendation's text.
    pub(super) fn text(&self) -> String {
        format!(
            "debt {:.0} -> {:.0} MiB over {} batches in `{}`, rising {:.1} MiB a batch ({:.1}% of a batch's data; 99% lower bound {:.1} MiB)",
            self.first_mib,
            self.last_mib,
            self.batches,
            self.run,
            self.rise_mib,
            self.rise_pct,
            self.low_mib
        )
    }
}

/// The run's debt in `store` when it rose: measured after every batch, at
/// least [`MIN_BATCHES`] of them, the changes' lower bound above zero and
/// their estimate over [`MIN_RISE`] of a batch's data. None otherwise, and
/// for an engine that reports no debt (it defers no compaction).
/// A run of operations' batches are its segments after the `load` mark.
pub(super) fn rising(
    label: &str,
    r: &BackendRun,
    store: &str,
    load: Option<&str>,
) -> Option<Rising> {
    const MIB: f64 = (1u64 << 20) as f64;
    let batches = super::shape::batches(r, load);
    let mut debt = Vec::with_capacity(batches.len());
    let mut bytes = 0.0;
    for b in batches.iter().filter(|b| !b.load) {
        let s = b.stores.iter().find(|s| s.store == store)?;
        debt.push(s.engine.pending_compaction_bytes? as f64);
        bytes += s.logical_bytes as f64;
    }
    if debt.len() < MIN_BATCHES {
        return None;
    }
    let per_batch = (bytes / debt.len() as f64).max(1.0);
    let (rise, low) = rises(&debt, per_batch)?;
    Some(Rising {
        run: label.to_string(),
        first_mib: debt[0] / MIB,
        last_mib: debt[debt.len() - 1] / MIB,
        batches: debt.len(),
        rise_mib: rise / MIB,
        low_mib: low / MIB,
        rise_pct: rise / per_batch * 100.0,
    })
}

/// The rise a batch of `debt` and its lower bound, when the bound is above
/// zero and the rise over [`MIN_RISE`] of `per_batch`.
fn rises(debt: &[f64], per_batch: f64) -> Option<(f64, f64)> {
    let steps: Vec<f64> = debt.windows(2).map(|w| w[1] - w[0]).collect();
    let (rise, low, _) = hodges_lehmann(&steps, ALPHA)?;
    (low > 0.0 && rise / per_batch > MIN_RISE).then_some((rise, low))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smoke fixture's first run with `debt` MiB after each batch (its
    /// first batch repeated) and `txdata` batch `i` holding `mib(i)` MiB.
    fn run_with(debt: &[Option<u64>], mib: impl Fn(usize) -> u64) -> BackendRun {
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
            .enumerate()
            .map(|(i, d)| {
                let mut b = first.clone();
                for s in b["stores"].as_array_mut().expect("stores") {
                    if s["store"] == "txdata" {
                        s["logical_bytes"] = serde_json::json!(mib(i) << 20);
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

    fn judge(debt: &[u64]) -> Option<Rising> {
        let debt: Vec<Option<u64>> = debt.iter().copied().map(Some).collect();
        rising("run", &run_with(&debt, |_| 100), "txdata", None)
    }

    #[test]
    fn a_rise_with_dips_is_called_and_wandering_or_catching_up_is_not() {
        // BlobDB's txdata debt at 128 MiB, MiB after each of 18 batches
        // (results/verdict-txdata-one-machine-2026-11-25): two dips.
        let blob = [
            5, 7, 12, 17, 16, 21, 27, 32, 37, 43, 48, 53, 59, 52, 58, 63, 68, 74,
        ];
        let r = judge(&blob).expect("rising");
        assert_eq!((r.first_mib, r.last_mib, r.batches), (5.0, 74.0, 18));
        assert!((r.rise_mib - 5.0).abs() < 1e-9, "{r:?}");
        assert!(r.low_mib > 0.0 && r.low_mib < r.rise_mib, "{r:?}");
        assert!(
            (r.rise_pct - r.rise_mib).abs() < 1e-9,
            "100 MiB a batch: {r:?}"
        );
        // Leveled RocksDB at the report's L0 trigger of 50
        // (results/verdict-2026-11-22/background): compaction catches up
        // to zero again and again.
        let catching_up = [
            0, 0, 0, 0, 393, 0, 808, 341, 0, 1159, 0, 1332, 506, 1384, 1702, 0, 1695, 480,
        ];
        assert_eq!(judge(&catching_up), None);
        // A walk held at zero, with no drift: it wanders up and back.
        let wandering = [
            0, 12, 30, 21, 40, 52, 38, 55, 70, 61, 44, 58, 41, 27, 39, 20, 33, 15,
        ];
        assert_eq!(judge(&wandering), None);
        // A rise that levels off inside the run is not called (the changes
        // after it centre on zero): the test's known blind spot.
        let plateau = [
            0, 0, 0, 0, 385, 0, 917, 1170, 1425, 1664, 1914, 2147, 2382, 2374, 2613, 2240, 2010,
            2290,
        ];
        assert_eq!(judge(&plateau), None);
        assert_eq!(judge(&[0; 18]), None);
        let falling: Vec<u64> = blob.iter().rev().copied().collect();
        assert_eq!(judge(&falling), None);
    }

    #[test]
    fn a_driftless_walk_held_at_zero_is_seldom_called_rising() {
        // Debt as a running total with no drift: each batch adds or pays
        // off a random amount, never below zero (MiB, batches of 100).
        let mut rng = ledgerbench_rng::Rng::new(7);
        let walks = 2000;
        let called = (0..walks)
            .filter(|_| {
                let mut debt = vec![0.0f64];
                for _ in 1..18 {
                    let next = debt[debt.len() - 1] + 10.0 * rng.normal();
                    debt.push(next.max(0.0));
                }
                rises(&debt, 100.0).is_some()
            })
            .count();
        // About 1% is the level; the floor at zero adds a little.
        assert!(called * 100 <= 2 * walks, "{called} of {walks}");
        // And a drift of 3 MiB a batch under the same noise is mostly seen.
        let seen = (0..200)
            .filter(|_| {
                let mut debt = vec![0.0f64];
                for _ in 1..18 {
                    let next = debt[debt.len() - 1] + 3.0 + 2.0 * rng.normal();
                    debt.push(next.max(0.0));
                }
                rises(&debt, 100.0).is_some()
            })
            .count();
        assert!(seen >= 180, "{seen} of 200");
    }

    #[test]
    fn a_run_falls_behind_only_on_a_material_measured_rise_over_enough_batches() {
        let steady = |n: u64, step: u64| (0..n).map(|i| 5 + step * i).collect::<Vec<u64>>();
        // Ten batches are judged, nine are too few.
        assert!(judge(&steady(10, 4)).is_some());
        assert_eq!(judge(&steady(9, 4)), None);
        // 2 MiB a batch of 100 is over the 1% that counts; 1 is not.
        assert!(judge(&steady(18, 2)).is_some());
        assert_eq!(judge(&steady(18, 1)), None);
        // The share is of the store's mean batch (200 MiB here), whichever
        // batch is smaller or larger.
        let rise: Vec<Option<u64>> = steady(18, 3).into_iter().map(Some).collect();
        let r = rising(
            "run",
            &run_with(&rise, |i| if i % 2 == 0 { 50 } else { 350 }),
            "txdata",
            None,
        )
        .expect("rising");
        assert!((r.rise_pct - 1.5).abs() < 1e-9, "{r:?}");
        // The same rise in another store is not this one's; a batch
        // without the figure leaves the run unjudged, not flat or rising.
        assert_eq!(
            rising("run", &run_with(&rise, |_| 100), "ledgers", None),
            None
        );
        let mut gap = rise.clone();
        gap[3] = None;
        assert_eq!(
            rising("run", &run_with(&gap, |_| 100), "txdata", None),
            None
        );
    }
}

//! The timing gate's statistics (`ledgerbench ab`): is current slower or
//! faster than baseline, beyond what the same code varies on this machine?
//!
//! Runs alternate A B B A A B ..., so drift of the machine (thermal, page
//! cache, a neighbour) hits both sides alike. Each round pairs its A and
//! its B; the log ratio ln(B/A) of a pair is one observation.
//!
//! - **The test: Wilcoxon's signed-rank test**, exact for the number of
//!   pairs. Why a rank test and not a t-test or a bootstrap: timings are
//!   skewed and a stalled run is an outlier a mean follows; ranks do not.
//!   The pairs are few (20 by default): a bootstrap of so few values has a
//!   coarse, too-narrow distribution, where the exact signed-rank distribution
//!   gives the p-value without assuming a shape.
//! - **The effect: the Hodges-Lehmann estimate** (the median of the pairs'
//!   Walsh averages) with its exact interval from the same distribution,
//!   reported as a percentage.
//! - **The noise band**: the half-width of the same interval over the
//!   same-code pairs the order makes (B B and A A next to each other at
//!   each round's turn): how far the code's estimate moves from itself in
//!   this session. A change is called only when the test rejects at alpha
//!   *and* the effect lies outside the band, so a shift the noise makes on
//!   its own is not one.

use ledgerbench_core::quantile;
pub use ledgerbench_stats::rank::{hodges_lehmann, signed_rank_p, smallest_p};
use serde::Serialize;

mod noise;
pub use noise::{NoiseError, NoiseTarget, noise_pct, over_target};

/// Which side a run was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Side {
    /// The baseline.
    A,
    /// The current.
    B,
}

/// One metric's values in run order: each run's round, side and value
/// (`None` where the run lacks it).
pub type Series = Vec<(usize, Side, Option<f64>)>;

/// The order runs go in: round r is A then B when r is even, B then A when
/// odd (A B B A A B B A ...).
pub fn order(rounds: usize) -> Vec<(usize, Side)> {
    (0..rounds)
        .flat_map(|r| {
            if r % 2 == 0 {
                [(r, Side::A), (r, Side::B)]
            } else {
                [(r, Side::B), (r, Side::A)]
            }
        })
        .collect()
}

/// What the gate says about one metric.
#[derive(Debug, Clone, Serialize)]
pub struct Judgement {
    /// The metric (`run/metric`).
    pub metric: String,
    /// True when lower is better.
    pub lower_is_better: bool,
    /// A/B pairs.
    pub pairs: usize,
    /// Medians of each side's runs.
    pub baseline_median: f64,
    /// Current's median.
    pub current_median: f64,
    /// Hodges-Lehmann effect of current over baseline, percent.
    pub effect_pct: f64,
    /// Its `1 - alpha` interval, percent.
    pub interval_pct: (f64, f64),
    /// The noise band: the half-width of the same-code pairs' interval,
    /// percent either side.
    pub band_pct: f64,
    /// Same-code pairs the band comes from.
    pub same_pairs: usize,
    /// The signed-rank test's two-sided p-value.
    pub p_value: f64,
    /// `worse` or `better` (by the metric's direction) beyond noise, or
    /// `no change`.
    pub verdict: &'static str,
}

impl Judgement {
    /// True when current is worse than baseline beyond noise.
    pub fn regressed(&self) -> bool {
        self.verdict == "worse"
    }
}

pub(crate) fn pct(log_ratio: f64) -> f64 {
    (log_ratio.exp() - 1.0) * 100.0
}

fn median(v: &[f64]) -> f64 {
    quantile::median(v).unwrap_or(f64::NAN)
}

/// A usable value of a run: present, above 0 and finite.
pub(crate) fn value(runs: &[(usize, Side, Option<f64>)], round: usize, side: Side) -> Option<f64> {
    runs.iter()
        .find(|r| r.0 == round && r.1 == side)
        .and_then(|r| r.2)
        .filter(|v| *v > 0.0 && v.is_finite())
}

/// Each round's ln(B / A), rounds lacking either side left out.
fn log_ratios(runs: &[(usize, Side, Option<f64>)]) -> Vec<f64> {
    let rounds = runs.iter().map(|r| r.0 + 1).max().unwrap_or(0);
    (0..rounds)
        .filter_map(|r| Some((value(runs, r, Side::B)? / value(runs, r, Side::A)?).ln()))
        .collect()
}

/// Judges one metric from its values in run order (`None` where a run
/// lacks it). Pairs are each round's A and B; same-code pairs are
/// neighbours of one side in the sequence. A value missing, not positive
/// or not finite leaves its run out (a log ratio needs both sides above
/// 0); `None` when fewer than two pairs or two same-code pairs remain.
pub fn judge(
    metric: &str,
    lower_is_better: bool,
    runs: &[(usize, Side, Option<f64>)],
    alpha: f64,
) -> Option<Judgement> {
    let d = log_ratios(runs);
    let same: Vec<f64> = runs
        .windows(2)
        .filter(|w| w[0].1 == w[1].1)
        .filter_map(|w| {
            let (a, b) = (value(runs, w[0].0, w[0].1)?, value(runs, w[1].0, w[1].1)?);
            Some((b / a).ln())
        })
        .collect();
    if d.len() < 2 || same.len() < 2 {
        return None;
    }
    let (est, lo, hi) = hodges_lehmann(&d, alpha)?;
    // The half-width of the same-code interval: how far this code's
    // estimate moves from run to run. Not its centre: within a trial the
    // machine drifts, so the second of two runs in a row sat -2.5% to
    // +5.7% from the first in the 12-round trials here; the alternating pairs
    // cancel that, and a band reaching to the far end would add it.
    let (_, slo, shi) = hodges_lehmann(&same, alpha)?;
    let band = pct((shi - slo) / 2.0);
    let p = signed_rank_p(&d);
    let effect = pct(est);
    let beyond = p < alpha && effect.abs() > band;
    let worse = (effect > 0.0) == lower_is_better;
    let side_values = |side| {
        runs.iter()
            .filter(|r| r.1 == side)
            .filter_map(|r| r.2)
            .collect::<Vec<_>>()
    };
    Some(Judgement {
        metric: metric.to_string(),
        lower_is_better,
        pairs: d.len(),
        baseline_median: median(&side_values(Side::A)),
        current_median: median(&side_values(Side::B)),
        effect_pct: effect,
        interval_pct: (pct(lo), pct(hi)),
        band_pct: band,
        same_pairs: same.len(),
        p_value: p,
        verdict: match (beyond, worse) {
            (false, _) => "no change",
            (true, true) => "worse",
            (true, false) => "better",
        },
    })
}

/// The judgements as a markdown table.
pub fn markdown(rows: &[Judgement], alpha: f64) -> String {
    let mut md = format!(
        "| metric | baseline median | current median | effect | {:.0}% interval | noise band | p | verdict |\n|---|---:|---:|---:|---|---:|---:|---|\n",
        (1.0 - alpha) * 100.0
    );
    for j in rows {
        md.push_str(&format!(
            "| {} | {:.4} | {:.4} | {:+.2}% | {:+.2}% .. {:+.2}% | ±{:.2}% | {:.4} | {} |\n",
            j.metric,
            j.baseline_median,
            j.current_median,
            j.effect_pct,
            j.interval_pct.0,
            j.interval_pct.1,
            j.band_pct,
            j.p_value,
            j.verdict
        ));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs in ABBA order with current `slow` times baseline, around
    /// `base`, with `noise` multiplied in by a fixed pattern.
    fn runs(rounds: usize, slow: f64, noise: &[f64]) -> Vec<(usize, Side, Option<f64>)> {
        order(rounds)
            .into_iter()
            .enumerate()
            .map(|(i, (r, s))| {
                let v = 10.0 * noise[i % noise.len()] * if s == Side::B { slow } else { 1.0 };
                (r, s, Some(v))
            })
            .collect()
    }

    #[test]
    fn a_five_percent_slowdown_is_worse_and_the_same_code_is_not() {
        let noise = [1.0, 1.01, 0.99, 1.02, 0.98, 1.005, 0.995, 1.015, 0.985];
        let slow = judge("x", true, &runs(10, 1.05, &noise), 0.01).expect("judged");
        assert_eq!(slow.verdict, "worse", "{slow:?}");
        assert!((slow.effect_pct - 5.0).abs() < 2.0, "{slow:?}");
        assert!(slow.regressed());
        let same = judge("x", true, &runs(10, 1.0, &noise), 0.01).expect("judged");
        assert_eq!(same.verdict, "no change", "{same:?}");
        // Faster is better for a time, worse for a rate.
        let fast = judge("x", true, &runs(10, 0.95, &noise), 0.01).expect("judged");
        assert_eq!(fast.verdict, "better");
        let rate = judge("x", false, &runs(10, 0.95, &noise), 0.01).expect("judged");
        assert_eq!(rate.verdict, "worse");
    }

    #[test]
    fn a_shift_inside_the_noise_band_is_not_called() {
        // Same code moving ±20% from run to run: a steady 3% is noise here
        // even though every pair leans the same way.
        let noise = [1.0, 1.2, 0.8, 1.2, 0.8, 1.2, 0.8, 1.2];
        let j = judge("x", true, &runs(10, 1.03, &noise), 0.01).expect("judged");
        assert!(j.band_pct > 3.0, "{j:?}");
        assert_eq!(j.verdict, "no change", "{j:?}");
    }

    #[test]
    fn an_order_effect_neither_hides_a_change_nor_makes_one() {
        // The first run of every round 3% slower, so every same-code
        // pair leans one way, as drift made them here: the alternating
        // order cancels it in the pairs, and the band leaves it out.
        let ordered = |slow: f64| -> Vec<(usize, Side, Option<f64>)> {
            let noise = [1.0, 1.01, 0.99, 1.005, 0.995, 1.008, 0.992];
            order(12)
                .into_iter()
                .enumerate()
                .map(|(i, (r, s))| {
                    let first = if i % 2 == 0 { 1.03 } else { 1.0 };
                    let v = noise[i % noise.len()] * first * if s == Side::B { slow } else { 1.0 };
                    (r, s, Some(v))
                })
                .collect()
        };
        let slow = judge("x", true, &ordered(1.05), 0.05).expect("judged");
        assert_eq!(slow.verdict, "worse", "{slow:?}");
        assert!(slow.band_pct < 2.0, "{slow:?}");
        let same = judge("x", true, &ordered(1.0), 0.05).expect("judged");
        assert_eq!(same.verdict, "no change", "{same:?}");
    }

    #[test]
    fn the_order_alternates_so_same_code_neighbours_exist() {
        let o = order(4);
        let sides: Vec<Side> = o.iter().map(|x| x.1).collect();
        use Side::{A, B};
        assert_eq!(sides, [A, B, B, A, A, B, B, A]);
        assert!(judge("x", true, &runs(1, 1.0, &[1.0]), 0.01).is_none());
    }
}

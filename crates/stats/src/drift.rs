//! The drift verdict of one metric over a long run: flat, drifting (a
//! slope that matters) or stepped (a level that changed at a time).
//!
//! Two models of the series after warm-up compete: a line (Theil-Sen) and
//! a staircase (PELT's segments). The staircase is taken when it explains
//! the series better than the line by more than its extra segments'
//! penalty, and then each step must be material (over the threshold of
//! the level before it) and the steps must not keep turning back (a
//! sawtooth is no step: it swings); otherwise the line is tested: Mann-Kendall with
//! Hamed and Rao's correction (in its AR(1) form,
//! [`trend::mann_kendall_ar1`]) must reject at `alpha` *and* the slope,
//! projected over the horizon the reader asks about (LittDB's 14 days, or
//! the run itself when longer), must move the metric by more than the
//! threshold. Either test alone fails a practical reader: a significant
//! slope that would take years to matter is no drift, and a steep slope
//! inside autocorrelated noise is no evidence.
//!
//! The penalty of a segment is `penalty_factor * ln(n)` times the noise's
//! long-run variance, estimated from the differences of the series (robust
//! to steps and slopes) and scaled up by their autocorrelation, so slow
//! wandering of AR(1) noise is not read as steps.

use crate::changepoint::pelt_l2;
use crate::normal;
use crate::quantile::median;
use crate::trend::{self, MannKendall, TheilSen};

/// How the verdict decides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DriftOptions {
    /// The trend test's level.
    pub alpha: f64,
    /// A change smaller than this share of the level is not called
    /// (`--drift-threshold`, 0.10 for 10%).
    pub threshold: f64,
    /// Samples a slope is projected over before it is weighed against the
    /// threshold: 14 days of intervals for a soak; at least the series.
    pub horizon: f64,
    /// A segment's penalty in units of `ln(n)` long-run variances.
    pub penalty_factor: f64,
    /// The shortest segment PELT may make, in samples.
    pub min_segment: usize,
    /// Which variance correction the trend test takes.
    pub correction: Correction,
}

/// The trend test's correction for autocorrelated samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Correction {
    /// Hamed and Rao's, from an AR(1) model of the ranks
    /// ([`trend::mann_kendall_ar1`]): the verdict's.
    #[default]
    Ar1,
    /// Hamed and Rao's over the significant sample lags
    /// ([`trend::hamed_rao`], pymannkendall's): kept to show why not.
    SignificantLags,
}

impl Default for DriftOptions {
    /// 1%, 10% over the series itself, 3 ln(n), 5 samples: chosen before
    /// the trials that publish their error rates (at most 1 in 20 flat
    /// series may be called drifting, so the test's own level is well
    /// under 5%).
    fn default() -> Self {
        Self {
            alpha: 0.01,
            threshold: 0.10,
            horizon: 0.0,
            penalty_factor: 3.0,
            min_segment: 5,
            correction: Correction::Ar1,
        }
    }
}

/// One step of a stepped series.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The sample the new level starts at.
    pub at: usize,
    /// The segment means either side.
    pub from: f64,
    /// After.
    pub to: f64,
}

impl Step {
    /// The change as a share of the level before it.
    pub fn share(&self) -> f64 {
        (self.to - self.from) / self.from.abs().max(f64::MIN_POSITIVE)
    }
}

/// The verdict on one series.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Neither a material slope nor a material step.
    Flat,
    /// A slope that is significant and material.
    Drifting,
    /// Levels that changed at the steps given.
    Stepped(Vec<Step>),
    /// Levels that changed past the threshold back and forth (a
    /// sawtooth), with no drift under them.
    Swinging {
        /// Changes of level past the threshold.
        changes: usize,
        /// The lowest level's mean.
        low: f64,
        /// The highest level's mean.
        high: f64,
    },
    /// Too few samples to say (fewer than `2 * min_segment`).
    TooShort,
}

/// What the verdict found, with the figures behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    /// The call.
    pub verdict: Verdict,
    /// The trend test of the whole series.
    pub test: Option<MannKendall>,
    /// Its slope per sample, with the interval widened by the same
    /// autocorrelation correction.
    pub line: Option<TheilSen>,
    /// The slope over the series as a share of its starting level.
    pub over_run: Option<f64>,
    /// The slope over the horizon (or the series, when longer), the same.
    pub over_horizon: Option<f64>,
    /// The smallest drift over the series, as a share of its level, that
    /// this noise lets the test find 19 times in 20 at `alpha`: what a
    /// "flat" rules out. From the slope's interval: its half-width is
    /// `z(1 - alpha/2)` standard errors, and the drift must be
    /// `z(1 - alpha/2) + z(0.95)` of them.
    pub detectable: Option<f64>,
    /// The series' median, the level shares are of.
    pub level: f64,
}

/// The verdict on `x` (samples at even intervals, warm-up already cut).
pub fn judge(x: &[f64], o: &DriftOptions) -> Drift {
    let level = median(x).unwrap_or(0.0);
    if x.len() < 2 * o.min_segment.max(2) {
        return Drift {
            verdict: Verdict::TooShort,
            test: None,
            line: None,
            over_run: None,
            over_horizon: None,
            detectable: None,
            level,
        };
    }
    let n = x.len();
    let test = match o.correction {
        Correction::Ar1 => trend::mann_kendall_ar1(x),
        Correction::SignificantLags => trend::hamed_rao(x, o.alpha),
    };
    let times: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let inflation = test.as_ref().map_or(1.0, |t| t.inflation.max(1.0));
    let line = trend::theil_sen(&times, x, 1.0 - o.alpha, inflation);
    let start = line.as_ref().map_or(level, |l| l.intercept);
    let share = |samples: f64| {
        line.as_ref()
            .map(|l| l.slope * samples / start.abs().max(f64::MIN_POSITIVE))
    };
    let over_run = share((n - 1) as f64);
    let over_horizon = share(o.horizon.max((n - 1) as f64));
    let detectable = line.as_ref().map(|l| {
        let z = normal::ppf(1.0 - o.alpha / 2.0);
        let se = (l.high - l.low) / (2.0 * z);
        (z + normal::ppf(0.95)) * se * (n - 1) as f64 / start.abs().max(f64::MIN_POSITIVE)
    });
    let verdict = call(x, o, test.as_ref(), line.as_ref(), over_horizon);
    Drift {
        verdict,
        test,
        line,
        over_run,
        over_horizon,
        detectable,
        level,
    }
}

fn call(
    x: &[f64],
    o: &DriftOptions,
    test: Option<&MannKendall>,
    line: Option<&TheilSen>,
    over_horizon: Option<f64>,
) -> Verdict {
    let n = x.len();
    let drifting = matches!(
        (test, over_horizon),
        (Some(t), Some(r)) if t.p < o.alpha && r.abs() > o.threshold
    );
    let penalty = o.penalty_factor * (n as f64).ln() * long_run_variance(x);
    let ends = pelt_l2(x, penalty, o.min_segment);
    let mean = |a: usize, b: usize| x[a..b].iter().sum::<f64>() / (b - a) as f64;
    let ss = |a: usize, b: usize, f: &dyn Fn(usize) -> f64| {
        (a..b).map(|i| (x[i] - f(i)).powi(2)).sum::<f64>()
    };
    if ends.len() > 1 {
        let starts: Vec<usize> = std::iter::once(0).chain(ends.iter().copied()).collect();
        let levels: Vec<f64> = starts.windows(2).map(|w| mean(w[0], w[1])).collect();
        let staircase: f64 = starts
            .windows(2)
            .zip(&levels)
            .map(|(w, &m)| ss(w[0], w[1], &|_| m))
            .sum();
        let line_ss = line.map_or(f64::INFINITY, |l| {
            ss(0, n, &|i| l.intercept + l.slope * i as f64)
        });
        // The staircase pays a penalty per step beyond the line's one
        // extra parameter.
        let extra = (ends.len() - 1) as f64 - 1.0;
        if staircase + extra * penalty < line_ss {
            let steps: Vec<Step> = starts[1..]
                .iter()
                .zip(levels.windows(2))
                .map(|(&at, l)| Step {
                    at,
                    from: l[0],
                    to: l[1],
                })
                .filter(|st| st.share().abs() > o.threshold)
                .collect();
            if reversals(&steps) >= MIN_REVERSALS {
                // Levels that keep coming back are no step; a rising
                // floor under them is still a drift.
                return if drifting {
                    Verdict::Drifting
                } else {
                    Verdict::Swinging {
                        changes: steps.len(),
                        low: levels.iter().copied().fold(f64::INFINITY, f64::min),
                        high: levels.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    }
                };
            }
            if !steps.is_empty() {
                return Verdict::Stepped(steps);
            }
        }
    }
    if drifting {
        Verdict::Drifting
    } else {
        Verdict::Flat
    }
}

/// Material steps that turn back before a series is called swinging: two
/// cycles up and down. One bump that passes is two steps, stated as such;
/// a step under persistent noise may wander back once.
const MIN_REVERSALS: usize = 3;

/// How often consecutive material steps change direction.
fn reversals(steps: &[Step]) -> usize {
    steps
        .windows(2)
        .filter(|w| (w[0].to > w[0].from) != (w[1].to > w[1].from))
        .count()
}

/// The noise's long-run variance, `sigma^2 / (1 - phi)^2` for AR(1) noise
/// of innovation `sigma` and coefficient `phi`, from the series'
/// differences: a slope moves only their mean and a step only one of
/// them, which the robust scale and the clipping below set aside.
pub fn long_run_variance(x: &[f64]) -> f64 {
    if x.len() < 4 {
        return 0.0;
    }
    let d: Vec<f64> = x.windows(2).map(|w| w[1] - w[0]).collect();
    let m = median(&d).unwrap_or(0.0);
    let dev: Vec<f64> = d.iter().map(|v| (v - m).abs()).collect();
    // 1.4826 MAD estimates a normal's sigma.
    let sd = 1.4826 * median(&dev).unwrap_or(0.0);
    if sd == 0.0 {
        return 0.0;
    }
    // For AR(1), the differences' lag-1 correlation is -(1 - phi) / 2;
    // clipped at 3 sd, a step's one large difference does not drown it.
    let c: Vec<f64> = d
        .iter()
        .map(|v| (v - m).clamp(-3.0 * sd, 3.0 * sd))
        .collect();
    let rho = trend::autocorrelation(&c).get(1).copied().unwrap_or(0.0);
    let phi = (1.0 + 2.0 * rho).clamp(0.0, 0.95);
    // Var(diff) = 2 Var(e) (1 - phi), and the long-run variance is
    // Var(e) (1 + phi) / (1 - phi).
    let var_e = sd * sd / (2.0 * (1.0 - phi));
    var_e * (1.0 + phi) / (1.0 - phi)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// AR(1) noise of innovation `sd`, from a fixed LCG.
    fn ar1(n: usize, phi: f64, sd: f64, seed: u64) -> Vec<f64> {
        let mut s = seed;
        let mut uniform = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let mut e = 0.0;
        (0..n)
            .map(|_| {
                let z = crate::normal::ppf(uniform());
                e = phi * e + sd * z;
                e
            })
            .collect()
    }

    #[test]
    fn flat_drifting_and_stepped_series_are_told_apart() {
        let o = DriftOptions::default();
        let n = 240;
        let noise = ar1(n, 0.5, 1.0, 7);
        let flat: Vec<f64> = noise.iter().map(|e| 100.0 + e).collect();
        assert_eq!(judge(&flat, &o).verdict, Verdict::Flat);
        let drift: Vec<f64> = (0..n)
            .map(|i| 100.0 + 20.0 * i as f64 / n as f64 + noise[i])
            .collect();
        let d = judge(&drift, &o);
        assert_eq!(d.verdict, Verdict::Drifting, "{d:?}");
        assert!((d.over_run.expect("slope") - 0.2).abs() < 0.05, "{d:?}");
        let step: Vec<f64> = (0..n)
            .map(|i| if i < 150 { 100.0 } else { 125.0 } + noise[i])
            .collect();
        match judge(&step, &o).verdict {
            Verdict::Stepped(s) => {
                assert_eq!(s.len(), 1, "{s:?}");
                assert!((145..=155).contains(&s[0].at), "{s:?}");
                assert!((s[0].share() - 0.25).abs() < 0.03, "{s:?}");
            }
            v => panic!("{v:?}"),
        }
        // A significant but immaterial slope is flat.
        let slight: Vec<f64> = (0..n)
            .map(|i| 100.0 + 3.0 * i as f64 / n as f64 + 0.2 * noise[i])
            .collect();
        assert_eq!(judge(&slight, &o).verdict, Verdict::Flat);
        assert_eq!(judge(&flat[..9], &o).verdict, Verdict::TooShort);
    }

    /// L0 files pile up to each compaction and fall back: PELT cuts the
    /// sawtooth into many levels, but none holds, so it swings; a sawtooth
    /// whose floor rises is a drift. A bump that passes is two steps; one
    /// that stays is one.
    #[test]
    fn steps_that_keep_turning_back_swing() {
        let o = DriftOptions::default();
        let n = 600;
        let noise = ar1(n, 0.3, 0.2, 11);
        let tooth = |i: usize| if i % 60 < 30 { 2.0 } else { 8.0 };
        let saw: Vec<f64> = (0..n).map(|i| tooth(i) + noise[i]).collect();
        let d = judge(&saw, &o);
        assert!(
            matches!(d.verdict, Verdict::Swinging { changes: 19, .. }),
            "{d:?}"
        );
        let rising: Vec<f64> = (0..n)
            .map(|i| tooth(i) + 4.0 * i as f64 / n as f64 + noise[i])
            .collect();
        let d = judge(&rising, &o);
        assert_eq!(d.verdict, Verdict::Drifting, "{d:?}");
        let level = |i: usize, back: bool| {
            if (200..400).contains(&i) || (!back && i >= 400) {
                130.0
            } else {
                100.0
            }
        };
        let bump: Vec<f64> = (0..n).map(|i| level(i, true) + noise[i]).collect();
        let d = judge(&bump, &o);
        assert!(
            matches!(d.verdict, Verdict::Stepped(ref s) if s.len() == 2),
            "{d:?}"
        );
        let stays: Vec<f64> = (0..n).map(|i| level(i, false) + noise[i]).collect();
        assert!(
            matches!(judge(&stays, &o).verdict, Verdict::Stepped(ref s) if s.len() == 1),
            "{:?}",
            judge(&stays, &o)
        );
    }
}

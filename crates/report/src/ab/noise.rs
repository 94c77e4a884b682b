//! How noisy a session is, and whether `ab` should run more rounds
//! (`--noise-target`): measured so that stopping cannot steer the test.

use serde::Serialize;

use super::{Series, Side, hodges_lehmann, pct, value};

/// How much noise a metric may show before `ab` runs more rounds
/// (`--noise-target METRIC=PCT`): where the noise is wider than the change
/// the gate must see, that change passes as "no change".
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct NoiseTarget {
    /// The metric, as `--metric` matches it (`*` wildcard, on the metric's
    /// name or on `run/metric`).
    pub metric: String,
    /// The widest noise allowed, percent either side.
    pub pct: f64,
}

/// What is wrong with a `--noise-target`.
#[derive(Debug, thiserror::Error)]
pub enum NoiseError {
    /// Not `METRIC=PCT` with a percentage above 0.
    #[error("`{given}`: {why}, e.g. summary.batch_secs=2.5")]
    Malformed {
        /// The text given.
        given: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// No judged timing has the metric's name.
    #[error(
        "--noise-target {metric}={pct}: no judged timing matches `{metric}` (judged: {judged})"
    )]
    NoMatch {
        /// The target's metric.
        metric: String,
        /// The target's percentage.
        pct: f64,
        /// The metrics judged, comma-separated.
        judged: String,
    },
}

impl std::str::FromStr for NoiseTarget {
    type Err = NoiseError;

    fn from_str(s: &str) -> Result<Self, NoiseError> {
        let bad = |why| NoiseError::Malformed {
            given: s.to_string(),
            why,
        };
        let (metric, pct) = s.rsplit_once('=').ok_or_else(|| bad("give METRIC=PCT"))?;
        let pct: f64 = pct
            .trim_end_matches('%')
            .parse()
            .map_err(|_| bad("the part after `=` is not a percentage"))?;
        if metric.is_empty() || !(pct > 0.0 && pct.is_finite()) {
            return Err(bad("give a metric and a percentage above 0"));
        }
        Ok(NoiseTarget {
            metric: metric.to_string(),
            pct,
        })
    }
}

impl NoiseTarget {
    /// True when the `run/metric` key is one this target names.
    pub fn names(&self, key: &str) -> bool {
        let name = key.split_once('/').map_or(key, |(_, n)| n);
        crate::compare::glob(&self.metric, name) || crate::compare::glob(&self.metric, key)
    }
}

/// A session's noise on one metric: the half-width, in percent, of the
/// interval an A/B comparison of this many rounds would give, estimated
/// from how much each round's mean (of its two runs, in logs) moves from
/// the round before, times sqrt 2 (a pair's difference has twice a mean's
/// step variance). A round's mean does not change when its A and B swap,
/// nor when every B moves by the same factor, so deciding on more rounds
/// from it cannot steer the verdict: with no change, which run of a round
/// is B stays a fair coin whatever the noise, and a real change costs no
/// extra rounds. (The same-code band cannot serve: its pairs reuse the A/B
/// runs, and it comes out narrow exactly when every B sits above its A;
/// the pairs' sizes neither: a real change inflates them.) `None` with
/// fewer than three complete rounds.
pub fn noise_pct(runs: &[(usize, Side, Option<f64>)]) -> Option<f64> {
    let rounds = runs.iter().map(|r| r.0 + 1).max().unwrap_or(0);
    let means: Vec<f64> = (0..rounds)
        .filter_map(|r| Some((value(runs, r, Side::A)?.ln() + value(runs, r, Side::B)?.ln()) / 2.0))
        .collect();
    if means.len() < 3 {
        return None;
    }
    let steps: Vec<f64> = means
        .windows(2)
        .map(|w| (w[1] - w[0]) * std::f64::consts::SQRT_2)
        .collect();
    let (_, lo, hi) = hodges_lehmann(&steps, NOISE_ALPHA)?;
    Some(pct((hi - lo) / 2.0))
}

/// The level the noise is measured at, whatever `--alpha`: the target is a
/// property of the machine, not of the test.
const NOISE_ALPHA: f64 = 0.01;

/// Each metric whose noise is over its target, as "metric ±noise%
/// (target ±pct%)"; `runs` as `judge` takes them, keyed by metric. An
/// error names a target no metric matches.
pub fn over_target(
    metrics: &[(String, Series)],
    targets: &[NoiseTarget],
) -> Result<Vec<String>, NoiseError> {
    let mut over = Vec::new();
    for t in targets {
        let named: Vec<_> = metrics.iter().filter(|(k, _)| t.names(k)).collect();
        if named.is_empty() {
            let judged: Vec<&str> = metrics.iter().map(|(k, _)| k.as_str()).collect();
            return Err(NoiseError::NoMatch {
                metric: t.metric.clone(),
                pct: t.pct,
                judged: judged.join(", "),
            });
        }
        for (key, runs) in named {
            match noise_pct(runs) {
                Some(n) if n > t.pct => over.push(format!("{key} ±{n:.2}% (target ±{}%)", t.pct)),
                _ => {}
            }
        }
    }
    Ok(over)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ab::order;

    /// Runs in ABBA order, both sides the same code, `noise` multiplied in
    /// by a fixed pattern.
    fn runs(rounds: usize, noise: &[f64]) -> Series {
        order(rounds)
            .into_iter()
            .enumerate()
            .map(|(i, (r, s))| (r, s, Some(10.0 * noise[i % noise.len()])))
            .collect()
    }

    #[test]
    fn a_noise_target_names_the_metrics_over_it() {
        let t: NoiseTarget = "summary.batch_secs=2.5".parse().expect("target");
        assert_eq!(t.pct, 2.5);
        for bad in ["summary.batch_secs", "x=0", "x=-1", "=2", "x=two"] {
            assert!(bad.parse::<NoiseTarget>().is_err(), "{bad}");
        }
        let key = "r/summary.batch_secs".to_string();
        let wide = vec![(key.clone(), runs(10, &[1.0, 1.2, 0.8, 1.2, 0.8]))];
        let over = over_target(&wide, std::slice::from_ref(&t)).expect("matched");
        assert_eq!(over.len(), 1, "{over:?}");
        assert!(over[0].starts_with("r/summary.batch_secs ±"), "{over:?}");
        let calm = vec![(key, runs(10, &[1.0, 1.002, 0.998, 1.001]))];
        assert!(
            over_target(&calm, std::slice::from_ref(&t))
                .expect("matched")
                .is_empty()
        );
        let none: NoiseTarget = "streaming.*=5".parse().expect("target");
        assert!(over_target(&calm, &[none]).is_err());
    }

    #[test]
    fn the_noise_ignores_which_run_was_b_and_a_change_of_b() {
        let noise = [1.0, 1.03, 0.98, 1.01, 0.97, 1.02, 0.99, 1.04];
        let base = runs(12, &noise);
        let n = noise_pct(&base).expect("noise");
        assert!(n > 0.5 && n < 10.0, "{n}");
        // Swap A and B in every other round: which run was B does not
        // count, so stopping on the noise cannot lean towards a verdict.
        let swapped: Series = base
            .iter()
            .map(|&(r, s, v)| {
                let flip = r % 2 == 1;
                let s = match (s, flip) {
                    (Side::A, true) => Side::B,
                    (Side::B, true) => Side::A,
                    (s, false) => s,
                };
                (r, s, v)
            })
            .collect();
        assert!((noise_pct(&swapped).expect("noise") - n).abs() < 1e-9);
        // Every B 5% slower: the same noise, so a real change costs no
        // extra rounds.
        let slower: Series = base
            .iter()
            .map(|&(r, s, v)| (r, s, v.map(|x| if s == Side::B { x * 1.05 } else { x })))
            .collect();
        assert!((noise_pct(&slower).expect("noise") - n).abs() < 1e-9);
        // Twice the spread (in logs), about twice the noise.
        let wider: Vec<f64> = noise.iter().map(|x| x * x).collect();
        let n2 = noise_pct(&runs(12, &wider)).expect("noise");
        assert!((n2 / n - 2.0).abs() < 0.2, "{n} {n2}");
        assert!(noise_pct(&runs(2, &noise)).is_none());
    }
}

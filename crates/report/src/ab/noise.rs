//! How noisy a session is, and whether `ab` should run more rounds
//! (`--noise-target`): measured so that stopping cannot steer the test.

use ledgerbench_core::quantile;
use serde::Serialize;

use super::{Series, hodges_lehmann, log_ratios, pct};

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

impl std::str::FromStr for NoiseTarget {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (metric, pct) = s
            .rsplit_once('=')
            .ok_or_else(|| format!("`{s}`: give METRIC=PCT, e.g. summary.batch_secs=2.5"))?;
        let pct: f64 = pct
            .trim_end_matches('%')
            .parse()
            .map_err(|_| format!("`{s}`: `{pct}` is not a percentage, e.g. 2.5"))?;
        if metric.is_empty() || !(pct > 0.0 && pct.is_finite()) {
            return Err(format!(
                "`{s}`: give a metric and a percentage above 0, e.g. summary.batch_secs=2.5"
            ));
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

/// A session's noise on one metric, from the sizes of its pairs' log ratios
/// and never their signs: the half-width, in percent, of the interval the
/// pairs would give if nothing had changed (their sizes, signs alternating
/// by size). Deciding on more rounds from this keeps the test exact: with
/// no change, a pair's sign is a fair coin whatever its size, so stopping
/// on sizes alone cannot favour one verdict. (The same-code band cannot
/// serve: its pairs reuse the A/B runs, and it comes out narrow exactly
/// when every B sits above its A.) A real change inflates the sizes, which
/// costs rounds, not validity. `None` with fewer than two pairs.
pub fn noise_pct(d: &[f64]) -> Option<f64> {
    let mut sizes: Vec<f64> = d.iter().map(|x| x.abs()).collect();
    if sizes.len() < 2 {
        return None;
    }
    quantile::sort(&mut sizes);
    let signed: Vec<f64> = sizes
        .iter()
        .enumerate()
        .map(|(i, x)| if i % 2 == 0 { *x } else { -x })
        .collect();
    let (_, lo, hi) = hodges_lehmann(&signed, NOISE_ALPHA)?;
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
) -> Result<Vec<String>, String> {
    let mut over = Vec::new();
    for t in targets {
        let named: Vec<_> = metrics.iter().filter(|(k, _)| t.names(k)).collect();
        if named.is_empty() {
            return Err(format!(
                "--noise-target {}={}: no judged metric matches `{}`",
                t.metric, t.pct, t.metric
            ));
        }
        for (key, runs) in named {
            match noise_pct(&log_ratios(runs)) {
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
    fn the_noise_ignores_the_pairs_signs() {
        // The same sizes, any signs: the same noise, so stopping on it
        // cannot lean towards one verdict. (The same-code band, by
        // contrast, comes out narrow when every B sits above its A.)
        let sizes = [0.01, 0.03, 0.02, 0.05, 0.04, 0.015];
        let all_up: Vec<f64> = sizes.to_vec();
        let mixed: Vec<f64> = sizes
            .iter()
            .enumerate()
            .map(|(i, x)| if i % 3 == 0 { -x } else { *x })
            .collect();
        let n = noise_pct(&all_up).expect("noise");
        assert_eq!(Some(n), noise_pct(&mixed));
        assert!(n > 1.0 && n < 5.0, "{n}");
        // Twice the spread, about twice the noise.
        let double: Vec<f64> = sizes.iter().map(|x| x * 2.0).collect();
        let n2 = noise_pct(&double).expect("noise");
        assert!((n2 / n - 2.0).abs() < 0.1, "{n} {n2}");
        assert!(noise_pct(&[0.1]).is_none());
    }
}

//! The signed-rank test and the Hodges-Lehmann estimate, exact for the
//! few pairs an A/B comparison or a debt series has: why a rank test and
//! not a t-test or a bootstrap is in `ledgerbench_report::ab`.

use crate::quantile;

/// The exact null distribution of the signed-rank statistic for `n`
/// pairs: `cdf[t]` = P(T+ <= t), T+ the sum of the positive pairs' ranks.
pub fn signed_rank_cdf(n: usize) -> Vec<f64> {
    let max = n * (n + 1) / 2;
    let mut counts = vec![0f64; max + 1];
    counts[0] = 1.0;
    for k in 1..=n {
        for s in (k..=max).rev() {
            counts[s] += counts[s - k];
        }
    }
    let total = 2f64.powi(n as i32);
    let mut acc = 0.0;
    counts
        .iter()
        .map(|c| {
            acc += c / total;
            acc.min(1.0)
        })
        .collect()
}

/// Two-sided exact p-value of the signed-rank test that the pairs' log
/// ratios `d` centre on 0. Zero differences are dropped (Wilcoxon's
/// convention); tied magnitudes take ranks in order (timings rarely tie).
pub fn signed_rank_p(d: &[f64]) -> f64 {
    let mut nz: Vec<f64> = d.iter().copied().filter(|x| *x != 0.0).collect();
    let n = nz.len();
    if n == 0 {
        return 1.0;
    }
    nz.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
    let t: usize = nz
        .iter()
        .enumerate()
        .filter(|(_, x)| **x > 0.0)
        .map(|(i, _)| i + 1)
        .sum();
    let cdf = signed_rank_cdf(n);
    let max = n * (n + 1) / 2;
    let low = cdf[t];
    // P(T+ >= t) = P(T+ <= max - t) by symmetry.
    let high = cdf[max - t];
    (2.0 * low.min(high)).min(1.0)
}

/// The smallest two-sided p-value `n` pairs can give (all one sign).
pub fn smallest_p(n: usize) -> f64 {
    (2.0 / 2f64.powi(n as i32)).min(1.0)
}

/// The Hodges-Lehmann estimate of `d`'s centre and its exact
/// `1 - alpha` interval: order statistics of the Walsh averages.
pub fn hodges_lehmann(d: &[f64], alpha: f64) -> Option<(f64, f64, f64)> {
    let n = d.len();
    if n == 0 {
        return None;
    }
    let mut walsh = Vec::with_capacity(n * (n + 1) / 2);
    for i in 0..n {
        for j in i..n {
            walsh.push((d[i] + d[j]) / 2.0);
        }
    }
    quantile::sort(&mut walsh);
    let m = walsh.len();
    let est = quantile::quantile_sorted(&walsh, 0.5)?;
    // k: one more than the largest t with P(T+ <= t) <= alpha / 2; the
    // interval is the k-th smallest to the k-th largest Walsh average.
    let cdf = signed_rank_cdf(n);
    let k = cdf.iter().take_while(|p| **p <= alpha / 2.0).count().max(1);
    let k = k.min(m.div_ceil(2));
    Some((est, walsh[k - 1], walsh[m - k]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exact_distribution_matches_known_critical_values() {
        // n = 10: P(T+ <= 8) = 0.0244 and P(T+ <= 10) = 0.0420 (tables).
        let cdf = signed_rank_cdf(10);
        assert!((cdf[8] - 0.0244).abs() < 5e-4, "{}", cdf[8]);
        assert!((cdf[10] - 0.0420).abs() < 5e-4, "{}", cdf[10]);
        assert!((cdf[55] - 1.0).abs() < 1e-12);
        assert_eq!(smallest_p(10), 2.0 / 1024.0);
        // All ten pairs one way: the smallest p there is.
        let d: Vec<f64> = (1..=10).map(|i| f64::from(i) * 0.01).collect();
        assert!((signed_rank_p(&d) - 2.0 / 1024.0).abs() < 1e-12);
        let mixed = [0.01, -0.02, 0.03, -0.04, 0.05, -0.06];
        assert!(signed_rank_p(&mixed) > 0.5);
    }

    #[test]
    fn hodges_lehmann_finds_the_shift_and_an_interval_around_it() {
        let d = [
            0.04, 0.05, 0.06, 0.05, 0.045, 0.055, 0.05, 0.048, 0.052, 0.5,
        ];
        let (est, lo, hi) = hodges_lehmann(&d, 0.05).expect("estimate");
        // The outlier 0.5 moves a mean to 0.095, not the estimate.
        assert!((est - 0.05).abs() < 0.005, "{est}");
        // The interval holds it; the outlier widens only its upper side.
        assert!(lo < est && est < hi && lo > 0.04, "{lo} {hi}");
    }
}

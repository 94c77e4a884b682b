//! Fitting a workload's distributions from what a trace shows: value sizes
//! (a Generalized Pareto, [`gpd`]), how accesses spread over keys (a power
//! law of the hottest keys' share, [`power_cdf`]) and over key ranges
//! (mixgraph's two exponentials, [`two_exp`]), each with how far the data
//! lie from the fit.
//!
//! The models are db_bench `mixgraph`'s, so a fit can be checked against
//! the parameters db_bench was given and played back by ledgerbench's own
//! generator. The least squares, the Kolmogorov-Smirnov distance and the
//! fits are held to scipy's answers for fixed data
//! (`scripts/golden-stats.py`).

pub mod gpd;
pub mod two_exp;

/// A straight line fitted by ordinary least squares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// Rise per unit of x.
    pub slope: f64,
    /// The line's value at x = 0.
    pub intercept: f64,
    /// Pearson's correlation of x and y.
    pub r: f64,
    /// The slope's standard error.
    pub slope_stderr: f64,
}

/// The least-squares line through `(x, y)`, as `scipy.stats.linregress`;
/// `None` with fewer than 3 points, x all equal, or a value not finite.
pub fn line(x: &[f64], y: &[f64]) -> Option<Line> {
    let n = x.len();
    if n < 3 || y.len() != n || x.iter().chain(y).any(|v| !v.is_finite()) {
        return None;
    }
    let nf = n as f64;
    let (mx, my) = (x.iter().sum::<f64>() / nf, y.iter().sum::<f64>() / nf);
    let (mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
        sxy += (a - mx) * (b - my);
    }
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    // A y without spread lies on its line exactly.
    let r = if syy > 0.0 {
        (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0)
    } else {
        1.0
    };
    let slope_stderr = ((1.0 - r * r) * syy / sxx / (nf - 2.0)).max(0.0).sqrt();
    Some(Line {
        slope,
        intercept: my - slope * mx,
        r,
        slope_stderr,
    })
}

/// The Kolmogorov-Smirnov distance of a sample from a distribution: the
/// largest gap between the sample's step CDF and `cdf`, as
/// `scipy.stats.kstest(...).statistic`. `None` for an empty sample or a
/// NaN.
pub fn ks_distance(sample: &[f64], cdf: impl Fn(f64) -> f64) -> Option<f64> {
    let mut s = sample.to_vec();
    if s.is_empty() || s.iter().any(|v| v.is_nan()) {
        return None;
    }
    s.sort_by(f64::total_cmp);
    let n = s.len() as f64;
    let mut d: f64 = 0.0;
    for (i, &x) in s.iter().enumerate() {
        let f = cdf(x);
        d = d.max((i + 1) as f64 / n - f).max(f - i as f64 / n);
    }
    Some(d)
}

/// How accesses spread over keys, db_bench's `key_dist_a` / `key_dist_b`:
/// the `n` hottest keys take `a * n^b` of all accesses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerCdf {
    /// The hottest key's share (the scale).
    pub a: f64,
    /// How fast the share grows with the keys taken (1: uniform).
    pub b: f64,
    /// Largest gap between the fitted and the observed share of the
    /// hottest keys, at the ranks fitted.
    pub max_gap: f64,
}

/// Accesses a key needs for its rank to count in [`power_cdf`]: among
/// keys seen fewer times, which is hotter is the trace's luck, and a short
/// trace's long tail of keys seen once would bend the law towards uniform.
pub const MIN_COUNT: u64 = 10;

/// The power law of the hottest keys' share, fitted to `counts` (accesses
/// per key, any order): least squares of `ln share(n) = ln a + b ln n` at
/// ranks spread evenly in log (so the few hot keys weigh as much as the
/// many cold), over the keys seen at least [`MIN_COUNT`] times; the shares
/// are of all accesses. `None` with fewer than 3 such keys.
pub fn power_cdf(counts: &[u64]) -> Option<PowerCdf> {
    let mut c: Vec<u64> = counts.iter().copied().filter(|&v| v > 0).collect();
    c.sort_unstable_by(|a, b| b.cmp(a));
    let total: u64 = c.iter().sum();
    if total == 0 {
        return None;
    }
    let mut cum = Vec::with_capacity(c.len());
    let mut acc = 0u64;
    for v in &c {
        acc += v;
        cum.push(acc as f64 / total as f64);
    }
    let ranks = log_ranks(c.iter().take_while(|&&v| v >= MIN_COUNT).count());
    let x: Vec<f64> = ranks.iter().map(|&n| (n as f64).ln()).collect();
    let y: Vec<f64> = ranks.iter().map(|&n| cum[n - 1].ln()).collect();
    let l = line(&x, &y)?;
    let (a, b) = (l.intercept.exp(), l.slope);
    let max_gap = ranks
        .iter()
        .map(|&n| (a * (n as f64).powf(b) - cum[n - 1]).abs())
        .fold(0.0, f64::max);
    Some(PowerCdf { a, b, max_gap })
}

/// Ranks 1..=len at 20 a decade, each once: the points [`power_cdf`]
/// fits.
pub fn log_ranks(len: usize) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    let mut k = 0u32;
    loop {
        let n = 10f64.powf(f64::from(k) / 20.0).round() as usize;
        if n > len {
            break;
        }
        if out.last() != Some(&n) {
            out.push(n);
        }
        k += 1;
    }
    if len > 0 && out.last() != Some(&len) {
        out.push(len);
    }
    out
}

/// The share of all accesses the hottest `fraction` of keys take (the
/// 0.1%, 1% and 10% a workload file states), from accesses per key; at
/// least one key is taken. `None` with no access.
pub fn hottest_share(counts: &[u64], fraction: f64) -> Option<f64> {
    let mut c: Vec<u64> = counts.iter().copied().filter(|&v| v > 0).collect();
    let total: u64 = c.iter().sum();
    if total == 0 {
        return None;
    }
    c.sort_unstable_by(|a, b| b.cmp(a));
    let k = ((c.len() as f64 * fraction).ceil() as usize).clamp(1, c.len());
    Some(c[..k].iter().sum::<u64>() as f64 / total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_found_exactly() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let y: Vec<f64> = x.iter().map(|v| 3.0 - 2.0 * v).collect();
        let l = line(&x, &y).expect("line");
        assert!((l.slope + 2.0).abs() < 1e-12 && (l.intercept - 3.0).abs() < 1e-12);
        assert!((l.r + 1.0).abs() < 1e-12 && l.slope_stderr < 1e-9);
        assert_eq!(line(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
    }

    #[test]
    fn the_power_law_of_exact_shares_comes_back() {
        // Counts whose cumulative shares are a * n^b exactly.
        let (a, b, n) = (0.05f64, 0.4f64, 5000usize);
        let share = |k: usize| (a * (k as f64).powf(b)).min(1.0);
        let counts: Vec<u64> = (1..=n)
            .map(|k| ((share(k) - share(k - 1)) * 1e12).round() as u64)
            .collect();
        let p = power_cdf(&counts).expect("fit");
        assert!((p.b - b).abs() < 1e-3, "{p:?}");
        assert!((p.a - a).abs() < 1e-3, "{p:?}");
    }

    #[test]
    fn shares_of_the_hottest_keys() {
        let counts = [70, 10, 10, 10];
        assert_eq!(hottest_share(&counts, 0.25), Some(0.7));
        assert_eq!(hottest_share(&counts, 0.001), Some(0.7));
        assert_eq!(hottest_share(&[0, 0], 0.1), None);
        assert_eq!(log_ranks(12), vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    }

    #[test]
    fn the_ks_distance_of_a_uniform_grid() {
        let s: Vec<f64> = (0..10).map(|i| (i as f64 + 0.5) / 10.0).collect();
        let d = ks_distance(&s, |x| x.clamp(0.0, 1.0)).expect("d");
        assert!((d - 0.05).abs() < 1e-12, "{d}");
    }
}

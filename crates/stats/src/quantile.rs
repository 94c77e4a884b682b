//! Medians and percentiles: one definition for every figure ledgerbench reports
//! from a list of values (HDR histograms keep their own, for latencies).
//!
//! The `q` quantile interpolates linearly between the two closest ranks
//! (Hyndman and Fan's type 7, what numpy and R use by default), so the
//! median of an even count is the mean of the middle two.

/// The `q` quantile (0 to 1) of values already sorted ascending; `None` when empty.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let pos = q.clamp(0.0, 1.0) * last as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64))
}

/// Sorts `v` ascending (NaN last), for several quantiles of one list.
pub fn sort(v: &mut [f64]) {
    v.sort_by(f64::total_cmp);
}

/// The median of `v` (in any order); `None` when empty.
pub fn median(v: &[f64]) -> Option<f64> {
    let mut s = v.to_vec();
    sort(&mut s);
    quantile_sorted(&s, 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_percentiles_interpolate_between_ranks() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        let v: Vec<f64> = (1..=101).map(f64::from).collect();
        assert_eq!(quantile_sorted(&v, 0.99), Some(100.0));
        assert_eq!(quantile_sorted(&v, 0.0), Some(1.0));
        assert_eq!(quantile_sorted(&v, 1.0), Some(101.0));
        assert_eq!(quantile_sorted(&[10.0, 20.0], 0.25), Some(12.5));
    }
}

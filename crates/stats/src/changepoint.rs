//! Where a series steps: PELT (Killick, Fearnhead and Eckley 2012) with the
//! squared-error cost of a segment about its mean, the exact optimum of
//! segments' cost plus a penalty per segment, in about linear time.
//!
//! Why PELT and not binary segmentation: binary segmentation is greedy and
//! can miss two steps close together that cancel at the first split; PELT
//! finds the same optimum as dynamic programming over every segmentation.
//! Why not a crate: none maintained on crates.io implements PELT with a
//! stated cost (`changepoint` is a Bayesian online detector, another
//! question); this follows `ruptures.Pelt(model="l2", jump=1)` so its
//! answers are the golden vectors.

/// The ends of the segments of `signal` (each exclusive, the last being
/// `signal.len()`), minimising the segments' squared error about their
/// means plus `penalty` per segment, every segment at least `min_size`
/// long (at least 1). Empty for an empty signal; one segment when the
/// signal is shorter than `min_size` (where ruptures refuses).
pub fn pelt_l2(signal: &[f64], penalty: f64, min_size: usize) -> Vec<usize> {
    let n = signal.len();
    if n == 0 {
        return Vec::new();
    }
    let min_size = min_size.max(1);
    if n < min_size {
        return vec![n];
    }
    // Prefix sums make a segment's cost O(1); about the signal's mean, so
    // a level far from zero does not cancel the digits a cost needs.
    let centre = signal.iter().sum::<f64>() / n as f64;
    let mut sum = vec![0.0; n + 1];
    let mut sq = vec![0.0; n + 1];
    for (i, v) in signal.iter().enumerate() {
        let v = v - centre;
        sum[i + 1] = sum[i] + v;
        sq[i + 1] = sq[i] + v * v;
    }
    let cost = |a: usize, b: usize| {
        let len = (b - a) as f64;
        let s = sum[b] - sum[a];
        (sq[b] - sq[a] - s * s / len).max(0.0)
    };
    // best[t]: the least cost of signal[..t] (penalties included); last[t]:
    // where its final segment starts. Only ends ruptures considers exist:
    // 0, then min_size..n.
    let mut best = vec![f64::INFINITY; n + 1];
    let mut last = vec![0usize; n + 1];
    best[0] = 0.0;
    let mut admissible: Vec<usize> = Vec::new();
    let ends = (min_size..n).chain(std::iter::once(n));
    for end in ends {
        admissible.push(end - min_size);
        let mut totals: Vec<(usize, f64)> = Vec::with_capacity(admissible.len());
        for &t in &admissible {
            if best[t].is_finite() {
                // Summed as ruptures sums: the segment's cost and penalty first.
                totals.push((t, best[t] + (cost(t, end) + penalty)));
            }
        }
        // The first of equal totals, as Python's min keeps.
        let Some(&(t, total)) =
            totals
                .iter()
                .fold(None, |acc: Option<&(usize, f64)>, x| match acc {
                    Some(a) if a.1 <= x.1 => Some(a),
                    _ => Some(x),
                })
        else {
            continue;
        };
        best[end] = total;
        last[end] = t;
        // Prune starts that can never win again (the candidate set of
        // ruptures: total within a penalty of the best).
        admissible = totals
            .into_iter()
            .filter(|&(_, v)| v <= total + penalty)
            .map(|(s, _)| s)
            .collect();
    }
    let mut out = Vec::new();
    let mut end = n;
    while end > 0 {
        out.push(end);
        end = last[end];
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_found_where_it_is_and_noise_alone_is_one_segment() {
        let mut s: Vec<f64> = (0..50).map(|i| (f64::from(i) * 1.3).sin() * 0.1).collect();
        s.extend((0..50).map(|i| 5.0 + (f64::from(i) * 0.7).cos() * 0.1));
        assert_eq!(pelt_l2(&s, 1.0, 2), [50, 100]);
        let flat: Vec<f64> = (0..100).map(|i| (f64::from(i) * 1.3).sin() * 0.1).collect();
        assert_eq!(pelt_l2(&flat, 1.0, 2), [100]);
        // Two steps, up then down.
        let mut two = vec![0.0; 30];
        two.extend(vec![3.0; 20]);
        two.extend(vec![0.5; 30]);
        assert_eq!(pelt_l2(&two, 0.5, 2), [30, 50, 80]);
        assert!(pelt_l2(&[], 1.0, 2).is_empty());
        assert_eq!(pelt_l2(&[1.0], 1.0, 2), [1]);
    }

    #[test]
    fn the_pruned_search_finds_the_optimum_of_every_segmentation() {
        // Against a plain O(n^2) dynamic programme on a noisy staircase.
        let mut rng = 12345u64;
        let mut next = || {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (rng >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let s: Vec<f64> = (0..120).map(|i| f64::from(i / 40) * 1.5 + next()).collect();
        let (pen, min) = (2.0, 3);
        let n = s.len();
        let cost = |a: usize, b: usize| {
            let m = s[a..b].iter().sum::<f64>() / (b - a) as f64;
            s[a..b].iter().map(|v| (v - m) * (v - m)).sum::<f64>()
        };
        let mut f = vec![f64::INFINITY; n + 1];
        f[0] = 0.0;
        for b in min..=n {
            for a in 0..=b - min {
                if a == 0 || a >= min {
                    f[b] = f[b].min(f[a] + cost(a, b) + pen);
                }
            }
        }
        let ends = pelt_l2(&s, pen, min);
        let mut total = 0.0;
        let mut start = 0;
        for &e in &ends {
            total += cost(start, e) + pen;
            start = e;
        }
        assert!(
            (total - f[n]).abs() < 1e-9,
            "{ends:?}: {total} against {}",
            f[n]
        );
        assert_eq!(ends, [40, 80, 120]);
    }
}

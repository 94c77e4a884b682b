//! Drawing what a workload model states: sizes and counts from a fixed
//! value, a Generalized Pareto or empirical quantiles; keys by the model's
//! access skew.

use ledgerbench_model::model::{Access, Quantiles, Sizes};
use ledgerbench_rng::{Rng, mix};
use ledgerbench_stats::fit::gpd::Gpd;

/// A distribution to draw sizes or counts from.
#[derive(Debug, Clone)]
pub(crate) enum Dist {
    /// Always this.
    Fixed(f64),
    /// A Generalized Pareto, held within the sizes the trace had.
    /// `floor` of the draws are the smallest (`lo`).
    Pareto {
        g: Gpd,
        floor: f64,
        lo: f64,
        hi: f64,
    },
    /// Straight lines between the quantiles (min, p10, p50, p90, p99, max).
    Quantiles([(f64, f64); 6]),
}

impl Dist {
    /// What `s` states, fixed first, then the Pareto, then the quantiles;
    /// `None` when it states nothing.
    pub(crate) fn of(s: &Sizes) -> Option<Dist> {
        if let Some(f) = s.fixed {
            return Some(Dist::Fixed(f64::from(f)));
        }
        match (&s.pareto, &s.quantiles) {
            (Some(p), q) => Some(Dist::Pareto {
                g: Gpd {
                    shape: p.shape,
                    scale: p.scale,
                    loc: p.loc,
                },
                floor: p.floor,
                lo: q.as_ref().map_or(p.loc, |q| q.min),
                hi: q.as_ref().map_or(f64::INFINITY, |q| q.max),
            }),
            (None, Some(q)) => Some(Dist::quantiles(q)),
            (None, None) => None,
        }
    }

    /// Straight lines between `q`'s quantiles.
    pub(crate) fn quantiles(q: &Quantiles) -> Dist {
        Dist::Quantiles([
            (0.0, q.min),
            (0.1, q.p10),
            (0.5, q.p50),
            (0.9, q.p90),
            (0.99, q.p99),
            (1.0, q.max),
        ])
    }

    /// The value at uniform `u` in [0, 1).
    pub(crate) fn at(&self, u: f64) -> f64 {
        match self {
            Dist::Fixed(v) => *v,
            Dist::Pareto { floor, lo, .. } if u < *floor => *lo,
            Dist::Pareto { g, floor, lo, hi } => {
                g.quantile((u - floor) / (1.0 - floor)).clamp(*lo, *hi)
            }
            Dist::Quantiles(p) => {
                let i = p.iter().rposition(|(q, _)| *q <= u).unwrap_or(0).min(4);
                let ((q0, v0), (q1, v1)) = (p[i], p[i + 1]);
                let t = if q1 > q0 { (u - q0) / (q1 - q0) } else { 0.0 };
                v0 + t * (v1 - v0)
            }
        }
    }

    /// A draw, rounded to a whole number of at least `min`.
    pub(crate) fn draw(&self, rng: &mut Rng, min: u64) -> u64 {
        (self.at(rng.f64()).round().max(0.0) as u64).max(min)
    }
}

/// Picks keys by the model's access skew: a range by `key_ranges`, then a
/// key in it by `power`, else any alike (mixgraph's order of choices).
#[derive(Debug, Clone)]
pub(crate) struct Picker {
    /// Cumulative weights of the ranges by rank, and where each rank sits
    /// among the ranges in key order.
    ranges: Option<(Vec<f64>, Vec<u64>)>,
    /// The power law, `(a, b)`.
    power: Option<(f64, f64)>,
    /// Keys now per key of the model (the law keeps the hottest share of
    /// keys, not the hottest count).
    key_scale: f64,
    salt: u64,
}

impl Picker {
    /// A picker for `a` at `key_scale` times the model's keys.
    pub(crate) fn new(a: &Access, key_scale: f64, salt: u64) -> Self {
        let ranges = a.key_ranges.as_ref().filter(|k| k.ranges > 1).map(|k| {
            let mut cum = Vec::with_capacity(k.ranges as usize);
            let mut total = 0.0;
            for x in 1..=k.ranges {
                let x = f64::from(x);
                total += (k.a * (k.b * x).exp() + k.c * (k.d * x).exp()).max(0.0);
                cum.push(total);
            }
            // Which range in key order holds each rank: shuffled by the
            // seed, as db_bench shuffles them.
            let mut order: Vec<u64> = (0..u64::from(k.ranges)).collect();
            let mut rng = Rng::new(salt);
            for i in (1..order.len()).rev() {
                order.swap(i, rng.below(i as u64 + 1) as usize);
            }
            (cum, order)
        });
        Self {
            ranges,
            power: a.power.as_ref().map(|p| (p.a, p.b)),
            key_scale,
            salt,
        }
    }

    /// A key index in `lo..hi` (`hi > lo`). A skewed model places its hot
    /// keys at fixed indices below the largest power of two up to `hi`, so
    /// a key stays hot while inserts grow the space (until it doubles); a
    /// hot key already deleted is drawn again, eight times at most, then
    /// any live key is taken.
    pub(crate) fn pick(&self, rng: &mut Rng, lo: u64, hi: u64) -> u64 {
        if self.ranges.is_some() || self.power.is_some() {
            let span = if hi.is_power_of_two() {
                hi
            } else {
                hi.next_power_of_two() / 2
            };
            for _ in 0..8 {
                let i = self.draw(rng, span);
                if (lo..hi).contains(&i) {
                    return i;
                }
            }
        }
        lo + rng.below(hi - lo)
    }

    /// An index in `0..span` by the ranges' hotness and the power law.
    fn draw(&self, rng: &mut Rng, span: u64) -> u64 {
        let (start, len) = match &self.ranges {
            Some((cum, order)) if span >= order.len() as u64 => {
                let total = cum.last().copied().unwrap_or(0.0);
                let u = rng.f64() * total;
                let rank = cum.partition_point(|&c| c <= u).min(order.len() - 1);
                let n = order.len() as u64;
                let per = span / n;
                let at = order[rank];
                let extra = if at == n - 1 { span - per * n } else { 0 };
                (at * per, per + extra)
            }
            _ => (0, span),
        };
        match self.power {
            Some((a, b)) if a > 0.0 && b > 0.0 => {
                let x = ((rng.f64() / a).powf(1.0 / b) * self.key_scale) as u64;
                // The x-th hottest key, placed anywhere in the range.
                start + mix(x ^ self.salt) % len
            }
            _ => start + rng.below(len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ledgerbench_model::model::Power;

    #[test]
    fn quantiles_are_drawn_between_their_points() {
        let q = Quantiles {
            min: 10.0,
            p10: 20.0,
            p50: 100.0,
            p90: 200.0,
            p99: 1000.0,
            max: 2000.0,
            ..Quantiles::default()
        };
        let d = Dist::quantiles(&q);
        assert_eq!(d.at(0.0), 10.0);
        assert_eq!(d.at(0.5), 100.0);
        assert!((d.at(0.7) - 150.0).abs() < 1e-9);
        assert!((d.at(0.999_999) - 2000.0).abs() < 1.0);
    }

    #[test]
    fn a_power_law_gives_its_hottest_keys_their_share() {
        let a = Access {
            power: Some(Power {
                a: 0.05,
                b: 0.5,
                max_gap: 0.0,
            }),
            ..Access::default()
        };
        let p = Picker::new(&a, 1.0, 9);
        let mut rng = Rng::new(1);
        let mut counts = std::collections::HashMap::new();
        for _ in 0..100_000 {
            *counts.entry(p.pick(&mut rng, 0, 1_000_000)).or_insert(0u64) += 1;
        }
        let mut c: Vec<u64> = counts.into_values().collect();
        c.sort_unstable_by(|x, y| y.cmp(x));
        // The 100 hottest take a * 100^b = 50%.
        let top: u64 = c.iter().take(100).sum();
        assert!((top as f64 / 100_000.0 - 0.5).abs() < 0.02, "{top}");
    }
}

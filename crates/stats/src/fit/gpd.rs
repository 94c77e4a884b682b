//! The Generalized Pareto distribution: db_bench `mixgraph`'s value sizes
//! (`value_theta`, `value_k`, `value_sigma`), fitted by maximum likelihood
//! with its location given.
//!
//! Why this way: with the location known, the likelihood depends on the
//! shape and scale only through `theta = shape / scale`, and for a given
//! theta the best shape is the mean of `ln(1 + theta y)` (Grimshaw 1993).
//! The fit is then a search along one line, done on a grid wide enough for
//! any tail and refined by golden section, so it finds the best of the
//! whole line rather than the nearest local optimum of a two-dimensional
//! search from a guess (scipy's generic fit). The shape is kept at -1 or
//! above, where the likelihood has a maximum.

/// A Generalized Pareto distribution, in scipy's and db_bench's terms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gpd {
    /// The tail: 0 exponential, above 0 heavier (db_bench's `value_k`,
    /// scipy's `c`).
    pub shape: f64,
    /// The spread (db_bench's `value_sigma`).
    pub scale: f64,
    /// The smallest value (db_bench's `value_theta`).
    pub loc: f64,
}

impl Gpd {
    /// The probability of a value at or below `x`.
    pub fn cdf(&self, x: f64) -> f64 {
        let y = (x - self.loc) / self.scale;
        if y <= 0.0 {
            return 0.0;
        }
        if self.shape == 0.0 {
            return -(-y).exp_m1();
        }
        let t = 1.0 + self.shape * y;
        if t <= 0.0 {
            return 1.0;
        }
        // 1 - t^(-1/shape), without losing the small ones to rounding.
        -(-(t.ln()) / self.shape).exp_m1()
    }

    /// The value at or below which a share `p` (0 to 1) of values lie.
    pub fn quantile(&self, p: f64) -> f64 {
        let tail = -(-p).ln_1p();
        if self.shape == 0.0 {
            return self.loc + self.scale * tail;
        }
        self.loc + self.scale * (self.shape * tail).exp_m1() / self.shape
    }

    /// The log-likelihood of `sample`; minus infinity where a value lies
    /// outside the support.
    pub fn log_likelihood(&self, sample: &[f64]) -> f64 {
        let mut sum = 0.0;
        for &x in sample {
            let y = (x - self.loc) / self.scale;
            let t = 1.0 + self.shape * y;
            if y < 0.0 || t <= 0.0 {
                return f64::NEG_INFINITY;
            }
            let log_tail = if self.shape == 0.0 {
                y
            } else {
                (1.0 + 1.0 / self.shape) * (self.shape * y).ln_1p()
            };
            sum -= self.scale.ln() + log_tail;
        }
        sum
    }
}

/// The maximum-likelihood Generalized Pareto of `sample` with location
/// `loc`; `None` with fewer than 2 values, a value below `loc` or not
/// finite, or every value at `loc`.
pub fn fit(sample: &[f64], loc: f64) -> Option<Gpd> {
    if sample.len() < 2 || !loc.is_finite() {
        return None;
    }
    let y: Vec<f64> = sample.iter().map(|&x| x - loc).collect();
    if y.iter().any(|v| !v.is_finite() || *v < 0.0) {
        return None;
    }
    let ymax = y.iter().copied().fold(0.0, f64::max);
    if ymax <= 0.0 {
        return None;
    }
    // Along u = theta * ymax, which runs over (-1, infinity).
    let profile = |u: f64| profile(&y, u / ymax);
    let grid = grid();
    let at: Vec<f64> = grid.iter().map(|&u| profile(u).1).collect();
    let best = (0..grid.len())
        .max_by(|&i, &j| at[i].total_cmp(&at[j]))
        .unwrap_or(0);
    let lo = grid[best.saturating_sub(1)];
    let hi = grid[(best + 1).min(grid.len() - 1)];
    let u = golden_max(&profile, lo, hi);
    let (shape, _) = profile(u);
    let theta = u / ymax;
    let scale = if theta == 0.0 {
        y.iter().sum::<f64>() / y.len() as f64
    } else {
        shape / theta
    };
    Some(Gpd { shape, scale, loc })
}

/// The best shape for `theta` and the log-likelihood there (minus
/// infinity where the shape would be below -1).
fn profile(y: &[f64], theta: f64) -> (f64, f64) {
    let n = y.len() as f64;
    if theta == 0.0 {
        let mean = y.iter().sum::<f64>() / n;
        return (0.0, -n * mean.ln() - n);
    }
    let mut s = 0.0;
    for &v in y {
        let t = theta * v;
        if t <= -1.0 {
            return (0.0, f64::NEG_INFINITY);
        }
        s += t.ln_1p();
    }
    let shape = s / n;
    let scale = shape / theta;
    if shape < -1.0 || scale.is_nan() || scale <= 0.0 {
        return (shape, f64::NEG_INFINITY);
    }
    (shape, -n * scale.ln() - n * shape - n)
}

/// Points of u = theta * ymax, in order: towards -1 (bounded tails), either
/// side of 0 (near exponential), and up to 1e8 (the heaviest tails).
fn grid() -> Vec<f64> {
    let mut g: Vec<f64> = (1..=48)
        .map(|k| -(1.0 - 10f64.powf(-f64::from(k) / 4.0)))
        .collect();
    g.reverse();
    g.extend((0..=48).map(|k| -(10f64.powf(-f64::from(k) / 4.0)) * 0.5));
    g.push(0.0);
    g.extend((-64..=64).map(|k| 10f64.powf(f64::from(k) / 8.0)));
    g.sort_by(f64::total_cmp);
    g.dedup();
    g
}

/// The u in [lo, hi] where `f(u).1` is largest, by golden section.
fn golden_max(f: &dyn Fn(f64) -> (f64, f64), mut lo: f64, mut hi: f64) -> f64 {
    let r = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (hi - r * (hi - lo), lo + r * (hi - lo));
    let (mut fa, mut fb) = (f(a).1, f(b).1);
    for _ in 0..200 {
        if (hi - lo).abs() <= 1e-15 * (1.0 + lo.abs().max(hi.abs())) {
            break;
        }
        if fa >= fb {
            hi = b;
            (b, fb) = (a, fa);
            a = hi - r * (hi - lo);
            fa = f(a).1;
        } else {
            lo = a;
            (a, fa) = (b, fb);
            b = lo + r * (hi - lo);
            fb = f(b).1;
        }
    }
    if fa >= fb { a } else { b }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values at evenly spaced quantiles of `g`: a sample with no noise.
    fn sample(g: &Gpd, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| g.quantile((i as f64 + 0.5) / n as f64))
            .collect()
    }

    #[test]
    fn a_noiseless_sample_gives_its_parameters_back() {
        for shape in [-0.3, 0.0, 0.2615, 1.0] {
            let g = Gpd {
                shape,
                scale: 25.45,
                loc: 0.0,
            };
            let f = fit(&sample(&g, 4000), 0.0).expect("fit");
            assert!((f.shape - shape).abs() < 0.02, "{shape}: {f:?}");
            assert!((f.scale / 25.45 - 1.0).abs() < 0.03, "{shape}: {f:?}");
        }
    }

    #[test]
    fn the_quantile_inverts_the_cdf() {
        let g = Gpd {
            shape: 0.2615,
            scale: 25.45,
            loc: 10.0,
        };
        for p in [1e-9, 0.1, 0.5, 0.99] {
            assert!((g.cdf(g.quantile(p)) - p).abs() < 1e-12, "{p}");
        }
        assert_eq!(g.cdf(5.0), 0.0);
    }

    #[test]
    fn a_sample_it_cannot_fit_is_refused() {
        assert_eq!(fit(&[1.0], 0.0), None);
        assert_eq!(fit(&[3.0, 3.0], 3.0), None);
        assert_eq!(fit(&[1.0, -1.0], 0.0), None);
    }
}

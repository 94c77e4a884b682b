//! db_bench `mixgraph`'s hotness of key ranges, `a e^(b x) + c e^(d x)`
//! over the ranges ranked from hottest (`keyrange_dist_a` to `_d`), fitted
//! by least squares.
//!
//! Why this way: for given exponents the best `a` and `c` solve a 2x2
//! linear system, so only the two exponents are searched (variable
//! projection): on a grid wide enough for any pair that stays finite over
//! the data, then refined by Nelder-Mead. A search of all four from a
//! guess (scipy's `curve_fit`) finds the optimum nearest its start; the
//! golden vectors hold this fit to scipy's from the true parameters, and
//! to a residual no larger.

/// A sum of two exponentials, the first the steeper (`b <= d`), both
/// scales at least 0 (a term with scale 0 is absent and its rate means
/// nothing). Why the bound: the scales are hotness; unbounded, near-equal
/// rates with huge scales of opposite sign (a bump, `x e^(b x)`) can fit
/// ranked shares a little closer, mean nothing as hotness, and lose their
/// digits to cancellation wherever they are played.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TwoExp {
    /// The steep term's scale.
    pub a: f64,
    /// The steep term's rate.
    pub b: f64,
    /// The shallow term's scale.
    pub c: f64,
    /// The shallow term's rate.
    pub d: f64,
    /// Root mean square of the residuals.
    pub rmse: f64,
}

impl TwoExp {
    /// The model's value at `x`.
    pub fn at(&self, x: f64) -> f64 {
        self.a * (self.b * x).exp() + self.c * (self.d * x).exp()
    }
}

/// The least-squares `a e^(b x) + c e^(d x)` through `(x, y)`; `None` with
/// fewer than 5 points, an x not above 0, or a value not finite.
pub fn fit(x: &[f64], y: &[f64]) -> Option<TwoExp> {
    if x.len() < 5 || y.len() != x.len() || x.iter().chain(y).any(|v| !v.is_finite()) {
        return None;
    }
    let xmin = x.iter().copied().fold(f64::INFINITY, f64::min);
    let xmax = x.iter().copied().fold(0.0, f64::max);
    if xmin <= 0.0 {
        return None;
    }
    // Rates from the one that leaves e^-40 of a term at the first x, to
    // the one that makes it e^40 at the last: past those a term is nothing
    // or everything.
    let mut rates: Vec<f64> = (0..=60)
        .map(|k| -40.0 / xmin * (f64::from(k) / 60.0).powi(2))
        .collect();
    rates.extend((1..=20).map(|k| 40.0 / xmax * (f64::from(k) / 20.0).powi(2)));
    let sse = |p: [f64; 2]| solve(x, y, p[0], p[1]).1;
    let mut best = ([0.0, 0.0], f64::INFINITY);
    for (i, &b) in rates.iter().enumerate() {
        for &d in &rates[i + 1..] {
            let s = sse([b, d]);
            if s < best.1 {
                best = ([b, d], s);
            }
        }
    }
    let step = (best.0[0] - best.0[1]).abs().max(1e-3) / 4.0;
    let [b, d] = nelder_mead(&sse, best.0, step);
    let ((a, c), s) = solve(x, y, b, d);
    let rmse = (s / x.len() as f64).sqrt();
    let fit = if b <= d {
        TwoExp { a, b, c, d, rmse }
    } else {
        TwoExp {
            a: c,
            b: d,
            c: a,
            d: b,
            rmse,
        }
    };
    Some(fit)
}

/// The best scales not below 0 for rates `b` and `d`, and the sum of
/// squared residuals (one term where the two rates are too close to tell
/// apart).
fn solve(x: &[f64], y: &[f64], b: f64, d: f64) -> ((f64, f64), f64) {
    let (mut uu, mut uv, mut vv, mut uy, mut vy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (&xi, &yi) in x.iter().zip(y) {
        let (u, v) = ((b * xi).exp(), (d * xi).exp());
        uu += u * u;
        uv += u * v;
        vv += v * v;
        uy += u * yi;
        vy += v * yi;
    }
    if !(uu > 0.0 && vv > 0.0 && uu.is_finite() && vv.is_finite()) {
        return ((0.0, 0.0), f64::INFINITY);
    }
    let sse = |a: f64, c: f64| {
        let s = x
            .iter()
            .zip(y)
            .map(|(&xi, &yi)| {
                let r = yi - a * (b * xi).exp() - c * (d * xi).exp();
                r * r
            })
            .sum::<f64>();
        if s.is_finite() { s } else { f64::INFINITY }
    };
    let det = uu * vv - uv * uv;
    if det > 1e-12 * uu * vv && det.is_finite() {
        let (a, c) = ((uy * vv - vy * uv) / det, (vy * uu - uy * uv) / det);
        if a >= 0.0 && c >= 0.0 {
            return ((a, c), sse(a, c));
        }
    }
    // The least squares with a scale below 0 (or rates too close to tell
    // apart): the best with a scale at 0 is on an edge, one term alone.
    let (a, c) = ((uy / uu).max(0.0), (vy / vv).max(0.0));
    let (only_a, only_c) = (sse(a, 0.0), sse(0.0, c));
    if only_a <= only_c {
        ((a, 0.0), only_a)
    } else {
        ((0.0, c), only_c)
    }
}

/// The minimum of `f` near `start` by Nelder-Mead (reflection 1,
/// expansion 2, contraction and shrink 1/2), first simplex `step` wide.
fn nelder_mead(f: &dyn Fn([f64; 2]) -> f64, start: [f64; 2], step: f64) -> [f64; 2] {
    let mut s = [
        start,
        [start[0] + step, start[1]],
        [start[0], start[1] + step],
    ];
    let mut v = s.map(f);
    let along =
        |p: [f64; 2], q: [f64; 2], t: f64| [p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])];
    for _ in 0..4000 {
        let mut idx = [0usize, 1, 2];
        idx.sort_by(|&i, &j| v[i].total_cmp(&v[j]));
        (s, v) = (idx.map(|i| s[i]), idx.map(|i| v[i]));
        let width = (1..3)
            .map(|i| (s[i][0] - s[0][0]).abs().max((s[i][1] - s[0][1]).abs()))
            .fold(0.0, f64::max);
        if width <= 1e-13 * (1.0 + s[0][0].abs().max(s[0][1].abs())) {
            break;
        }
        let mid = along(s[0], s[1], 0.5);
        let r = along(s[2], mid, 2.0);
        let fr = f(r);
        if fr < v[0] {
            let e = along(s[2], mid, 3.0);
            let fe = f(e);
            (s[2], v[2]) = if fe < fr { (e, fe) } else { (r, fr) };
        } else if fr < v[1] {
            (s[2], v[2]) = (r, fr);
        } else {
            let c = if fr < v[2] {
                along(s[2], mid, 1.5)
            } else {
                along(s[2], mid, 0.5)
            };
            let fc = f(c);
            if fc < v[2].min(fr) {
                (s[2], v[2]) = (c, fc);
            } else {
                let best = s[0];
                for (p, fp) in s.iter_mut().zip(v.iter_mut()).skip(1) {
                    *p = along(best, *p, 0.5);
                    *fp = f(*p);
                }
            }
        }
    }
    let best = (0..3).min_by(|&i, &j| v[i].total_cmp(&v[j])).unwrap_or(0);
    s[best]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixgraph_s_published_key_range_hotness_comes_back() {
        // db_bench's example: 30 ranges, a 14.18, b -2.917, c 0.0164,
        // d -0.08082.
        let t = TwoExp {
            a: 14.18,
            b: -2.917,
            c: 0.0164,
            d: -0.08082,
            rmse: 0.0,
        };
        let x: Vec<f64> = (1..=30).map(f64::from).collect();
        let y: Vec<f64> = x.iter().map(|&v| t.at(v)).collect();
        let f = fit(&x, &y).expect("fit");
        for (got, want) in [(f.a, t.a), (f.b, t.b), (f.c, t.c), (f.d, t.d)] {
            assert!((got / want - 1.0).abs() < 1e-4, "{f:?}");
        }
        assert!(f.rmse < 1e-9, "{f:?}");
    }

    #[test]
    fn too_few_points_or_a_bad_x_are_refused() {
        assert_eq!(fit(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]), None);
        let x = [0.0, 1.0, 2.0, 3.0, 4.0];
        assert_eq!(fit(&x, &[1.0; 5]), None);
    }
}

//! The fits of a workload's distributions against scipy: least squares
//! (`linregress`), the Generalized Pareto (`genpareto.fit` with its
//! location fixed, `kstest`), the two exponentials (`curve_fit` from the
//! true parameters) and the power law of the hottest keys' share, for the
//! data in `fixtures/stats/golden.json` (`scripts/golden-stats.py`).

use ledgerbench_stats::fit::{self, gpd, two_exp};
use serde_json::Value;

fn golden() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/stats/golden.json"
    );
    let all: Value =
        serde_json::from_slice(&std::fs::read(path).expect("golden vectors")).expect("json");
    all["fit"].clone()
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("a number")
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().expect("an array").iter().map(f).collect()
}

fn cases<'a>(g: &'a Value, key: &str) -> &'a Vec<Value> {
    g[key].as_array().expect("cases")
}

/// Within `rel` of `want`, relative (absolute near zero).
fn near(got: f64, want: f64, rel: f64, what: &str) {
    let tol = rel * want.abs().max(1e-12);
    assert!((got - want).abs() <= tol, "{what}: {got} against {want}");
}

#[test]
fn least_squares_match_linregress() {
    let g = golden();
    for c in cases(&g, "line") {
        let l = fit::line(&floats(&c["x"]), &floats(&c["y"])).expect("line");
        near(l.slope, f(&c["slope"]), 1e-10, "slope");
        near(l.intercept, f(&c["intercept"]), 1e-10, "intercept");
        near(l.r, f(&c["r"]), 1e-10, "r");
        near(l.slope_stderr, f(&c["slope_stderr"]), 1e-9, "stderr");
    }
}

#[test]
fn the_generalized_pareto_matches_scipy_and_fits_at_least_as_well() {
    let g = golden();
    for c in cases(&g, "gpd") {
        let x = floats(&c["sample"]);
        let t = floats(&c["true"]);
        let truth = gpd::Gpd {
            shape: t[0],
            scale: t[1],
            loc: 0.0,
        };
        for p in c["cdf"].as_array().expect("cdf") {
            near(truth.cdf(f(&p[0])), f(&p[1]), 1e-12, "cdf");
        }
        for p in c["ppf"].as_array().expect("ppf") {
            near(truth.quantile(f(&p[0])), f(&p[1]), 1e-12, "ppf");
        }
        let ks = fit::ks_distance(&x, |v| truth.cdf(v)).expect("ks");
        near(ks, f(&c["ks"]), 1e-10, "KS distance");
        let fitted = gpd::fit(&x, 0.0).expect("fit");
        let theirs = f(&c["log_likelihood"]);
        let ours = fitted.log_likelihood(&x);
        // The maximum likelihood: ours no lower than scipy's optimum, and
        // the parameters where scipy's optimiser stopped.
        assert!(
            ours >= theirs - 1e-9 * theirs.abs(),
            "{t:?}: {ours} < {theirs}"
        );
        // scipy's optimiser stops within its own tolerance of the optimum:
        // the shape within 0.01, the scale within 1%.
        let shape = f(&c["shape"]);
        assert!(
            (fitted.shape - shape).abs() <= 0.01,
            "shape {} against {shape}",
            fitted.shape
        );
        near(fitted.scale, f(&c["scale"]), 1e-2, "scale");
    }
}

#[test]
fn the_two_exponentials_match_curve_fit() {
    let g = golden();
    for c in cases(&g, "two_exp") {
        let (x, y) = (floats(&c["x"]), floats(&c["y"]));
        let t = two_exp::fit(&x, &y).expect("fit");
        let sse = t.rmse * t.rmse * x.len() as f64;
        let want = f(&c["sse"]);
        assert!(sse <= want * (1.0 + 1e-9), "{t:?}: {sse} > {want}");
        let p = floats(&c["params"]);
        for (got, (want, what)) in [t.a, t.b, t.c, t.d]
            .into_iter()
            .zip(p.iter().zip("abcd".chars()))
        {
            near(got, *want, 1e-3, &format!("{what} of {p:?}"));
        }
    }
}

#[test]
fn the_power_law_of_the_hottest_keys_matches_linregress() {
    let g = golden();
    for c in cases(&g, "power_cdf") {
        // (count, keys with it) pairs.
        let mut counts: Vec<u64> = Vec::new();
        for p in c["counts"].as_array().expect("counts") {
            let (v, t) = (p[0].as_u64().expect("count"), p[1].as_u64().expect("keys"));
            counts.extend(std::iter::repeat_n(v, t as usize));
        }
        let p = fit::power_cdf(&counts).expect("fit");
        near(p.a, f(&c["a"]), 1e-10, "a");
        near(p.b, f(&c["b"]), 1e-10, "b");
        // And the draw's own parameters within a band, as `fit` states.
        let t = floats(&c["true"]);
        near(p.b, t[1], 0.1, "b against the draw's");
    }
}

#[test]
fn the_two_exponentials_keep_their_scales_at_0_or_more_as_curve_fit_with_bounds() {
    let g = golden();
    for c in cases(&g, "two_exp_bounded") {
        let (x, y) = (floats(&c["x"]), floats(&c["y"]));
        let t = two_exp::fit(&x, &y).expect("fit");
        assert!(t.a >= 0.0 && t.c >= 0.0, "{t:?}");
        let sse = t.rmse * t.rmse * x.len() as f64;
        let want = f(&c["sse"]);
        assert!(sse <= want * (1.0 + 1e-6), "{t:?}: {sse} > {want}");
        // The case is one the bound changes: unbounded, a scale is below 0.
        let u = floats(&c["unbounded_params"]);
        assert!(u[0] < 0.0 || u[2] < 0.0, "{u:?}");
    }
}

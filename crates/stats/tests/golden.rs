//! The statistics against independent implementations: scipy,
//! pymannkendall and ruptures answered for the series in
//! `fixtures/stats/golden.json` (`scripts/golden-stats.py` made it).

use ledgerbench_stats::{changepoint, normal, rank, trend};
use serde_json::Value;

fn golden() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/stats/golden.json"
    );
    serde_json::from_slice(&std::fs::read(path).expect("golden vectors")).expect("json")
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("a number")
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().expect("an array").iter().map(f).collect()
}

/// Within `rel` of `want`, relative (absolute near zero).
fn near(got: f64, want: f64, rel: f64, what: &str) {
    let tol = rel * want.abs().max(1e-12);
    assert!((got - want).abs() <= tol, "{what}: {got} against {want}");
}

#[test]
fn the_normal_distribution_matches_scipy() {
    let g = golden();
    for c in g["normal"]["cdf"].as_array().expect("cdf") {
        near(normal::cdf(f(&c[0])), f(&c[1]), 1e-12, "cdf");
    }
    for c in g["normal"]["sf"].as_array().expect("sf") {
        near(normal::sf(f(&c[0])), f(&c[1]), 1e-11, "sf");
    }
    for c in g["normal"]["ppf"].as_array().expect("ppf") {
        near(normal::ppf(f(&c[0])), f(&c[1]), 1e-12, "ppf");
    }
}

#[test]
fn the_ar1_form_matches_numpy_on_pymannkendalls_pieces() {
    let g = golden();
    let cases = g["mann_kendall_ar1"].as_array().expect("cases");
    assert!(cases.len() >= 10, "every series of the file");
    for c in cases {
        let name = c["name"].as_str().expect("name");
        let t = trend::mann_kendall_ar1(&floats(&c["x"])).expect(name);
        near(t.s, f(&c["s"]), 0.0, name);
        near(t.var_s, f(&c["var_s"]), 1e-9, name);
        near(t.z, f(&c["z"]), 1e-9, name);
        near(t.p, f(&c["p"]), 1e-7, name);
    }
}

#[test]
fn hamed_rao_matches_pymannkendall() {
    let g = golden();
    for c in g["hamed_rao"].as_array().expect("cases") {
        let name = c["name"].as_str().expect("name");
        let t = trend::hamed_rao(&floats(&c["x"]), f(&c["alpha"])).expect(name);
        near(t.s, f(&c["s"]), 0.0, name);
        near(t.var_s, f(&c["var_s"]), 1e-9, name);
        near(t.z, f(&c["z"]), 1e-9, name);
        // pymannkendall's `1 - cdf` rounds to steps of about 1e-16.
        let p = f(&c["p"]);
        assert!(
            (t.p - p).abs() <= 1e-7 * p + 1e-15,
            "{name}: p {} against {p}",
            t.p
        );
        near(t.tau, f(&c["tau"]), 1e-12, name);
        near(t.slope, f(&c["slope"]), 1e-12, name);
        near(t.intercept, f(&c["intercept"]), 1e-9, name);
    }
}

#[test]
fn theil_sen_matches_scipy() {
    let g = golden();
    for c in g["theil_sen"].as_array().expect("cases") {
        let name = c["name"].as_str().expect("name");
        let t = trend::theil_sen(&floats(&c["x"]), &floats(&c["y"]), f(&c["confidence"]), 1.0)
            .expect(name);
        near(t.slope, f(&c["slope"]), 1e-12, name);
        near(t.intercept, f(&c["intercept"]), 1e-9, name);
        near(t.low, f(&c["low"]), 1e-12, name);
        near(t.high, f(&c["high"]), 1e-12, name);
    }
}

#[test]
fn pelt_matches_ruptures() {
    let g = golden();
    for c in g["pelt"].as_array().expect("cases") {
        let name = c["name"].as_str().expect("name");
        let ends = changepoint::pelt_l2(
            &floats(&c["signal"]),
            f(&c["penalty"]),
            c["min_size"].as_u64().expect("min_size") as usize,
        );
        let want: Vec<usize> = c["ends"]
            .as_array()
            .expect("ends")
            .iter()
            .map(|e| e.as_u64().expect("end") as usize)
            .collect();
        assert_eq!(ends, want, "{name} at penalty {}", c["penalty"]);
    }
}

#[test]
fn the_signed_rank_test_and_hodges_lehmann_match_scipy() {
    let g = golden();
    for c in g["signed_rank"].as_array().expect("cases") {
        let d = floats(&c["d"]);
        near(rank::signed_rank_p(&d), f(&c["p"]), 1e-12, "signed-rank p");
        let (est, _, _) = rank::hodges_lehmann(&d, 0.05).expect("estimate");
        near(est, f(&c["hodges_lehmann"]), 1e-12, "Hodges-Lehmann");
    }
}

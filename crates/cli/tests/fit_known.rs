//! `ledgerbench fit` against known answers: a RocksDB query trace that
//! db_bench's `mixgraph` wrote with stated parameters
//! (`scripts/mixgraph-known.sh`, `fixtures/mixgraph/`), and the fit must
//! recover them within bands set by the trace's own sampling noise (30,000
//! operations; about 4,200 value sizes, 3,000 keys).

use std::path::Path;

mod common;
use common::{ledgerbench, stderr};

/// The model `fit` writes of `fixtures/mixgraph/NAME.trace`.
fn fitted(name: &str, dir: &Path) -> ledgerbench_model::model::Store {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/mixgraph")
        .join(format!("{name}.trace"));
    let trace = trace.display().to_string();
    let out = format!("{name}.toml");
    let o = ledgerbench(&["fit", &trace, "--scan-length", "10", "--out", &out], dir);
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    let text = std::fs::read_to_string(dir.join(&out)).expect("model");
    let m = ledgerbench_model::parse(&out, &text).expect("the model reads back");
    m.stores.into_iter().next().expect("one store")
}

/// Within `band` of `want`, said with the name when not.
fn near(what: &str, got: f64, want: f64, band: f64) {
    assert!(
        (got - want).abs() <= band,
        "{what}: fitted {got}, planted {want} (band {band})"
    );
}

/// The value sizes db_bench gave its puts, each as likely: its `mixgraph`
/// draws one number per operation, `r` uniform in 0..3,000, and takes the
/// operation's kind from `r mod 1000` (a put when 850..990) and the
/// value's size from the same `u = r / 3000`, through its Generalized
/// Pareto's inverse (theta 0, k 0.2615, sigma 25.45; rounded up, raised to
/// 10). So the sizes are that Pareto on the slices of `u` puts hold, not
/// the Pareto itself: 10 to 39 bytes (tools/db_bench_tool.cc, MixGraph).
fn db_bench_value_sizes() -> Vec<f64> {
    let mut v: Vec<f64> = (0..3000u32)
        .filter(|r| (850..990).contains(&(r % 1000)))
        .map(|r| {
            let u = f64::from(r) / 3000.0;
            (25.45 * (u.powf(-0.2615) - 1.0) / 0.2615).ceil().max(10.0)
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

/// What db_bench was given besides the keys: its mix (85% gets, 14% puts, 1% seeks),
/// 16-byte keys, and its value sizes ([`db_bench_value_sizes`]).
fn mix_and_sizes(name: &str, s: &ledgerbench_model::model::Store) {
    let gets = s.mix.get_found + s.mix.get_missing + s.mix.get_unwritten;
    // A share of 30,000 draws: 3 standard deviations are under 0.007.
    near(&format!("{name} gets"), gets, 0.85, 0.01);
    near(
        &format!("{name} puts"),
        s.mix.insert + s.mix.overwrite,
        0.14,
        0.01,
    );
    near(&format!("{name} seeks"), s.mix.scan, 0.01, 0.005);
    assert_eq!(s.key_size.fixed, Some(16), "{name}");
    let q = s
        .value_size
        .quantiles
        .as_ref()
        .expect("the value sizes' quantiles");
    let want = db_bench_value_sizes();
    let at = |p: f64| want[((p * want.len() as f64) as usize).min(want.len() - 1)];
    // About 4,200 puts drawn from 420 sizes, each about ten times: the
    // quantiles land on the same sizes, or a byte apart where sizes step.
    for (what, got, p) in [
        ("p10", q.p10, 0.1),
        ("p50", q.p50, 0.5),
        ("p90", q.p90, 0.9),
    ] {
        near(&format!("{name} value {what}"), got, at(p), 1.0);
    }
    near(&format!("{name} value min"), q.min, want[0], 0.0);
    near(
        &format!("{name} value max"),
        q.max,
        want[want.len() - 1],
        0.0,
    );
    let mean = want.iter().sum::<f64>() / want.len() as f64;
    // The sizes' spread is about 12 bytes: the mean of 4,200 within 0.6.
    near(&format!("{name} value mean"), q.mean, mean, 0.6);
}

#[test]
fn fit_recovers_mixgraphs_power_law_of_keys() {
    let t = tempfile::tempdir().expect("tempdir");
    let s = fitted("power", t.path());
    mix_and_sizes("power", &s);
    let p = s.access.power.as_ref().expect("a power law of the keys");
    // The n hottest of 3,000 keys take 0.0607 n^0.35.
    near("power b", p.b, 0.35, 0.05);
    near("power a", p.a, 0.0607, 0.015);
}

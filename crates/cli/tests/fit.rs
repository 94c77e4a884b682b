//! `ledgerbench fit` on db_bench's mixgraph trace (`fixtures/rocksdb-trace`),
//! and `ledgerbench run synth` playing what it wrote.

use std::path::{Path, PathBuf};

mod common;
use common::{ledgerbench, read_json, stderr, stdout};

fn mixgraph() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/rocksdb-trace/6-mixgraph.trace")
}

fn fit(dir: &Path) -> std::process::Output {
    let trace = mixgraph().display().to_string();
    ledgerbench(
        &["fit", &trace, "--scan-length", "10", "--out", "m.toml"],
        dir,
    )
}

#[test]
fn fit_writes_a_model_of_the_mixgraph_trace_and_synth_plays_it() {
    let t = tempfile::tempdir().expect("tempdir");
    let o = fit(t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let printed = stdout(&o);
    assert!(printed.contains("| default | 3000 |"), "{printed}");
    let text = std::fs::read_to_string(t.path().join("m.toml")).expect("model");
    let m = ledgerbench_model::parse("m.toml", &text).expect("the model reads back");
    let s = &m.stores[0];
    // db_bench's counts: Gets 2536, Puts 428, Seek 36 of 3,000; the
    // model writes six significant digits.
    assert!((s.mix.scan - 36.0 / 3000.0).abs() < 1e-6, "{:?}", s.mix);
    assert!(
        (s.mix.insert + s.mix.overwrite - 428.0 / 3000.0).abs() < 1e-6,
        "{:?}",
        s.mix
    );
    assert_eq!(s.key_size.fixed, Some(16));
    assert_eq!(s.scan_length.as_ref().and_then(|z| z.fixed), Some(10));

    let o = ledgerbench(
        &[
            "run",
            "synth",
            "--workload",
            "m.toml",
            "--scale",
            "2x",
            "--backends",
            "mem",
            "--device",
            "none",
            "--out",
            "run",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&t.path().join("run/results.json"));
    let src = &r["config"]["header"]["source"];
    assert_eq!(src["config"]["scale"], 2.0, "{src}");
    assert_eq!(src["model"]["store"][0]["name"], "default", "{src}");
    let ops = &r["runs"][0]["replay"]["summary"];
    assert!(ops["gets"].as_u64().unwrap_or(0) > 4000, "{ops}");
}

#[test]
fn fit_replaces_nothing_and_refuses_what_is_not_a_trace() {
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::write(t.path().join("m.toml"), "mine").expect("write");
    let o = fit(t.path());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("replaces nothing"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(t.path().join("m.toml")).expect("kept"),
        "mine"
    );

    std::fs::write(t.path().join("notes.txt"), "not a trace").expect("write");
    let o = ledgerbench(&["fit", "notes.txt", "--out", "x.toml"], t.path());
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("not a ledgerbench trace"),
        "{}",
        stderr(&o)
    );
    assert!(!t.path().join("x.toml").exists());
}

#[test]
fn synth_refuses_a_missing_or_broken_model_saying_why() {
    let t = tempfile::tempdir().expect("tempdir");
    let o = ledgerbench(
        &[
            "run",
            "synth",
            "--workload",
            "none.toml",
            "--backends",
            "mem",
        ],
        t.path(),
    );
    assert!(stderr(&o).contains("no such model file"), "{}", stderr(&o));
    std::fs::write(
        t.path().join("bad.toml"),
        "version = 1\n[[store]]\nname = \"s\"\n[store.mix]\ninsert = 0.5\n",
    )
    .expect("write");
    let o = ledgerbench(
        &[
            "run",
            "synth",
            "--workload",
            "bad.toml",
            "--backends",
            "mem",
            "--device",
            "none",
        ],
        t.path(),
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("sum to 0.5"), "{}", stderr(&o));
    let o = ledgerbench(
        &["run", "synth", "--workload", "bad.toml", "--scale", "ten"],
        t.path(),
    );
    assert!(
        stderr(&o).contains("give a factor above 0"),
        "{}",
        stderr(&o)
    );
}

/// A Stellar trace's stores, as the issue states them: ledgers' keys are
/// sequential (ledger numbers), txdata's random (transaction hashes),
/// txindex's values 4 bytes (a ledger number); and the fit plays back.
#[test]
fn fit_finds_the_stellar_stores_shapes_in_a_recorded_trace() {
    let t = tempfile::tempdir().expect("tempdir");
    let o = ledgerbench(
        &[
            "record",
            "stellar",
            "--preset",
            "smoke",
            "--out",
            "s.kvtrace",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = ledgerbench(&["fit", "s.kvtrace", "--out", "s.toml"], t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(t.path().join("s.toml")).expect("model");
    let m = ledgerbench_model::parse("s.toml", &text).expect("the model reads back");
    let store = |name: &str| {
        m.stores
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no store {name}: {text}"))
    };
    let (ledgers, txdata, txindex) = (store("ledgers"), store("txdata"), store("txindex"));
    assert!(ledgers.inserts.ascending > 0.95, "{:?}", ledgers.inserts);
    assert!(txdata.inserts.ascending < 0.05, "{:?}", txdata.inserts);
    assert_eq!(
        txindex.value_size.fixed,
        Some(4),
        "{:?}",
        txindex.value_size
    );
    assert_eq!(txdata.key_size.fixed, Some(32), "{:?}", txdata.key_size);
    // Stellar writes each key once: no overwrite in any store.
    for s in &m.stores {
        assert_eq!(s.mix.overwrite, 0.0, "{}: {:?}", s.name, s.mix);
    }
    let o = ledgerbench(
        &[
            "run",
            "synth",
            "--workload",
            "s.toml",
            "--backends",
            "mem",
            "--device",
            "none",
            "--out",
            "run",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&t.path().join("run/results.json"));
    let stores = &r["runs"][0]["stores"];
    assert_eq!(stores.as_array().map(Vec::len), Some(3), "{stores}");
}

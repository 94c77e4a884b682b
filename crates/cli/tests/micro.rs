//! `ledgerbench run micro` as a user meets it: what a run keeps and what
//! it records.

use std::path::Path;

mod common;
use common::{ledgerbench, read_json, stderr};

#[test]
fn a_micro_run_without_devices_keeps_its_results_not_its_stores() {
    // Its stores go in the run directory; a finished run removes them, as
    // every other workload's, so a results folder holds no engine data.
    let t = tempfile::tempdir().expect("tempdir");
    let o = ledgerbench(
        &[
            "run",
            "micro",
            "--num",
            "2000",
            "--backends",
            "mem,lmdb",
            "--benchmarks",
            "fillrandom,readrandom",
            "--device",
            "none",
            "--out",
            "m",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&t.path().join("m/results.json"));
    assert_eq!(r["runs"].as_array().map(Vec::len), Some(2), "{r}");
    // LMDB's version is recorded per run and where the report's engines
    // column reads it.
    let v = r["runs"][1]["engine_version"]
        .as_str()
        .expect("lmdb's version");
    let versions = &r["env"]["engine_versions"];
    assert!(
        versions
            .as_object()
            .is_some_and(|m| m.values().any(|x| x == v)),
        "{versions}"
    );
    let left: Vec<_> = walk(&t.path().join("m/stores"));
    assert!(left.is_empty(), "stores left behind: {left:?}");
}

#[test]
fn a_micro_benchmark_records_how_rocksdb_grouped_its_commits() {
    // Two writers of 2,000 commits each: every commit is RocksDB's own
    // (a group's leader) or written in another's group, never both, and
    // the counts come from the store the benchmark ran on.
    let t = tempfile::tempdir().expect("tempdir");
    let o = ledgerbench(
        &[
            "run",
            "micro",
            "--num",
            "2000",
            "--threads",
            "2",
            "--backends",
            "rocksdb-leveled",
            "--benchmarks",
            "fillrandom",
            "--device",
            "none",
            "--out",
            "m",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&t.path().join("m/results.json"));
    let extra = &r["runs"][0]["benchmarks"][0]["engine"]["extra"];
    let count = |k: &str| extra[k].as_u64().unwrap_or_else(|| panic!("no {k}: {r}"));
    let (own, other) = (count("writes_done_by_self"), count("writes_done_by_other"));
    assert_eq!(own + other, 4000, "{extra}");
    assert!(own > 0, "{extra}");
    assert_eq!(count("writes_with_wal"), 4000, "{extra}");
}

/// Every file below `dir` (none when it is absent).
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|e| {
            if e.path().is_dir() {
                walk(&e.path())
            } else {
                vec![e.path()]
            }
        })
        .collect()
}

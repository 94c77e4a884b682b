//! `ledgerbench run fan-out`: a store grown batch by batch and read at each
//! checkpoint by a probe process, and the report that renders it.

use std::path::Path;

mod common;
use common::{ledgerbench, read_json, stderr};

fn root() -> bool {
    ledgerbench_meter::cgroup::MemoryLimit::available().is_ok()
}

/// Tiny batches, two checkpoints, the memory limit where cgroups work.
fn small_run(dir: &Path, backends: &str, limit: &str) -> std::process::Output {
    let mut args = vec![
        "run",
        "fan-out",
        "--keys-per-batch",
        "3000",
        "--batches",
        "2,5",
        "--reads",
        "300",
        "--missing-reads",
        "200",
        "--engine-memory",
        "16MiB",
        "--backends",
        backends,
        "--out",
        "f",
    ];
    if root() {
        args.extend(["--memory-limit", limit]);
    }
    ledgerbench(&args, dir)
}

#[test]
fn lookups_fan_out_with_the_partitions_and_every_answer_is_checked() {
    let t = tempfile::tempdir().expect("tempdir");
    let o = small_run(
        t.path(),
        "rocksdb-partitioned,rocksdb-sharded,mdbx",
        "256MiB",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&t.path().join("f/results.json"));
    assert_eq!(r["workload"], "fan-out");
    let runs = r["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 3);
    for run in runs {
        let cps = run["checkpoints"].as_array().expect("checkpoints");
        assert_eq!(cps.len(), 2, "{run}");
        for (c, batches) in cps.iter().zip([2u64, 5]) {
            assert_eq!(c["batches"], batches);
            assert_eq!(c["keys"], batches * 3000);
            // The store's own cache is emptied, root or not (a remount of
            // its device, or its files' pages let go).
            assert_eq!(c["page_cache_dropped"], true, "{c}");
            assert_eq!(c["held"]["cgroup_peak_bytes"].is_u64(), root(), "{c}");
            for pass in [
                "cold_found",
                "cold_missing",
                "steady_found",
                "steady_missing",
            ] {
                let p = &c["passes"][pass];
                assert_eq!(p["mismatches"], 0, "{pass}: {p}");
                assert_eq!(p["stopped_early"], false);
                let want = if pass.ends_with("found") { 300 } else { 200 };
                assert_eq!(p["gets"], want, "{pass}");
            }
        }
    }
    // A partitioned store holds a database per batch plus the open one, and
    // a GET looks through more of them as they grow; the others probe one.
    let part = &runs[0]["checkpoints"];
    assert_eq!(part[0]["engine"]["extra"]["partitions"], 3);
    assert_eq!(part[1]["engine"]["extra"]["partitions"], 6);
    let probes = |i: usize| {
        part[i]["passes"]["steady_found"]["probes_per_get"]
            .as_f64()
            .expect("probes")
    };
    // Found keys: on average halfway through the sealed ones, after the
    // empty open one; missing keys: every one.
    assert!((1.5..=3.0).contains(&probes(0)), "{}", probes(0));
    assert!((3.0..=5.0).contains(&probes(1)), "{}", probes(1));
    let missing = part[1]["passes"]["steady_missing"]["probes_per_get"]
        .as_f64()
        .expect("probes");
    assert!((missing - 6.0).abs() < 1e-9, "{missing}");
    assert!(runs[1]["checkpoints"][0]["passes"]["steady_found"]["probes_per_get"].is_null());
    // Each partition is a database with its own files open.
    let fds = |i: usize| {
        let h = &part[i]["held"];
        h["fds_after_open"].as_u64().expect("fds") - h["fds_before_open"].as_u64().expect("fds")
    };
    assert!(fds(1) > fds(0), "{} then {}", fds(0), fds(1));

    // The report renders the tables and the charts the issue asks for.
    let o = ledgerbench(&["report", "f", "--out", "r"], t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(t.path().join("r/report.md")).expect("report");
    assert!(
        md.contains("## Lookup fan-out: batches of 3000 keys"),
        "{md}"
    );
    for run in ["rocksdb-partitioned", "rocksdb-sharded", "mdbx"] {
        assert!(md.contains(&format!("| {run} | 5 |")), "{run} row in\n{md}");
    }
    for chart in [
        "get-p99-existing-keys",
        "get-p99-missing-keys",
        "memory-outside-the-block-cache",
    ] {
        let found = std::fs::read_dir(t.path().join("r/charts"))
            .expect("charts")
            .flatten()
            .any(|e| e.file_name().to_string_lossy().contains(chart));
        assert!(found, "chart {chart}");
    }
}

#[test]
fn a_store_that_keeps_nothing_across_a_reopen_is_refused() {
    let t = tempfile::tempdir().expect("tempdir");
    let o = ledgerbench(
        &[
            "run",
            "fan-out",
            "--backends",
            "mem",
            "--set",
            "mem.persist=false",
            "--durability",
            "none",
            "--batches",
            "1",
            "--keys-per-batch",
            "100",
            "--device",
            "none",
        ],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("keeps nothing across a reopen"),
        "{}",
        stderr(&o)
    );
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn a_store_over_its_memory_limit_ends_its_run_and_keeps_what_was_measured() {
    if !ledgerbench_testkit::can_run(ledgerbench_meter::cgroup::MemoryLimit::available()) {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    // 4 MiB: RocksDB's 16 MiB block cache (a 64 MiB budget), filled by
    // 3,000 GETs over 40,000 keys, cannot fit; MDBX's mapped pages are page
    // cache, which the kernel reclaims instead. (The smaller store the other
    // tests read fits in 4 MiB: only the store's cache is emptied before a
    // checkpoint, so the probe is not charged for ledgerbench's own code.)
    let o = ledgerbench(
        &[
            "run",
            "fan-out",
            "--keys-per-batch",
            "20000",
            "--batches",
            "2,5",
            "--reads",
            "3000",
            "--missing-reads",
            "200",
            "--engine-memory",
            "64MiB",
            "--backends",
            "rocksdb-partitioned,mdbx",
            "--memory-limit",
            "4MiB",
            "--out",
            "f",
        ],
        t.path(),
    );
    let r = read_json(&t.path().join("f/results.json"));
    let err = r["runs"][0]["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(o.status.code(), Some(2), "{}\n{err}", stderr(&o));
    assert!(
        err.contains("did not fit its memory limit of 4 MiB"),
        "{err}"
    );
    assert!(err.contains("OOM killer"), "{err}");
    assert!(
        r["runs"][1]["error"].is_null(),
        "the next backend still ran"
    );
    assert_eq!(
        r["runs"][1]["checkpoints"].as_array().map(Vec::len),
        Some(2)
    );
    // Cgroups of processes that are gone: a probe's left behind. (A live
    // one may belong to the other fan-out test running beside this one.)
    let left: Vec<String> = ledgerbench_meter::clean::find()
        .iter()
        .map(ToString::to_string)
        .filter(|l| l.contains("fanout"))
        .collect();
    assert!(left.is_empty(), "a probe's cgroup was left: {left:?}");
}

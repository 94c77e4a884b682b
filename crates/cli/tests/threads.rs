//! Client threads through the `ledgerbench` binary: a `--threads` sweep runs
//! each backend at each count, records the count, how the stream was split
//! and every thread's share, merges the threads' histograms, and shows a
//! one-writer engine's queueing apart from its commits.

mod common;
use common::{ledgerbench, read_json, stderr};
use serde_json::Value;

fn run(dir: &std::path::Path, args: &[&str]) -> Value {
    let out = args[1];
    let mut a = args.to_vec();
    a.extend(["--device", "none", "--out", out]);
    let o = ledgerbench(&a, dir);
    assert!(o.status.success(), "{}", stderr(&o));
    read_json(&dir.join(out).join("results.json"))
}

fn count(v: &Value) -> u64 {
    v["count"].as_u64().unwrap_or(0)
}

#[test]
fn a_thread_sweep_records_each_count_merges_threads_and_times_the_writer_queue() {
    let t = tempfile::tempdir().expect("tempdir");
    let r = run(
        t.path(),
        &[
            "run",
            "ycsb",
            "--threads",
            "1,3",
            "--backends",
            "lmdb,mem",
            "--param",
            "workload=\"a\"",
            "--param",
            "records=3000",
            "--param",
            "operations=6000",
            "--param",
            "ops_per_segment=2000",
        ],
    );
    assert_eq!(r["config"]["threads"], serde_json::json!([1, 3]));
    let runs = r["runs"].as_array().expect("runs");
    let labels: Vec<&str> = runs.iter().filter_map(|x| x["label"].as_str()).collect();
    assert_eq!(labels, ["lmdb@1t", "lmdb@3t", "mem@1t", "mem@3t"]);
    for x in runs {
        let label = x["label"].as_str().unwrap_or_default();
        let s = &x["replay"]["summary"];
        assert_eq!(s["mismatches"], 0, "{label}");
        assert_eq!(x["design"], label.split('@').next().unwrap_or_default());
        // Load and three run segments, at the same marks whatever the count.
        assert_eq!(s["segments"], 4, "{label}");
        let store = &s["stores"]["usertable"]["latency"];
        let threads = x["replay"]["threads"].as_u64().expect("threads");
        if threads == 1 {
            assert!(s.get("threads").is_none(), "{label}");
            assert!(
                store.get("commit_wait").is_none(),
                "{label}: nothing to wait for"
            );
            continue;
        }
        assert_eq!(threads, 3);
        assert_eq!(x["replay"]["split"], "partitioned");
        let per = s["threads"].as_array().expect("per thread");
        assert_eq!(per.len(), 3, "{label}");
        // The merged histograms are the threads' histograms added up.
        let sum = |f: &str| per.iter().map(|p| count(&p[f])).sum::<u64>();
        assert_eq!(sum("get"), count(&store["get"]), "{label}");
        assert_eq!(sum("commit"), count(&store["commit"]), "{label}");
        assert_eq!(
            per.iter()
                .map(|p| p["ops"].as_u64().unwrap_or(0))
                .sum::<u64>(),
            9000,
            "{label}: the threads did the one thread's work"
        );
        // Both engines take one writer at a time: the harness takes the turn
        // and times every wait, one per commit.
        assert_eq!(
            count(&store["commit_wait"]),
            count(&store["commit"]),
            "{label}"
        );
        assert_eq!(x["stores"][0]["writers"], "single");
    }
}

#[test]
fn a_trace_replays_split_by_key_hash_and_concurrent_writers_take_no_turn() {
    let t = tempfile::tempdir().expect("tempdir");
    let o = ledgerbench(
        &[
            "record",
            "ycsb",
            "--param",
            "records=2000",
            "--param",
            "operations=3000",
            "--param",
            "ops_per_segment=1000",
            "--out",
            "y.kvtrace",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = run(
        t.path(),
        &[
            "run",
            "replay",
            "y.kvtrace",
            "--threads",
            "4",
            "--backends",
            "null,mem",
            "--durability",
            "none",
        ],
    );
    for x in r["runs"].as_array().expect("runs") {
        let label = x["label"].as_str().unwrap_or_default();
        assert_eq!(x["replay"]["split"], "key-hash", "{label}");
        let s = &x["replay"]["summary"];
        assert_eq!(s["mismatches"], 0, "{label}");
        assert_eq!(s["threads"].as_array().map(Vec::len), Some(4));
        let wait = s["stores"]["usertable"]["latency"].get("commit_wait");
        match x["stores"][0]["writers"].as_str() {
            Some("concurrent") => assert!(wait.is_none(), "{label}: no turn taken"),
            _ => assert!(wait.is_some(), "{label}: the queue is timed"),
        }
    }
    let o = ledgerbench(&["run", "ycsb", "--threads", "0", "--out", "z"], t.path());
    assert!(!o.status.success());
    assert!(stderr(&o).contains("1 to 256"), "{}", stderr(&o));
    assert!(
        !t.path().join("z").exists(),
        "nothing created for a bad count"
    );
}

/// A small point-read sweep at 1 and 2 threads into `out`.
fn depth_sweep(dir: &std::path::Path, out: &str, extra: &[&str]) -> Value {
    let mut a = vec![
        "run",
        "point-reads",
        "--keys",
        "20000",
        "--reads",
        "2000",
        "--missing-reads",
        "100",
        "--threads",
        "1,2",
        "--backends",
        "lmdb",
        "--cache",
        "cold,warm",
        "--fio-secs",
        "1",
        "--out",
        out,
    ];
    a.extend(extra);
    let o = ledgerbench(&a, dir);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(summary.contains("GETs at queue depth"), "{summary}");
    read_json(&dir.join(out).join("results.json"))
}

/// Each measurement at each thread count, with its rate.
fn depths(r: &Value) -> Vec<u64> {
    let m = r["runs"][0]["measurements"]
        .as_array()
        .expect("measurements");
    for x in m {
        assert_eq!(x["cost"]["mismatches"], 0);
        assert!(x["cost"]["gets_per_sec"].as_f64() > Some(0.0));
    }
    m.iter()
        .filter_map(|x| x["cost"]["threads"].as_u64())
        .collect()
}

#[test]
fn point_reads_sweep_queue_depths_and_say_why_there_is_no_device_anchor() {
    let t = tempfile::tempdir().expect("tempdir");
    let r = depth_sweep(t.path(), "pr", &["--device", "none"]);
    // Two cache states, each at both depths, before compaction (LMDB has no
    // manual compaction, so there is no "after").
    assert_eq!(depths(&r), [1, 2, 1, 2]);
    let run = &r["runs"][0];
    assert!(run.get("fio").is_none());
    let note = run["fio_note"].as_str().expect("why no fio");
    assert!(note.contains("no private device"), "{note}");
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn point_reads_measure_the_device_with_fio_at_the_same_depths() {
    let here = ledgerbench_meter::cgroup::MemoryLimit::available().map_err(|e| e.to_string());
    let fio = if ledgerbench_meter::fio::available() {
        Ok(())
    } else {
        Err("fio is not installed".to_string())
    };
    if !ledgerbench_testkit::can_run(here.and(fio)) {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let r = depth_sweep(t.path(), "pr", &[]);
    assert_eq!(depths(&r), [1, 2, 1, 2]);
    let fio = r["runs"][0]["fio"].as_array().expect("fio figures");
    let at: Vec<u64> = fio.iter().filter_map(|f| f["threads"].as_u64()).collect();
    assert_eq!(at, [1, 2], "fio at the sweep's depths");
    assert!(fio.iter().all(|f| f["iops"].as_f64() > Some(0.0)));
    let cold = &r["runs"][0]["measurements"][0]["cost"];
    assert!(
        cold["device_reads_per_sec"].as_f64().is_some(),
        "a private device is metered"
    );
}

//! The watchdog as a user meets it: a backend whose put, flush or GET never
//! returns (planted with `LEDGERBENCH_PLANT_STALL`) is ended after
//! `--stall-timeout`, its run recorded with "no progress", and the next
//! backend still runs; nothing is left behind.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

mod common;
use common::{assert_no_devices_under, read_json, stderr};

/// `ledgerbench ARGS --stall-timeout 2s` in `cwd` with `stall` planted;
/// its output and how long it took.
fn stalled_run(stall: &str, args: &[&str], cwd: &Path) -> (Output, Duration) {
    let t = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
        .args(args)
        .args(["--stall-timeout", "2s", "--out", "w"])
        .env("LEDGERBENCH_PLANT_STALL", stall)
        .current_dir(cwd)
        .output()
        .expect("run ledgerbench");
    (o, t.elapsed())
}

/// Checks a run whose first backend (`mem`) stalled and whose second
/// (`second`) ran to the end; returns the stalled run's error.
fn check(o: &Output, took: Duration, dir: &Path, second: &str) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("no progress for"), "{err}");
    assert!(err.contains("going on with the remaining runs"), "{err}");
    // Two seconds of quiet, not a hang; the second backend's run is short.
    assert!(took < Duration::from_secs(120), "{took:?}: {err}");
    let r = read_json(&dir.join("w/results.json"));
    let runs = r["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2, "{r}");
    assert_eq!(runs[0]["label"], "mem");
    assert!(runs[0]["planted_stall"].is_string(), "{}", runs[0]);
    let error = runs[0]["error"].as_str().expect("error").to_string();
    assert!(error.contains("--stall-timeout: 2 s"), "{error}");
    assert_eq!(runs[1]["label"], second);
    assert!(runs[1].get("error").is_none(), "{}", runs[1]);
    assert!(!dir.join("w/.ledgerbench-heartbeat").exists());
    // The ended worker's unfinished stores, devices and mounts are gone.
    assert!(!dir.join("w/stores/mem").exists());
    assert!(!dir.join("w/devices/mem").exists());
    assert_no_devices_under(dir);
    error
}

fn stellar(stall: &str, dir: &Path) -> (Output, Duration) {
    stalled_run(
        stall,
        &[
            "run",
            "stellar",
            "--preset",
            "smoke",
            "--backends",
            "mem,lmdb",
        ],
        dir,
    )
}

#[test]
fn a_put_that_never_returns_is_ended_recorded_and_the_next_backend_runs() {
    let t = tempfile::tempdir().expect("tempdir");
    let (o, took) = stellar("put:mem", t.path());
    let error = check(&o, took, t.path(), "lmdb");
    // Stuck in the first batch's puts: no batch finished.
    assert!(error.contains("at: [mem] "), "{error}");
    assert!(!error.contains("after batch"), "{error}");
}

#[test]
fn a_flush_that_never_returns_is_ended_in_its_phase() {
    let t = tempfile::tempdir().expect("tempdir");
    let (o, took) = stellar("flush:mem", t.path());
    check(&o, took, t.path(), "lmdb");
    // The first flush ends the first batch: the stalled run has none.
    let r = read_json(&t.path().join("w/results.json"));
    assert_eq!(r["runs"][0]["batches"].as_array().map(Vec::len), Some(0));
}

#[test]
fn a_get_that_never_returns_is_ended_after_the_load() {
    let t = tempfile::tempdir().expect("tempdir");
    let args = [
        "run",
        "ycsb",
        "--param",
        "workload=c",
        "--param",
        "records=2000",
        "--param",
        "operations=2000",
        "--backends",
        "mem,redb",
    ];
    let (o, took) = stalled_run("get:mem", &args, t.path());
    let error = check(&o, took, t.path(), "redb");
    // The load's puts went through; the run phase's first GET stalled.
    assert!(error.contains("(load)"), "{error}");
    // YCSB checks every value it reads: there is no digest of unchecked
    // ones to compare engines by (absent, not a digest of nothing).
    let r = read_json(&t.path().join("w/results.json"));
    let summary = &r["runs"][1]["replay"]["summary"];
    assert_eq!(summary["gets_found"], 2000, "{summary}");
    assert!(summary.get("gets_digest").is_none(), "{summary}");
}

#[test]
fn a_healthy_run_under_the_watchdog_is_untouched() {
    let t = tempfile::tempdir().expect("tempdir");
    let o = Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
        .args(["run", "stellar", "--preset", "smoke", "--backends", "mem"])
        .args(["--stall-timeout", "30s", "--out", "w"])
        .current_dir(t.path())
        .output()
        .expect("run ledgerbench");
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&t.path().join("w/results.json"));
    assert!(r["runs"][0].get("error").is_none(), "{r}");
    assert!(!t.path().join("w/.ledgerbench-heartbeat").exists());
}

#[test]
fn a_checkpointed_run_the_watchdog_ends_is_over_and_its_kept_stores_go() {
    let t = tempfile::tempdir().expect("tempdir");
    let (o, took) = stalled_run(
        "flush:mem",
        &[
            "run",
            "stellar",
            "--preset",
            "smoke",
            "--checkpoint",
            "--backends",
            "mem,lmdb",
        ],
        t.path(),
    );
    check(&o, took, t.path(), "lmdb");
    // Ended for good, not stopped: nothing is kept for a resume.
    let dir = t.path().join("w");
    assert!(!dir.join(".ledgerbench-checkpoint").exists());
    assert!(!stderr(&o).contains("--resume"), "{}", stderr(&o));
    assert_no_devices_under(&dir);
    assert!(!dir.join("stores").exists() && !dir.join("devices").exists());
}

/// A load of keys before the first mark is one segment, however long; its
/// commits are progress. (A Cosmos run's MDBX loaded for over 882 s, ten
/// times the goleveldb load before it, and the watchdog ended it.) On
/// `null`, whose close and final scan take no time: the load alone
/// outlasts the timeout.
#[test]
fn a_load_longer_than_the_stall_timeout_is_progress_not_a_stall() {
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        t.path().join("load.toml"),
        "version = 1\n[[store]]\nname = \"s\"\ninitial_keys = 8000000\noperations = 1000\n\
         [store.mix]\noverwrite = 1.0\n[store.key_size]\nfixed = 32\n\
         [store.value_size]\nfixed = 8\n",
    )
    .expect("write");
    let o = Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
        .args([
            "run",
            "synth",
            "--workload",
            "load.toml",
            "--backends",
            "null",
        ])
        .args(["--durability", "none", "--device", "none"])
        .args(["--stall-timeout", "1s", "--out", "w"])
        .current_dir(t.path())
        .output()
        .expect("run ledgerbench");
    assert!(o.status.success(), "{}", stderr(&o));
    let first = std::fs::read_to_string(t.path().join("w/segments.jsonl")).expect("segments");
    let load: serde_json::Value =
        serde_json::from_str(first.lines().next().expect("a segment")).expect("json");
    assert_eq!(load["mark"], "load", "{load}");
    // What this test is about: the load outlasted the timeout.
    let secs = load["total_secs"].as_f64().expect("total_secs");
    assert!(
        secs > 2.0,
        "the load took {secs} s: make it longer than the 1 s timeout"
    );
}

/// A capacity search is a run of closes a second or more apart for many
/// minutes: each close (and each batch of a prefill) is progress, so a
/// search longer than the stall timeout is not ended as a stall.
#[test]
fn a_capacity_search_longer_than_the_stall_timeout_is_progress_not_a_stall() {
    let t = tempfile::tempdir().expect("tempdir");
    let took = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
        .args(["run", "capacity", "--backends", "null"])
        .args(["--close-interval", "700ms", "--intervals", "3"])
        .args(["--min-rate", "100", "--max-rate", "200", "--probes", "2"])
        .args(["--prefill", "64MiB", "--value-bytes", "100"])
        .args(["--durability", "none", "--device", "none"])
        .args(["--stall-timeout", "2s", "--out", "w"])
        .current_dir(t.path())
        .output()
        .expect("run ledgerbench");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("no progress"), "{}", stderr(&o));
    // What this test is about: the search outlasted the timeout.
    let secs = took.elapsed().as_secs_f64();
    assert!(
        secs > 4.0,
        "the search took {secs} s: make it longer than 2 s"
    );
}

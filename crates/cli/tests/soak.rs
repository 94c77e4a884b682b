//! `ledgerbench run soak`: a run bounded by time, a segment per interval
//! with its own latencies in `segments.jsonl` (not in memory, not in
//! results.json), and the drift verdict in the run's summary and in the
//! report, with a chart per metric.

use std::path::Path;

mod common;
use common::{assert_no_devices_under, ledgerbench, read_json, stderr, stdout, usable};

const BLOBS: &[&str] = &[
    "--param",
    "blobs_per_batch=4",
    "--param",
    "value_bytes=4096",
    "--param",
    "reads_per_batch=4",
    "--param",
    "ttl_batches=20",
];

/// A soak of the small blobs on `mem`, 3 s at 100 ms unless `extra` says.
fn soak(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "soak",
        "blobs",
        "--backends",
        "mem",
        "--device",
        "none",
    ];
    args.extend_from_slice(&["--out", "out"]);
    for (flag, default) in [("--duration", "3s"), ("--interval", "100ms")] {
        if !extra.contains(&flag) {
            args.extend_from_slice(&[flag, default]);
        }
    }
    args.extend_from_slice(BLOBS);
    args.extend_from_slice(extra);
    ledgerbench(&args, dir)
}

#[test]
fn a_soak_runs_for_its_duration_and_judges_each_metric() {
    let t = tempfile::tempdir().expect("tempdir");
    let o = soak(t.path(), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = t.path().join("out");
    let r = read_json(&out.join("results.json"));
    let soak = &r["config"]["soak"];
    assert_eq!(soak["duration_secs"], 3.0);
    assert_eq!(soak["interval_secs"], 0.1);
    assert_eq!(soak["warmup"], "auto");
    let run = &r["runs"][0];
    let replay = &run["replay"];
    // The segments are in segments.jsonl only; the totals hold all of them.
    assert_eq!(replay["segments"].as_array().map(Vec::len), Some(0));
    assert_eq!(replay["segments_file"], "segments.jsonl");
    let wall = replay["summary"]["wall_secs"].as_f64().expect("wall");
    assert!((3.0..6.0).contains(&wall), "ran {wall} s for a 3 s soak");
    let lines = std::fs::read_to_string(out.join("segments.jsonl")).expect("segments");
    let segs: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert!(
        segs.len() >= 15,
        "{} intervals of 100 ms in 3 s",
        segs.len()
    );
    assert_eq!(
        replay["summary"]["segments"].as_u64(),
        Some(segs.len() as u64)
    );
    // Every put and delete of the run is in one interval or another.
    let entries: u64 = segs
        .iter()
        .map(|s| s["stores"][0]["entries"].as_u64().expect("entries"))
        .sum();
    let n = |k: &str| replay["summary"][k].as_u64().expect("count");
    assert_eq!(entries, n("puts") + n("deletes"));
    for s in &segs {
        assert!(s["total_secs"].as_f64().expect("secs") >= 0.1, "{s}");
        assert!(
            s["stores"][0]["latency"]["commit"]["p99_us"].is_number(),
            "{s}"
        );
        assert!(s["memory"]["harness_heap_bytes"].is_number(), "{s}");
    }
    // No per-second samples: the intervals are the samples.
    assert!(
        run.get("ingest_samples")
            .is_none_or(|s| s.as_array().is_none_or(Vec::is_empty))
    );
    // The verdict, in the summary the run printed and in the report.
    let printed = stdout(&o) + &stderr(&o);
    assert!(printed.contains("## Drift over the soak: mem"), "{printed}");
    assert!(
        printed.contains("until the first expiry (TTL 20 batches)"),
        "{printed}"
    );
    assert!(
        printed.contains("| (process) | harness heap |"),
        "{printed}"
    );
    let rep = ledgerbench(&["report", "out", "--out", "rep"], t.path());
    assert!(rep.status.success(), "{}", stderr(&rep));
    let md = std::fs::read_to_string(t.path().join("rep/report.md")).expect("report");
    assert!(md.contains("## Soak: drift over time"), "{md}");
    // A 100 ms interval holds a few gets: too few for its p99.
    assert!(
        md.contains("blobs: get p99 (needs 1000 samples an interval; they held"),
        "{md}"
    );
    let first = md
        .find("Soak: blobs: write throughput")
        .expect("a chart per metric");
    let heap = md
        .find("Soak: harness heap")
        .expect("the harness's heap charted");
    assert!(
        first < heap,
        "the stores' panels first, the process's after"
    );
}

#[test]
fn a_soak_refuses_settings_it_cannot_keep() {
    let t = tempfile::tempdir().expect("tempdir");
    let cases: [(&[&str], &str); 5] = [
        (
            &["--duration", "soon"],
            "--duration soon: give a time above zero",
        ),
        (
            &["--interval", "0s"],
            "--interval 0s: give a time above zero",
        ),
        (&["--interval", "1h"], "is longer than --duration"),
        (
            &["--drift-threshold", "ten"],
            "--drift-threshold ten: give a share",
        ),
        (&["--threads", "2"], "a soak runs one client thread for now"),
    ];
    for (extra, want) in cases {
        let o = soak(t.path(), extra);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{extra:?}: {}", stderr(&o));
    }
    let o = soak(t.path(), &["--warmup", "later"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--warmup later: give `auto`"),
        "{}",
        stderr(&o)
    );
}

/// A guarded soak of 1 MiB blobs that never expire, paced, on `backends`;
/// `place` says where the stores are and under what limit.
fn outgrowing(dir: &Path, backends: &str, rate: &str, place: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "soak",
        "blobs",
        "--duration",
        "60s",
        "--interval",
        "100ms",
        "--out",
        "g",
    ];
    args.extend_from_slice(&["--backends", backends, "--op-rate", rate]);
    for p in [
        "value_bytes=1048576",
        "blobs_per_batch=4",
        "ttl_batches=100000",
        "reads_per_batch=1",
    ] {
        args.extend_from_slice(&["--param", p]);
    }
    args.extend_from_slice(place);
    ledgerbench(&args, dir)
}

/// The guarded run's error, its intervals kept, nothing left mounted.
fn stopped(o: &std::process::Output, dir: &Path) -> String {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    let r = read_json(&dir.join("g/results.json"));
    let run = &r["runs"][0];
    let wall = run["replay"]["summary"]["wall_secs"]
        .as_f64()
        .expect("kept");
    assert!(wall < 40.0, "stopped long before its 60 s: {wall}");
    let kept = std::fs::read_to_string(dir.join("g/segments.jsonl")).expect("kept");
    assert!(
        kept.lines().count() >= 3,
        "the intervals before the stop are kept"
    );
    assert_no_devices_under(dir);
    run["error"].as_str().expect("an error").to_string()
}

#[test]
fn a_soak_stops_before_its_device_fills() {
    if !usable() {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let o = outgrowing(t.path(), "mdbx", "40", &["--device-size", "64MiB"]);
    let why = stopped(&o, t.path());
    assert!(
        why.starts_with("stopped: store `blobs`'s disk would run out within 3 intervals"),
        "{why}"
    );
    assert!(why.contains("of its 64 MiB device"), "{why}");
    assert!(
        !why.contains("is full"),
        "stopped before, not at, the full disk: {why}"
    );
}

#[test]
fn a_soak_stops_before_its_memory_limit_kills_it() {
    if !usable() {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    // `mem` keeps every blob on its heap, and copies them all to flush.
    let place = ["--device", "none", "--memory-limit", "256MiB"];
    let o = outgrowing(t.path(), "mem", "200", &place);
    let why = stopped(&o, t.path());
    assert!(why.starts_with("stopped: memory would run out"), "{why}");
    assert!(why.contains("under its 256 MiB --memory-limit"), "{why}");
    assert!(
        !stderr(&o).contains("killed by its memory limit"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_soak_whose_engine_stops_making_progress_is_ended_and_the_next_runs() {
    let t = tempfile::tempdir().expect("tempdir");
    let mut args = vec![
        "run",
        "soak",
        "blobs",
        "--duration",
        "3s",
        "--interval",
        "100ms",
    ];
    args.extend_from_slice(&["--backends", "mem,lmdb", "--device", "none"]);
    args.extend_from_slice(&["--stall-timeout", "2s", "--out", "w"]);
    args.extend_from_slice(BLOBS);
    let secs = || {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        now.expect("clock").as_secs()
    };
    let launched = secs();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
        .args(&args)
        .env("LEDGERBENCH_PLANT_STALL", "get:mem")
        .current_dir(t.path())
        .output()
        .expect("run ledgerbench");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let r = read_json(&t.path().join("w/results.json"));
    let err = r["runs"][0]["error"]
        .as_str()
        .expect("the stalled run's error");
    assert!(err.contains("no progress for"), "{err}");
    assert_eq!(r["runs"][1]["label"], "lmdb");
    assert!(r["runs"][1].get("error").is_none(), "{}", r["runs"][1]);
    let wall = r["runs"][1]["replay"]["summary"]["wall_secs"].as_f64();
    assert!(
        wall.is_some_and(|w| w >= 3.0),
        "the next backend soaked its 3 s"
    );
    assert!(!t.path().join("w/stores/mem").exists());
    // The run began with its first worker, not with the one that went on
    // (at least the 2 s stall later): RFC 3339 in UTC sorts as it reads.
    let began = r["started_at"].as_str().expect("started_at");
    let latest = ledgerbench_driver::timefmt::rfc3339(launched + 1);
    assert!(began <= latest.as_str(), "{began} > {latest}");
}

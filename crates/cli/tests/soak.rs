//! `ledgerbench run soak`: a run bounded by time, a segment per interval
//! with its own latencies in `segments.jsonl` (not in memory, not in
//! results.json), and the drift verdict in the run's summary and in the
//! report, with a chart per metric.

use std::path::Path;

mod common;
use common::{ledgerbench, read_json, stderr, stdout};

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
    assert!(md.contains("| blobs | get p99 |"), "{md}");
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

//! Operation streams through the `ledgerbench` binary: recorded traces, real
//! ledgers and the generated workloads.

use std::path::Path;

mod common;
use common::{ledgerbench, read_json, segments, stderr};

#[test]
fn a_recorded_trace_replays_to_the_same_bytes_and_keys_as_the_direct_run() {
    let t = tempfile::tempdir().expect("tempdir");
    let shape = [
        "--ledgers",
        "12",
        "--batch-ledgers",
        "4",
        "--commit-ledgers",
        "2",
    ];
    let mut rec = vec![
        "record",
        "stellar",
        "--preset",
        "smoke",
        "--out",
        "s.kvtrace",
    ];
    rec.extend(shape);
    let o = ledgerbench(&rec, t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let backends = "lmdb,rocksdb-leveled";
    let replayed = replay(t.path(), backends);
    let mut direct = vec![
        "run",
        "stellar",
        "--preset",
        "smoke",
        "--backends",
        backends,
        "--device",
        "none",
        "--streaming-ledgers",
        "0",
        "--out",
        "d",
    ];
    direct.extend(shape);
    let o = ledgerbench(&direct, t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let (d, r) = (read_json(&t.path().join("d/results.json")), replayed);
    for (a, b) in d["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .zip(r["runs"].as_array().expect("runs"))
    {
        let rs = &b["replay"]["summary"];
        assert_eq!(rs["mismatches"], 0);
        assert_eq!(rs["segments"], 3, "one segment per batch");
        for store in ["ledgers", "txdata", "txindex"] {
            assert_eq!(
                a["summary"]["stores"][store]["logical_bytes"],
                rs["stores"][store]["logical_bytes"],
                "{store}"
            );
            let entries = |segs: &serde_json::Value| -> u64 {
                segs.as_array()
                    .expect("segments")
                    .iter()
                    .flat_map(|s| s["stores"].as_array().expect("stores").iter())
                    .filter(|s| s["store"] == store)
                    .map(|s| s["entries"].as_u64().expect("entries"))
                    .sum()
            };
            assert_eq!(
                entries(&a["batches"]),
                entries(&segments(&t.path().join("rp"), b)),
                "{store}"
            );
        }
    }
    // A cut-short trace ends the run with an error that gives the offset.
    let bytes = std::fs::read(t.path().join("s.kvtrace")).expect("trace");
    std::fs::write(t.path().join("cut.kvtrace"), &bytes[..bytes.len() / 2]).expect("write");
    let o = ledgerbench(
        &[
            "run",
            "replay",
            "cut.kvtrace",
            "--backends",
            "lmdb",
            "--device",
            "none",
            "--out",
            "c",
        ],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("offset"), "{}", stderr(&o));
}

#[test]
fn real_pubnet_ledgers_import_replay_and_calibrate() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/stellar-pubnet");
    assert!(
        data.is_dir(),
        "{} is missing from the clone",
        data.display()
    );
    let data = data.display().to_string();
    let t = tempfile::tempdir().expect("tempdir");
    let o = ledgerbench(
        &["import", "galexie", &data, "--out", "real.kvtrace"],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let stats: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stats JSON");
    assert_eq!(stats["ledgers"], 6);
    assert_eq!(stats["txs"], 586);
    // The range read, lowest to highest, whatever order the files came in
    // (the lake file sorts first by name, with the highest ledger).
    assert_eq!(stats["first"], 6_154_623);
    assert_eq!(stats["last"], 53_312_000);
    let err = stderr(&o);
    assert!(err.contains("(6154623..=53312000)"), "{err}");
    assert!(err.contains("out of order"), "{err}");
    let o = ledgerbench(
        &[
            "run",
            "replay",
            "real.kvtrace",
            "--backends",
            "lmdb,rocksdb-leveled",
            "--device",
            "none",
            "--out",
            "rp",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&t.path().join("rp/results.json"));
    assert_eq!(r["workload"], "replay:galexie");
    for run in r["runs"].as_array().expect("runs") {
        let s = &run["replay"]["summary"];
        assert_eq!(s["puts"], 6 + 2 * 586, "{}", run["label"]);
        assert_eq!(s["mismatches"], 0);
        assert_eq!(s["segments"], 6);
    }
    let o = ledgerbench(
        &["calibrate", "stellar", &data, "--synthetic-ledgers", "20"],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("| transactions per ledger max | 212 |"),
        "{out}"
    );
    // Nothing there to import: a clear error.
    let o = ledgerbench(&["import", "galexie", ".", "--out", "x.kvtrace"], t.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no ledger files"), "{}", stderr(&o));
}

#[test]
fn generated_workloads_run_on_every_engine_kind_and_check_their_reads() {
    let t = tempfile::tempdir().expect("tempdir");
    let runs: [(&str, &[&str]); 4] = [
        (
            "ycsb",
            &[
                "workload=\"f\"",
                "records=2000",
                "operations=2000",
                "ops_per_segment=1000",
            ],
        ),
        (
            "solana",
            &["slots=20", "keep_slots=5", "slots_per_segment=10"],
        ),
        (
            "blobs",
            &["batches=6", "ttl_batches=2", "value_bytes=65536"],
        ),
        (
            "accounts",
            &[
                "accounts=1000",
                "operations=3000",
                "ops_per_block=100",
                "blocks_per_segment=10",
            ],
        ),
    ];
    for (w, params) in runs {
        let r = generated(t.path(), w, "mem,lmdb,rocksdb-leveled", params);
        assert_eq!(r["workload"], w);
        // Every segment was also saved as it finished, labelled with its run.
        let jsonl = std::fs::read_to_string(t.path().join(w).join("segments.jsonl"))
            .expect("segments.jsonl");
        let saved: Vec<serde_json::Value> = jsonl
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        // And only there: the results file holds none and names the file.
        for run in r["runs"].as_array().expect("runs") {
            assert_eq!(run["replay"]["segments"], serde_json::json!([]));
            assert_eq!(run["replay"]["segments_file"], "segments.jsonl");
            let mine = saved.iter().filter(|l| l["label"] == run["label"]).count();
            assert_eq!(run["replay"]["summary"]["segments"], mine, "{w}");
        }
        for run in r["runs"].as_array().expect("runs") {
            let s = &run["replay"]["summary"];
            assert_eq!(s["mismatches"], 0, "{w} {}", run["label"]);
            assert!(s["gets"].as_u64().expect("gets") > 0, "{w}");
            assert!(
                s["stores"]
                    .as_object()
                    .expect("stores")
                    .values()
                    .all(|st| st.get("live_bytes").is_some())
            );
        }
    }
    // Concurrent account workers on one store: every read still finds its account.
    let o = ledgerbench(
        &[
            "run",
            "accounts",
            "--workers",
            "3",
            "--backends",
            "mem,lmdb",
            "--device",
            "none",
            "--param",
            "accounts=3000",
            "--param",
            "operations=6000",
            "--param",
            "ops_per_block=100",
            "--out",
            "aw",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&t.path().join("aw/results.json"));
    for run in r["runs"].as_array().expect("runs") {
        assert_eq!(
            run["replay"]["summary"]["mismatches"], 0,
            "{}",
            run["label"]
        );
        // The genesis mark and every segment's mark are barriers.
        assert!(run["replay"]["summary"]["segments"].as_u64() > Some(1));
        assert_eq!(run["replay"]["threads"], 3);
        assert_eq!(run["replay"]["split"], "partitioned");
        let per = run["replay"]["summary"]["threads"]
            .as_array()
            .expect("threads");
        assert_eq!(per.len(), 3);
    }
    let o = ledgerbench(
        &["run", "ycsb", "--param", "workload=\"z\"", "--out", "z"],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("a, b, c, d, e, f"), "{}", stderr(&o));
}

/// Every generated workload and a trace replay on `backends`.
fn every_workload_runs_on(backends: &str) {
    let t = tempfile::tempdir().expect("tempdir");
    let o = ledgerbench(
        &[
            "record",
            "stellar",
            "--preset",
            "smoke",
            "--ledgers",
            "8",
            "--out",
            "s.kvtrace",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = replay(t.path(), backends);
    for run in r["runs"].as_array().expect("runs") {
        assert_eq!(
            run["replay"]["summary"]["mismatches"], 0,
            "{}",
            run["label"]
        );
    }
    let runs: [(&str, &[&str]); 4] = [
        (
            "ycsb",
            &["workload=\"a\"", "records=1000", "operations=1000"],
        ),
        (
            "solana",
            &["slots=10", "keep_slots=4", "slots_per_segment=5"],
        ),
        (
            "blobs",
            &["batches=4", "ttl_batches=2", "value_bytes=16384"],
        ),
        (
            "accounts",
            &["accounts=500", "operations=1000", "ops_per_block=100"],
        ),
    ];
    for (w, params) in runs {
        let r = generated(t.path(), w, backends, params);
        let runs = r["runs"].as_array().expect("runs");
        assert_eq!(runs.len(), backends.split(',').count(), "{w}");
        for run in runs {
            let s = &run["replay"]["summary"];
            assert_eq!(s["mismatches"], 0, "{w} {}", run["label"]);
            assert!(s["gets"].as_u64().expect("gets") > 0, "{w}");
        }
    }
}

#[test]
fn every_generated_workload_and_a_trace_run_on_the_pure_rust_engines() {
    every_workload_runs_on("redb,fjall");
}

ledgerbench_gokv::needs_go! {
    #[test]
    fn every_generated_workload_and_a_trace_run_on_the_go_engines() {
        every_workload_runs_on("pebble,goleveldb,badger,bbolt");
    }
}

ledgerbench_gokv::needs_go! {
    #[test]
    fn a_go_engine_runs_in_process_with_its_cpu_memory_and_version_in_the_results() {
        let t = tempfile::tempdir().expect("tempdir");
        let o = ledgerbench(
            &["run", "stellar", "--preset", "smoke", "--device", "none", "--backends", "pebble,go-null-sidecar", "--durability", "none", "--out", "s"],
            t.path(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let r = read_json(&t.path().join("s/results.json"));
        assert_eq!(r["env"]["engine_versions"]["pebble"], "1.1.5", "{}", r["env"]);
        let runs = r["runs"].as_array().expect("runs");
        let pebble = runs.iter().find(|x| x["label"] == "pebble").expect("pebble's run");
        // Each store records which path it took.
        assert_eq!(pebble["stores"][0]["config"]["bridge"], "in-process", "{pebble}");
        assert_eq!(pebble["stores"][0]["engine_version"], "1.1.5", "{pebble}");
        // The engine's work is this process's now: its CPU and its Go heap
        // are in the process meters and the engine's counters.
        assert!(pebble["usage"]["user_secs"].as_f64().expect("user CPU") > 0.0, "{pebble}");
        let store = &pebble["batches"][0]["stores"][1];
        assert!(store["engine"]["extra"]["go_heap_bytes"].as_u64().expect("Go heap") > 0, "{store}");
        assert!(store["engine"]["extra"].get("sidecar_rtt_ns").is_none(), "{store}");
        let side = runs.iter().find(|x| x["label"] == "go-null-sidecar").expect("the sidecar's run");
        assert_eq!(side["stores"][0]["config"]["bridge"], "sidecar", "{side}");
        let store = &side["batches"][0]["stores"][1];
        assert!(store["engine"]["extra"]["sidecar_rtt_ns"].as_u64().expect("socket cost") > 0, "{store}");
    }
}

/// Replays `s.kvtrace` in `dir` on `backends` into `rp/`; its results.
fn replay(dir: &std::path::Path, backends: &str) -> serde_json::Value {
    let o = ledgerbench(
        &[
            "run",
            "replay",
            "s.kvtrace",
            "--backends",
            backends,
            "--device",
            "none",
            "--out",
            "rp",
        ],
        dir,
    );
    assert!(o.status.success(), "replay: {}", stderr(&o));
    read_json(&dir.join("rp/results.json"))
}

/// `ledgerbench run WORKLOAD` with `--param`s on `backends` into `WORKLOAD/` in
/// `dir`; its results.
fn generated(dir: &std::path::Path, w: &str, backends: &str, params: &[&str]) -> serde_json::Value {
    let mut a = vec![
        "run",
        w,
        "--backends",
        backends,
        "--device",
        "none",
        "--out",
        w,
    ];
    for p in params {
        a.extend(["--param", p]);
    }
    let o = ledgerbench(&a, dir);
    assert!(o.status.success(), "{w}: {}", stderr(&o));
    read_json(&dir.join(w).join("results.json"))
}

#[test]
fn the_solana_contrast_preset_runs_leveled_with_range_purges_beside_fifo() {
    let t = tempfile::tempdir().expect("tempdir");
    // The preset's shape at a test's size: its backends, 8 threads and
    // retention follow from the preset.
    let o = ledgerbench(
        &[
            "run",
            "solana",
            "--preset",
            "contrast",
            "--param",
            "slots=60",
            "--param",
            "keep_slots=20",
            "--param",
            "purge_every=5",
            "--param",
            "slots_per_segment=10",
            "--param",
            "data_shreds=8",
            "--param",
            "coding_shreds=8",
            "--memory-limit",
            "none",
            "--device",
            "none",
            "--out",
            "c",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&t.path().join("c/results.json"));
    assert_eq!(r["preset"], "contrast");
    let runs = r["runs"].as_array().expect("runs");
    let labels: Vec<&str> = runs
        .iter()
        .map(|r| r["label"].as_str().expect("label"))
        .collect();
    assert_eq!(labels, ["rocksdb-leveled@8t", "rocksdb-fifo@8t"]);
    for run in runs {
        let s = &run["replay"]["summary"];
        assert_eq!(s["mismatches"], 0, "{}", run["label"]);
        assert_eq!(run["stores"][0]["range_delete"], "native");
    }
    // Leveled purges by range; FIFO's cap expires slots, nothing is deleted.
    assert!(
        runs[0]["replay"]["summary"]["range_deletes"]
            .as_u64()
            .expect("ranges")
            > 0
    );
    assert!(runs[1]["replay"]["summary"].get("range_deletes").is_none());
    assert_eq!(runs[1]["replay"]["summary"]["deletes"], 0);

    let o = ledgerbench(
        &["run", "ycsb", "--preset", "contrast", "--out", "y"],
        t.path(),
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("not a preset of ycsb"),
        "{}",
        stderr(&o)
    );
    assert!(!t.path().join("y").exists());
}

#[test]
fn fifo_holds_the_blobs_alive_whatever_their_time_to_live() {
    // 2,000 batches of 8 MiB live: 15.6 GiB, far past FIFO's 1 GiB default,
    // which would expire blobs still to be read. Two batches are enough to
    // see the cap the run gave the store.
    let t = tempfile::tempdir().expect("tempdir");
    let r = generated(
        t.path(),
        "blobs",
        "rocksdb-fifo",
        &["batches=2", "ttl_batches=2000"],
    );
    let cap = &r["runs"][0]["stores"][0]["config"]["compaction"]["max_table_files_size"];
    assert_eq!(cap.as_u64(), Some(((2000u64 * 8) << 20) * 9 / 8), "{cap}");
}

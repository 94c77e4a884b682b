//! RocksDB query traces through the binary: db_bench 7.8's traces (an
//! independent RocksDB build, `fixtures/rocksdb-trace/`, made by
//! `scripts/rocksdb-trace-fixtures.sh`) imported and replayed on every
//! engine of `ledgerbench list`; each engine must end holding exactly what
//! db_bench's database held (its `ldb scan --hex` dump), and every engine's
//! gets must find the same keys.

use std::path::{Path, PathBuf};

mod common;
use common::{ledgerbench, read_json, stderr, stdout};
use sha2::Digest;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/rocksdb-trace")
}

/// The trace files, in the order db_bench wrote them.
fn traces() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(fixtures())
        .expect("fixtures/rocksdb-trace")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "trace"))
        .map(|p| p.display().to_string())
        .collect();
    v.sort();
    v
}

fn unhex(s: &str) -> Vec<u8> {
    let s = s.trim().trim_start_matches("0x");
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}

/// Entries and the content digest the harness computes (each key and value
/// after its u32 length, in key order) of db_bench's final database.
fn expected() -> (u64, String) {
    let dump = std::fs::read_to_string(fixtures().join("final.scan")).expect("final.scan");
    let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = dump
        .lines()
        .filter_map(|l| l.split_once(" : "))
        .map(|(k, v)| (unhex(k), unhex(v)))
        .collect();
    pairs.sort();
    let mut h = sha2::Sha256::new();
    for (k, v) in &pairs {
        for part in [k, v] {
            h.update((part.len() as u32).to_le_bytes());
            h.update(part);
        }
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    (pairs.len() as u64, hex)
}

/// `run replay TRACE` on `backends` (durability none, no devices) into
/// `r/`, its results.
fn replay(cwd: &Path, trace: &str, backends: &str) -> serde_json::Value {
    let args = [
        "run",
        "replay",
        trace,
        "--backends",
        backends,
        "--durability",
        "none",
        "--device",
        "none",
        "--out",
        "r",
    ];
    let o = ledgerbench(&args, cwd);
    assert!(o.status.success(), "{}", stderr(&o));
    read_json(&cwd.join("r/results.json"))
}

fn engines(cwd: &Path) -> String {
    let o = ledgerbench(&["list", "--json"], cwd);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("list --json");
    let refs = v["discard_writes"]
        .as_array()
        .expect("discard_writes")
        .clone();
    let all: Vec<&str> = v["backends"]
        .as_array()
        .expect("backends")
        .iter()
        .filter(|b| !refs.contains(b))
        .filter_map(|b| b.as_str())
        .collect();
    assert!(all.len() >= 15, "{all:?}");
    all.join(",")
}

#[test]
fn db_bench_traces_replay_to_db_bench_content_on_every_engine() {
    let t = tempfile::tempdir().expect("tempdir");
    let mut args = vec!["import", "rocksdb-trace"];
    let files = traces();
    assert_eq!(files.len(), 6, "{files:?}");
    args.extend(files.iter().map(String::as_str));
    args.extend(["--scan-length", "10", "--out", "db.kvtrace"]);
    let o = ledgerbench(&args, t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("summary JSON");
    let s = &summary["summary"];
    assert_eq!(s["rocksdb_version"], "7.8", "{s}");
    // Operations count what a store is asked to do; the recorded times apart.
    let n = |k: &str| s[k].as_u64().unwrap_or(0);
    let asked = n("puts") + n("deletes") + n("gets") + n("seeks") + n("writes");
    assert!(
        summary["recorded_times"].as_u64().is_some_and(|t| t > 0),
        "{summary}"
    );
    assert!(
        summary["operations"]
            .as_u64()
            .is_some_and(|o| o >= asked && o < asked + 100),
        "{summary}"
    );
    for kind in ["puts", "deletes", "gets", "seeks"] {
        assert!(s[kind].as_u64().unwrap_or(0) > 0, "no {kind}: {s}");
    }
    let backends = engines(t.path());
    let r = replay(t.path(), "db.kvtrace", &backends);
    let (entries, digest) = expected();
    let runs = r["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), backends.split(',').count());
    let found = &runs[0]["replay"]["summary"]["gets_found"];
    assert!(found.as_u64().is_some_and(|n| n > 0), "{found}");
    for run in runs {
        let name = &run["label"];
        let x = &run["replay"]["summary"];
        let st = &x["stores"]["default"];
        assert_eq!(st["final_entries"], entries, "{name}");
        assert_eq!(
            st["content_sha256"],
            digest.as_str(),
            "{name}: content differs from db_bench's"
        );
        assert_eq!(&x["gets_found"], found, "{name}");
        // Every engine's gets returned the same values (mem's, a BTreeMap's, among them).
        assert_eq!(
            x["gets_digest"], runs[0]["replay"]["summary"]["gets_digest"],
            "{name}"
        );
        assert_eq!(
            x["scanned"], runs[0]["replay"]["summary"]["scanned"],
            "{name}"
        );
    }
    // The options are in the results, through the trace's header.
    assert_eq!(
        r["config"]["header"]["source"]["options"]["scan_length"],
        10
    );
}

#[test]
fn a_refused_or_damaged_trace_leaves_no_output() {
    let t = tempfile::tempdir().expect("tempdir");
    let files = traces();
    // Seeks without --scan-length: refused, with the flag to give.
    let seek = files
        .iter()
        .find(|f| f.contains("seekrandom"))
        .expect("seekrandom trace");
    let o = ledgerbench(
        &["import", "rocksdb-trace", seek, "--out", "a.kvtrace"],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--scan-length"), "{}", stderr(&o));
    assert!(!t.path().join("a.kvtrace").exists());
    // Cut inside its last record: the offset is named, nothing is written.
    let bytes = std::fs::read(&files[0]).expect("trace");
    std::fs::write(t.path().join("cut.trace"), &bytes[..bytes.len() - 20]).expect("cut");
    let o = ledgerbench(
        &["import", "rocksdb-trace", "cut.trace", "--out", "b.kvtrace"],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("byte offset"), "{}", stderr(&o));
    assert!(!t.path().join("b.kvtrace").exists());
    // Galexie's options are not a RocksDB trace's.
    let o = ledgerbench(
        &[
            "import",
            "rocksdb-trace",
            &files[0],
            "--batch-ledgers",
            "4",
            "--out",
            "c.kvtrace",
        ],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!t.path().join("c.kvtrace").exists());
}

#[test]
fn a_run_traced_by_rocksdb_itself_replays_to_the_same_stores() {
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
    let traces = t.path().join("rt");
    let set = format!("rocksdb-leveled.trace_dir=\"{}\"", traces.display());
    let quiet = ["--durability", "none", "--device", "none"];
    let mut args = vec![
        "run",
        "replay",
        "s.kvtrace",
        "--backends",
        "rocksdb-leveled",
        "--set",
        &set,
        "--out",
        "a",
    ];
    args.extend(quiet);
    let o = ledgerbench(&args, t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let original = read_json(&t.path().join("a/results.json"));
    let stores = &original["runs"][0]["replay"]["summary"]["stores"];
    for store in ["ledgers", "txdata", "txindex"] {
        let file = traces.join(format!("{store}.trace"));
        let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(bytes.len() > 100, "{store}: {} bytes", bytes.len());
        let cf = format!("0={store}");
        let out = format!("{store}.kvtrace");
        // The run's final scan (its content digest) is traced as one Seek.
        let o = ledgerbench(
            &[
                "import",
                "rocksdb-trace",
                file.to_str().expect("utf8"),
                "--cf",
                &cf,
                "--scan-length",
                "1",
                "--out",
                &out,
            ],
            t.path(),
        );
        assert!(o.status.success(), "{store}: {}", stderr(&o));
        let summary: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("summary JSON");
        assert!(
            summary["summary"]["rocksdb_version"]
                .as_str()
                .is_some_and(|v| v.starts_with("11.")),
            "{summary}"
        );
        let dir = format!("r-{store}");
        let mut args = vec!["run", "replay", &out, "--backends", "lmdb", "--out", &dir];
        args.extend(quiet);
        let o = ledgerbench(&args, t.path());
        assert!(o.status.success(), "{store}: {}", stderr(&o));
        let r = read_json(&t.path().join(&dir).join("results.json"));
        let got = &r["runs"][0]["replay"]["summary"]["stores"][store];
        assert_eq!(
            got["final_entries"], stores[store]["final_entries"],
            "{store}"
        );
        assert_eq!(
            got["content_sha256"], stores[store]["content_sha256"],
            "{store}"
        );
        assert!(got["content_sha256"].is_string(), "{store}: {got}");
    }
}

#[test]
fn hashed_keys_and_dropped_values_keep_the_shape_and_hide_the_content() {
    let t = tempfile::tempdir().expect("tempdir");
    let files = traces();
    let mut args = vec!["import", "rocksdb-trace"];
    args.extend(files.iter().map(String::as_str));
    args.extend([
        "--scan-length",
        "10",
        "--hash-keys",
        "--drop-values",
        "--out",
        "p.kvtrace",
    ]);
    let o = ledgerbench(&args, t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("summary JSON");
    assert_eq!(
        summary["options"]["privacy"]["hash_keys"], true,
        "{summary}"
    );
    assert!(!stdout(&o).contains("secret"), "the secret is kept nowhere");
    // No key or value of db_bench's database appears in the shared trace.
    let shared = std::fs::read(t.path().join("p.kvtrace")).expect("trace");
    let dump = std::fs::read_to_string(fixtures().join("final.scan")).expect("final.scan");
    for (k, v) in dump.lines().filter_map(|l| l.split_once(" : ")).take(50) {
        for part in [unhex(k), unhex(v)] {
            assert!(
                !shared.windows(part.len()).any(|w| w == part.as_slice()),
                "{k} leaked"
            );
        }
    }
    let r = replay(t.path(), "p.kvtrace", "mem,lmdb,rocksdb-leveled");
    let runs = r["runs"].as_array().expect("runs");
    let (entries, digest) = expected();
    for run in runs {
        let st = &run["replay"]["summary"]["stores"]["default"];
        // The same number of keys as db_bench left; other bytes.
        assert_eq!(st["final_entries"], entries);
        assert_ne!(st["content_sha256"], digest.as_str());
        assert_eq!(
            st["content_sha256"],
            runs[0]["replay"]["summary"]["stores"]["default"]["content_sha256"]
        );
    }
}

#[test]
fn gets_find_what_db_bench_found() {
    // db_bench's own count of readrandom's found keys, from its output.
    let said = std::fs::read_to_string(fixtures().join("db_bench.txt")).expect("db_bench.txt");
    let line = said
        .lines()
        .find(|l| l.starts_with("readrandom"))
        .expect("readrandom line");
    let found: u64 = line
        .split('(')
        .nth(1)
        .and_then(|s| s.split(" of ").next())
        .and_then(|n| n.trim().parse().ok())
        .expect("(N of M found)");
    let t = tempfile::tempdir().expect("tempdir");
    // Up to readrandom: the first gets of the stream are its.
    let files: Vec<String> = traces().into_iter().take(4).collect();
    assert!(files[3].ends_with("4-readrandom.trace"), "{files:?}");
    let mut args = vec!["import", "rocksdb-trace"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--out", "four.kvtrace"]);
    let o = ledgerbench(&args, t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let r = replay(
        t.path(),
        "four.kvtrace",
        "lmdb,rocksdb-leveled,pebble,fjall",
    );
    for run in r["runs"].as_array().expect("runs") {
        assert_eq!(
            run["replay"]["summary"]["gets_found"], found,
            "{}: db_bench found {found}",
            run["label"]
        );
    }
}

#[test]
fn a_replay_at_the_recorded_pace_records_its_speed_and_refuses_a_speed_of_nothing() {
    let t = tempfile::tempdir().expect("tempdir");
    let files = traces();
    let o = ledgerbench(
        &["import", "rocksdb-trace", &files[0], "--out", "f.kvtrace"],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let base = [
        "run",
        "replay",
        "f.kvtrace",
        "--backends",
        "lmdb",
        "--durability",
        "none",
        "--device",
        "none",
    ];
    let mut args = base.to_vec();
    args.extend(["--speed", "0", "--out", "z"]);
    let o = ledgerbench(&args, t.path());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--speed 0"), "{}", stderr(&o));
    let mut args = base.to_vec();
    args.extend(["--speed", "2", "--out", "p"]);
    let o = ledgerbench(&args, t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&t.path().join("p/results.json"));
    assert_eq!(r["config"]["speed"], 2.0);
    // db_bench's fill took tens of milliseconds: at half its pace, at least its span.
    let recorded = r["config"]["header"]["source"]["rocksdb_trace"]["micros"]
        .as_f64()
        .expect("micros");
    let wall = r["runs"][0]["replay"]["summary"]["wall_secs"]
        .as_f64()
        .expect("wall");
    assert!(
        wall >= recorded / 1e6 / 2.0,
        "{wall} s for {recorded} µs recorded"
    );
}

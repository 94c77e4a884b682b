//! What the verdict is built from: sweeps over memory limits, the batch
//! time budget, the harness's bounded and measured heap, and the report's
//! verdict section.

mod common;
use common::{ledgerbench, read_json, smoke_run, stderr};

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn a_sweep_runs_each_backend_at_each_limit_and_the_report_renders_the_verdict() {
    if !ledgerbench_testkit::can_run(ledgerbench_meter::cgroup::MemoryLimit::available()) {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let o = smoke_run(
        &[
            "--backends",
            "lmdb",
            "--device",
            "none",
            "--sweep-limits",
            "256MiB,512MiB",
            "--streaming-ledgers",
            "0",
            "--out",
            "s",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&t.path().join("s/results.json"));
    let runs = r["runs"].as_array().expect("runs");
    let labels: Vec<&str> = runs
        .iter()
        .map(|x| x["label"].as_str().expect("label"))
        .collect();
    // Largest limit first: the data/memory ratio grows run by run.
    assert_eq!(labels, ["lmdb@512MiB", "lmdb@256MiB"]);
    for (run, limit) in runs.iter().zip([512u64 << 20, 256 << 20]) {
        assert_eq!(run["memory_limit_bytes"], limit);
        // Fields the verdict reads, not a label it parses: the design both
        // limits share, and what the registry says each store can do.
        assert_eq!(run["design"], "lmdb");
        for s in run["stores"].as_array().expect("stores") {
            assert_eq!(s["evicts_oldest"], false, "{s}");
            assert_eq!(s["read_path"], "mmap", "{s}");
        }
        // The harness's own budget is added to the cgroup, not taken from the engine.
        assert_eq!(run["harness_allowance_bytes"], 64u64 << 20);
        let peak = run["memory_peak_bytes"].as_u64().expect("peak");
        assert!(peak <= limit + (64 << 20), "{peak}");
        for b in run["batches"].as_array().expect("batches") {
            let m = &b["memory"];
            let heap = m["harness_heap_peak_bytes"].as_u64().expect("heap counted");
            assert!(heap > 0 && heap <= 64 << 20, "harness heap {heap}");
            assert!(m["rss_anon_bytes"].as_u64().expect("anon") > 0);
            assert!(m["cgroup_page_cache_bytes"].as_u64().is_some(), "{m}");
        }
    }
    let o = ledgerbench(&["report", "s", "--out", "rep"], t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(t.path().join("rep/report.md")).expect("report");
    assert!(
        md.contains("## Verdict: ingestion once data outgrows memory"),
        "{md}"
    );
    for store in ["### ledgers", "### txdata", "### txindex"] {
        assert!(md.contains(store), "{store} missing");
    }
    assert!(md.contains("| lmdb@256MiB |") && md.contains("harness heap peak MiB"));
    assert!(md.contains("Batch cost against data / memory: txdata"));
    assert!(md.contains("device reads / KiB per GET") && md.contains("compaction debt at end"));
    // One recommendation per config, fitted over both limits, not one per run.
    assert!(
        md.contains("**Recommended for `txdata`: `lmdb`**")
            && md.contains("fitted over its 2 memory limits"),
        "{md}"
    );
}

#[test]
fn a_batch_over_the_time_budget_stops_ingestion_as_a_finding() {
    let t = tempfile::tempdir().expect("tempdir");
    let o = smoke_run(
        &[
            "--backends",
            "mem",
            "--device",
            "none",
            "--max-batch-secs",
            "0.000001",
            "--out",
            "b",
        ],
        t.path(),
    );
    // Falling off a cliff is what the run measured, not a failure.
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&t.path().join("b/results.json"));
    let run = &r["runs"][0];
    assert!(run.get("error").is_none(), "{run}");
    let why = run["stopped_early"].as_str().expect("stopped early");
    assert!(
        why.contains("batch 1 of 4") && why.contains("--max-batch-secs"),
        "{why}"
    );
    assert_eq!(run["batches"].as_array().expect("batches").len(), 1);
    // What was ingested is still verified and looked up.
    assert_eq!(run["streaming"]["mismatches"], 0);
    let summary = std::fs::read_to_string(t.path().join("b/summary.md")).expect("summary");
    assert!(summary.contains("stopped early (a finding)"), "{summary}");
}

#[test]
fn a_commit_too_large_for_the_harness_budget_is_refused_before_anything_is_made() {
    let t = tempfile::tempdir().expect("tempdir");
    // 32 MiB is ledgerbench's fixed overhead alone: no commit size fits, so
    // the advice is a larger budget, not a smaller commit. With room for
    // some ledgers, the advice names the largest commit.
    for (budget, says) in [
        (
            "32MiB",
            ["raise --harness-budget to at least", "harness budget"],
        ),
        ("64MiB", ["use --commit-ledgers", "or less"]),
    ] {
        let o = smoke_run(
            &[
                "--backends",
                "mem",
                "--batch-ledgers",
                "400",
                "--commit-ledgers",
                "400",
                "--harness-budget",
                budget,
                "--out",
                "c",
            ],
            t.path(),
        );
        assert_eq!(o.status.code(), Some(2));
        let err = stderr(&o);
        assert!(
            err.contains(&format!(
                "harness budget of {}",
                budget.replace("MiB", " MiB")
            )),
            "{err}"
        );
        assert!(says.iter().all(|w| err.contains(w)), "{err}");
        assert!(
            !err.contains("--commit-ledgers 0 or less")
                && !err.contains("--commit-ledgers 1 or less"),
            "{err}"
        );
        assert!(!t.path().join("c").exists(), "nothing is created");
    }
}

#[test]
fn verification_lookups_are_metered_per_store() {
    let on_loop = ledgerbench_meter::loopdev::LoopFs::available().is_ok();
    let t = tempfile::tempdir().expect("tempdir");
    let device = if on_loop { "loop" } else { "none" };
    let o = smoke_run(
        &[
            "--backends",
            "rocksdb-leveled",
            "--device",
            device,
            "--streaming-ledgers",
            "0",
            "--out",
            "s",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&t.path().join("s/results.json"));
    let reads = &r["runs"][0]["lookup_reads"];
    let txs = reads["txs"].as_u64().expect("txs");
    assert!(txs > 0, "{reads}");
    let stores = reads["stores"].as_array().expect("stores");
    let names: Vec<&str> = stores
        .iter()
        .map(|s| s["store"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["ledgers", "txdata", "txindex"]);
    // Each transaction is one txdata GET and one txindex GET, then its
    // ledger; txdata also gets the never-written hash.
    let gets: Vec<u64> = stores
        .iter()
        .map(|s| s["gets"].as_u64().expect("gets"))
        .collect();
    assert_eq!(gets, [txs, txs + 1, txs]);
    for s in stores {
        assert!(s["block_cache_misses"].as_u64().is_some(), "{s}");
        assert!(s["compaction_read_bytes"].as_u64().is_some(), "{s}");
        // Absent without a private device, never 0 in its place.
        assert_eq!(s["device_reads"].as_u64().is_some(), on_loop, "{s}");
    }
}

#[test]
fn the_durability_summary_tables_every_crash_cell_from_committed_results() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results");
    let dir = root.join("crash-fs-2026-11-24");
    let o = ledgerbench(
        &[
            "report",
            "rocksdb-mem-lmdb",
            "pebble-goleveldb",
            "--summary",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("| engine | level | kill | power-cut | lose | reorder | torn |"),
        "{out}"
    );
    // Counted again from the cycles: the cell the published README reads.
    assert!(
        out.contains("| rocksdb-leveled | power | held: 0 of 411 lost |"),
        "{out}"
    );
    let goleveldb = out
        .lines()
        .find(|l| l.starts_with("| goleveldb | power |"))
        .unwrap_or_else(|| panic!("no goleveldb row: {out}"));
    // Held under kill -9, broken under the four power-loss kinds.
    assert_eq!(goleveldb.matches("**broken**").count(), 4, "{goleveldb}");
    assert!(goleveldb.contains("8 of 20 opens failed"), "{goleveldb}");
    assert!(out.contains("seed 42"), "{out}");

    // A cell stopped early is no verdict; run again in a later file, the
    // later run is the one shown, and the only one counted.
    let o = ledgerbench(&["report", "mdbx-redb-fjall", "--summary"], &dir);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("| pebble | power | stopped after 1 cycles: 0 of 15 lost | not run |"),
        "{out}"
    );
    let o = ledgerbench(
        &["report", "mdbx-redb-fjall", "pebble-goleveldb", "--summary"],
        &dir,
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("| pebble | power | held: 0 of 302 lost |"),
        "{out}"
    );
    assert!(out.starts_with("25 cells; cycles per cell: 20;"), "{out}");

    // Crash and benchmark results have no summary in common.
    let o = ledgerbench(
        &[
            "report",
            "rocksdb-mem-lmdb",
            "../capacity-2026-11-24/txdata-5s",
            "--summary",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not both at once"), "{}", stderr(&o));
}

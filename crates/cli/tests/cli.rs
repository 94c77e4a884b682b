//! The `ledgerbench` binary as a user meets it: Stellar and point-read runs,
//! outputs, comparisons and bad input.

use std::path::Path;
use std::process::Command;

mod common;
use common::{ledgerbench, read_json, smoke_run, stderr, stdout};

#[test]
fn smoke_run_on_every_backend_writes_results() {
    let t = tempfile::tempdir().expect("tempdir");
    let o = smoke_run(
        &[
            "--backends",
            "rocksdb-leveled,rocksdb-fifo,rocksdb-universal,lmdb,mdbx,mem",
            "--out",
            "out",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = t.path().join("out");
    let results: serde_json::Value = read_json(&out.join("results.json"));
    assert_eq!(results["schema_version"], 1);
    assert_eq!(results["seed"], 42);
    assert!(
        results["env"]["rustc"]
            .as_str()
            .expect("rustc")
            .starts_with("rustc")
    );
    let runs = results["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 6);
    for r in runs {
        assert!(r.get("error").is_none(), "{r}");
        assert_eq!(r["summary"]["ledgers"], 40);
        assert_eq!(r["streaming"]["mismatches"], 0);
    }
    let lines = std::fs::read_to_string(out.join("batches.jsonl")).expect("jsonl");
    assert_eq!(lines.lines().count(), 6 * 4, "one line per batch per run");
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(
        summary.contains("| rocksdb-leveled |") && summary.contains("| mdbx |"),
        "{summary}"
    );
    // Stores (and their private devices) are removed after each run; results stay.
    let mut left = Vec::new();
    let mut stack = vec![out.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                left.push(
                    p.strip_prefix(&out)
                        .expect("below out")
                        .display()
                        .to_string(),
                );
            }
        }
    }
    left.sort();
    assert_eq!(
        left,
        [
            "LEDGERBENCH_RUN",
            "batches.jsonl",
            "results.json",
            "summary.md"
        ]
    );
}

#[test]
fn hybrid_run_puts_each_store_on_its_engine() {
    let t = tempfile::tempdir().expect("tempdir");
    let o = smoke_run(
        &[
            "--store",
            "ledgers=rocksdb-leveled",
            "--store",
            "txdata=mdbx",
            "--store",
            "txindex=lmdb",
            "--out",
            "h",
            "--keep-stores",
            "--device",
            "none",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let stores = t
        .path()
        .join("h/stores/ledgers_rocksdb-leveled_txdata_mdbx_txindex_lmdb");
    let marker = |s: &str| {
        std::fs::read_to_string(stores.join(s).join("LEDGERBENCH_STORE")).expect("marker")
    };
    assert_eq!(marker("ledgers").trim(), "rocksdb");
    assert_eq!(marker("txdata").trim(), "mdbx");
    assert_eq!(marker("txindex").trim(), "lmdb");
}

#[test]
fn bad_names_are_refused_with_what_is_accepted() {
    let t = tempfile::tempdir().expect("tempdir");
    for (args, want) in [
        (vec!["--backends", "rocksdb"], "accepted: rocksdb-leveled"),
        (vec!["--preset", "huge"], "possible values: smoke, quick"),
        (
            vec!["--store", "blocks=lmdb"],
            "accepted: ledgers, txdata, txindex",
        ),
        (vec!["--store", "txdata=lmdb"], "missing: ledgers, txindex"),
        (
            vec!["--compaction", "sometimes"],
            "possible values: manual, background, none",
        ),
        (vec!["--engine-memory", "lots"], "not a size"),
    ] {
        let mut a = vec!["run", "stellar"];
        a.extend(args.iter());
        let o = ledgerbench(&a, t.path());
        assert_eq!(o.status.code(), Some(2), "{a:?}");
        assert!(stderr(&o).contains(want), "{a:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
    assert!(
        !t.path().join("ledgerbench-runs").exists(),
        "nothing written on bad input"
    );
}

#[test]
fn a_foreign_output_directory_is_refused_and_untouched() {
    let t = tempfile::tempdir().expect("tempdir");
    let dir = t.path().join("mine");
    std::fs::create_dir(&dir).expect("mkdir");
    std::fs::write(dir.join("notes.txt"), "keep").expect("write");
    let o = smoke_run(&["--backend", "mem", "--out", "mine"], t.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&dir).expect("read").count(), 1);
}

#[test]
fn run_file_sets_values_and_refuses_typos() {
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        t.path().join("run.toml"),
        "preset = \"smoke\"\nbackends = [\"mem\"]\n[workload]\nledgers = 12\nbatch_ledgers = 4\n[workload.streaming]\nledgers = 0\n",
    )
    .expect("write");
    let o = ledgerbench(
        &[
            "run", "stellar", "--config", "run.toml", "--seed", "9", "--out", "r",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = read_json(&t.path().join("r/results.json"));
    assert_eq!(r["seed"], 9, "flags override the file");
    assert_eq!(r["runs"][0]["summary"]["batches"], 3);
    assert!(r["runs"][0].get("streaming").is_none());

    std::fs::write(t.path().join("typo.toml"), "[workload]\nledgerz = 12\n").expect("write");
    let o = ledgerbench(&["run", "stellar", "--config", "typo.toml"], t.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("ledgerz"), "{}", stderr(&o));
}

#[test]
fn point_reads_measure_every_backend_and_verify_values() {
    let t = tempfile::tempdir().expect("tempdir");
    let o = ledgerbench(
        &[
            "run",
            "point-reads",
            "--keys",
            "20000",
            "--reads",
            "500",
            "--missing-reads",
            "100",
            "--backends",
            "rocksdb-leveled,lmdb",
            "--engine-memory",
            "16MiB",
            "--out",
            "p",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = read_json(&t.path().join("p/results.json"));
    let runs = r["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    // Stores on private devices are made cold by a remount of theirs, not
    // by dropping the machine's cache.
    if ledgerbench_meter::loopdev::LoopFs::available().is_ok() {
        let err = stderr(&o);
        assert!(!err.contains("whole machine's page cache"), "{err}");
        assert!(
            err.contains("remounting the stores' private devices"),
            "{err}"
        );
    }
    // Both engines' versions, where the report's engines column reads them.
    let versions = r["env"]["engine_versions"].as_object().map(|m| m.len());
    assert_eq!(versions, Some(2), "{}", r["env"]);
    // Every measurement was also saved as a line the moment it was made.
    let lines = std::fs::read_to_string(t.path().join("p/measurements.jsonl")).expect("jsonl");
    let measured: usize = runs
        .iter()
        .map(|r| r["measurements"].as_array().expect("measurements").len())
        .sum();
    assert_eq!(lines.lines().count(), measured);
    for run in runs {
        let meter = run["device_meter"].as_str().expect("meter");
        let has_device = meter.starts_with("private ext4 loop device");
        assert!(has_device || meter.starts_with("absent"), "{meter}");
        let ms = run["measurements"].as_array().expect("measurements");
        for m in ms {
            let c = &m["cost"];
            assert_eq!(c["mismatches"], 0, "{m}");
            assert_eq!(c["reads"], 500);
            // Device figures are present exactly when a private device was used.
            assert_eq!(c.get("device_reads_per_get").is_some(), has_device, "{m}");
        }
        let get = |phase: &str, cache: &str| {
            ms.iter()
                .find(|m| m["phase"] == phase && m["cache"] == cache)
                .map(|m| m["cost"]["device_reads_per_get"].as_f64())
        };
        // Warm and cold are measured everywhere: a store's own cache is
        // emptied without root (its files') or by a remount (its device).
        assert!(get("before-compaction", "warm").is_some(), "{run}");
        assert!(get("before-compaction", "cold").is_some(), "{run}");
        if has_device {
            let cold = get("before-compaction", "cold").flatten().expect("cold");
            let warm = get("before-compaction", "warm").flatten().expect("warm");
            // 20k keys fit in memory: a warm GET reads nothing, a cold one does.
            assert!(cold > 0.5 && warm < 0.05, "cold {cold} warm {warm}");
        }
    }
    let phases = |i: usize| {
        runs[i]["measurements"]
            .as_array()
            .expect("measurements")
            .iter()
            .any(|m| m["phase"] == "after-compaction")
    };
    assert!(phases(0), "RocksDB is measured after a full compaction");
    assert!(!phases(1), "LMDB has no compaction");
    let mounts = std::fs::read_to_string("/proc/self/mounts").expect("mounts");
    assert!(
        !mounts.contains(&*t.path().to_string_lossy()),
        "loop mounts are removed: {mounts}"
    );
    assert!(
        !t.path().join("p/devices/lmdb/points").exists(),
        "mount points are removed"
    );
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn a_full_disk_ends_the_run_with_a_clear_error_and_keeps_results() {
    use ledgerbench_meter::loopdev::LoopFs;
    if !ledgerbench_testkit::can_run(LoopFs::available()) {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let fs = LoopFs::create(
        &t.path().join("img"),
        &t.path().join("mnt"),
        200 << 20,
        Some(128),
    )
    .expect("loop fs");
    let out = fs.path().join("run");
    let o = ledgerbench(
        &[
            "run",
            "stellar",
            "--preset",
            "quick",
            "--backends",
            "lmdb,rocksdb-leveled",
            "--streaming-ledgers",
            "0",
            // The estimate would refuse to start: this is where it fills.
            "--no-disk-check",
            "--out",
            out.to_str().expect("utf8"),
        ],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("bytes free"), "{}", stderr(&o));
    let r: serde_json::Value = read_json(&out.join("results.json"));
    for run in r["runs"].as_array().expect("runs") {
        assert!(
            run["error"]
                .as_str()
                .expect("error recorded")
                .contains("free"),
            "{run}"
        );
        assert!(
            !run["batches"].as_array().expect("batches").is_empty(),
            "finished batches are kept"
        );
    }
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn memory_limited_runs_record_their_limit_and_leave_no_cgroup() {
    if !ledgerbench_testkit::can_run(ledgerbench_meter::cgroup::MemoryLimit::available()) {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let child = Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
        .args([
            "run",
            "stellar",
            "--preset",
            "smoke",
            "--backends",
            "lmdb",
            "--memory-limit",
            "512MiB",
            "--out",
            "m",
        ])
        .current_dir(t.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run ledgerbench");
    let pid = child.id();
    let o = child.wait_with_output().expect("wait");
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&t.path().join("m/results.json"));
    let run = &r["runs"][0];
    assert_eq!(run["memory_limit_bytes"], 512u64 << 20);
    let peak = run["memory_peak_bytes"].as_u64().expect("peak measured");
    assert!(peak > 0 && peak <= 512 << 20, "{peak}");
    // Only this run's cgroup: other ledgerbench runs on the machine may hold theirs.
    let left = Path::new("/sys/fs/cgroup/memory").join(format!("ledgerbench-{pid}"));
    assert!(!left.exists(), "cgroup left behind: {}", left.display());
}

#[test]
fn a_failing_backend_does_not_stop_the_point_reads_of_the_others() {
    let t = tempfile::tempdir().expect("tempdir");
    let o = ledgerbench(
        &[
            "run",
            "point-reads",
            "--keys",
            "20000",
            "--reads",
            "200",
            "--missing-reads",
            "50",
            "--backends",
            "lmdb,mem",
            "--set",
            "lmdb.map_size=1048576",
            "--out",
            "p",
        ],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("map_size"), "{}", stderr(&o));
    let r: serde_json::Value = read_json(&t.path().join("p/results.json"));
    let runs = r["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2, "the second backend still ran");
    assert!(
        runs[0]["error"]
            .as_str()
            .expect("error")
            .contains("map_size")
    );
    assert!(
        runs[0].get("load_secs").is_none(),
        "a failed load has no time"
    );
    assert!(runs[1].get("error").is_none(), "{}", runs[1]);
    assert!(!runs[1]["measurements"].as_array().expect("m").is_empty());
}

#[test]
fn export_takes_every_format_of_the_report_through_one_path() {
    let t = tempfile::tempdir().expect("tempdir");
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/results/stellar-smoke"
    );
    // One document: printed.
    let o = ledgerbench(&["export", "summary", fixture], t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("## Ingestion"), "{}", stdout(&o));
    // Several: only into a directory, and said so otherwise.
    let o = ledgerbench(&["export", "csv", fixture], t.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("give --out DIR"), "{}", stderr(&o));
    let o = ledgerbench(&["export", "markdown", fixture, "--out", "md"], t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(t.path().join("md/report.md").is_file());
    assert!(t.path().join("md/batches.csv").is_file());
}

#[test]
fn comparing_results_with_themselves_says_it_compares_nothing() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/results/stellar-smoke");
    let f = fixture.to_str().expect("utf8");
    let t = tempfile::tempdir().expect("tempdir");
    let same = ledgerbench(&["compare", "--baseline", f, "--current", f], t.path());
    assert_eq!(same.status.code(), Some(0), "{}", stderr(&same));
    assert!(
        stdout(&same).contains("same results files"),
        "{}",
        stdout(&same)
    );
    assert!(
        stderr(&same).contains("compares nothing"),
        "{}",
        stderr(&same)
    );
    // A copy is another file: compared as such, without the note.
    std::fs::copy(fixture.join("results.json"), t.path().join("copy.json")).expect("copy");
    let copy = ledgerbench(
        &["compare", "--baseline", f, "--current", "copy.json"],
        t.path(),
    );
    assert_eq!(copy.status.code(), Some(0), "{}", stderr(&copy));
    assert!(
        !stdout(&copy).contains("same results files"),
        "{}",
        stdout(&copy)
    );
}

#[test]
fn a_cold_cache_is_the_stores_own_and_said_once() {
    let t = tempfile::tempdir().expect("tempdir");
    // Cold reads empty the stores' cache before each backend's pass: their
    // own files' (in the run directory), said once; the machine's is kept.
    let o = ledgerbench(
        &[
            "run",
            "point-reads",
            "--keys",
            "2000",
            "--backends",
            "mem,lmdb",
            "--device",
            "none",
            "--out",
            "pr",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let said = err
        .matches("emptying the page cache of the run's own files")
        .count();
    assert_eq!(said, 1, "{err}");
    assert!(!err.contains("whole machine's page cache"), "{err}");
}

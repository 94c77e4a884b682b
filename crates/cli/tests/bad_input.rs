//! The cases of the bad-input review, each as a user met it: outputs that
//! must not be overwritten, runs that must not share files, flags that must
//! be refused or said right.

use std::path::Path;

mod common;
use common::{ledgerbench, read_json, smoke_run, stderr, stdout};

fn smoke_results() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/results/stellar-smoke")
        .display()
        .to_string()
}

#[test]
fn report_export_and_compare_never_overwrite_unless_told() {
    let t = tempfile::tempdir().expect("tempdir");
    let res = smoke_results();
    std::fs::create_dir(t.path().join("rep")).expect("mkdir");
    std::fs::write(t.path().join("rep/report.md"), "mine").expect("write");
    let o = ledgerbench(&["report", &res, "--out", "rep"], t.path());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--overwrite"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(t.path().join("rep/report.md")).expect("kept"),
        "mine"
    );
    let o = ledgerbench(&["report", &res, "--out", "rep", "--overwrite"], t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(
        std::fs::read_to_string(t.path().join("rep/report.md")).expect("new"),
        "mine"
    );

    for (args, file) in [
        (
            vec!["export", "bencher", &res, "--out", "mine.json"],
            "mine.json",
        ),
        (
            vec![
                "compare",
                "--baseline",
                &res,
                "--current",
                &res,
                "--json",
                "mine.json",
            ],
            "mine.json",
        ),
    ] {
        std::fs::write(t.path().join(file), "mine").expect("write");
        let o = ledgerbench(&args, t.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("--overwrite"), "{}", stderr(&o));
        assert_eq!(
            std::fs::read_to_string(t.path().join(file)).expect("kept"),
            "mine"
        );
        let mut forced = args.clone();
        forced.push("--overwrite");
        let o = ledgerbench(&forced, t.path());
        assert!(o.status.success(), "{forced:?}: {}", stderr(&o));
        assert_ne!(
            std::fs::read_to_string(t.path().join(file)).expect("new"),
            "mine"
        );
        // No file left aside by the atomic write.
        assert!(!t.path().join("mine.json.tmp").exists());
    }
}

#[test]
fn exporting_an_interrupted_run_says_there_is_nothing_instead_of_writing_braces() {
    let t = tempfile::tempdir().expect("tempdir");
    let mut j = read_json(&Path::new(&smoke_results()).join("results.json"));
    for run in j["runs"].as_array_mut().expect("runs") {
        let run = run.as_object_mut().expect("run");
        for k in ["summary", "streaming", "phases", "lookup_reads"] {
            run.remove(k);
        }
        run.insert(
            "error".into(),
            "the run was interrupted by SIGINT (Ctrl-C)".into(),
        );
    }
    std::fs::write(
        t.path().join("r.json"),
        serde_json::to_vec(&j).expect("json"),
    )
    .expect("write");
    let o = ledgerbench(
        &["export", "bencher", "r.json", "--out", "b.json"],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("warning: nothing exported for") && err.contains("SIGINT"),
        "{err}"
    );
    assert!(err.contains("nothing to export"), "{err}");
    assert!(!t.path().join("b.json").exists());
    // Its report counts what the finished batches ingested, not `n/a`.
    let o = ledgerbench(&["report", "r.json", "--out", "rep"], t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(t.path().join("rep/report.md")).expect("report");
    assert!(md.contains("40 (in 4 finished batches)"), "{md}");
}

#[test]
fn compare_of_different_backend_sets_is_not_an_engine_version_change() {
    let t = tempfile::tempdir().expect("tempdir");
    let mut j = read_json(&Path::new(&smoke_results()).join("results.json"));
    let versions = j["env"]["engine_versions"]
        .as_object()
        .expect("versions")
        .clone();
    assert!(versions.len() > 1, "the fixture runs several engines");
    // The current side ran one engine of the baseline's, at the same version.
    let (engine, version) = versions.iter().next().expect("one");
    j["env"]["engine_versions"] = serde_json::json!({ engine: version });
    std::fs::write(
        t.path().join("one.json"),
        serde_json::to_vec(&j).expect("json"),
    )
    .expect("write");
    let res = smoke_results();
    let o = ledgerbench(
        &["compare", "--baseline", &res, "--current", "one.json"],
        t.path(),
    );
    assert!(!stderr(&o).contains("engine version"), "{}", stderr(&o));
    // A real version change is still refused.
    j["env"]["engine_versions"] = serde_json::json!({ engine: "0.0.1-other" });
    std::fs::write(
        t.path().join("other.json"),
        serde_json::to_vec(&j).expect("json"),
    )
    .expect("write");
    let o = ledgerbench(
        &["compare", "--baseline", &res, "--current", "other.json"],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(&format!("engine version of {engine}")),
        "{}",
        stderr(&o)
    );
    // Integers print whole; verdicts and classes as the flags spell them.
    let o = ledgerbench(
        &["compare", "--baseline", &res, "--current", &res],
        t.path(),
    );
    let out = stdout(&o);
    assert!(!out.contains("e7 |") && !out.contains("e8 |"), "{out}");
    assert!(
        out.contains("| counter |") && !out.contains("NotJudged") && !out.contains("| Counter |"),
        "{out}"
    );
}

#[test]
fn a_results_file_with_a_wrong_type_names_the_line() {
    let t = tempfile::tempdir().expect("tempdir");
    let text =
        std::fs::read_to_string(Path::new(&smoke_results()).join("results.json")).expect("read");
    let broken = text.replacen("\"seed\": 42", "\"seed\": \"forty-two\"", 1);
    assert_ne!(broken, text, "the fixture has a seed field");
    std::fs::write(t.path().join("r.json"), broken).expect("write");
    let o = ledgerbench(&["report", "r.json", "--out", "rep"], t.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("line "), "{}", stderr(&o));
}

#[test]
fn record_names_every_workload_and_refuses_flags_it_would_ignore() {
    let t = tempfile::tempdir().expect("tempdir");
    let o = ledgerbench(&["record", "nosuch", "--out", "x.kvtrace"], t.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("stellar, ycsb"), "{}", stderr(&o));
    for args in [
        vec!["record", "ycsb", "--preset", "smoke", "--out", "x.kvtrace"],
        vec![
            "record",
            "stellar",
            "--sweep-limits",
            "256MiB",
            "--out",
            "x.kvtrace",
        ],
        vec![
            "record",
            "stellar",
            "--max-batch-secs",
            "5",
            "--out",
            "x.kvtrace",
        ],
        vec!["record", "solana", "--ledgers", "5", "--out", "x.kvtrace"],
    ] {
        let o = ledgerbench(&args, t.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let flag = args[2];
        assert!(stderr(&o).contains(flag), "{args:?}: {}", stderr(&o));
        assert!(!t.path().join("x.kvtrace").exists());
    }
}

#[test]
fn list_names_every_workload_and_lists_strategies_as_a_list() {
    let t = tempfile::tempdir().expect("tempdir");
    let out = stdout(&ledgerbench(&["list"], t.path()));
    for w in ["stellar", "point-reads", "replay", "crash", "ycsb"] {
        assert!(out.contains(w), "{w} missing: {out}");
    }
    // How each backend is reached: the Go engines are linked in; only the
    // sidecar's own null goes through a socket.
    let line = |name: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} not listed: {out}"))
            .to_string()
    };
    for go in ["pebble", "goleveldb", "badger", "bbolt", "go-null"] {
        assert!(line(go).contains("in process"), "{}", line(go));
    }
    assert!(line("go-null-sidecar").contains("through the sidecar"));
    assert!(
        line("lmdb").contains("in process, default"),
        "{}",
        line("lmdb")
    );
    let j: serde_json::Value =
        serde_json::from_slice(&ledgerbench(&["list", "--json"], t.path()).stdout).expect("json");
    assert_eq!(
        j["compaction_strategies"],
        serde_json::json!(["manual", "background", "none"])
    );
    assert!(
        j["workloads"]
            .as_array()
            .expect("list")
            .contains(&"crash".into())
    );
}

#[test]
fn stellar_flags_are_checked_before_anything_runs() {
    let t = tempfile::tempdir().expect("tempdir");
    for (args, says) in [
        (
            vec!["--ledgers", "18446744073700000000"],
            "--streaming-ledgers",
        ),
        (vec!["--arrival", "poisson"], "--lookup-rate"),
        (
            vec!["--harness-budget", "1", "--commit-ledgers", "1"],
            "raise --harness-budget",
        ),
        (
            vec!["--set", "lmdb.no_such_key=1", "--backends", "lmdb"],
            "no_such_key",
        ),
        (
            vec![
                "--set",
                "rocksdb-leveled.use_direct_reads=true",
                "--backends",
                "lmdb",
            ],
            "not in this run",
        ),
        (vec!["--engine-memory", "lots"], "--engine-memory"),
        // A limit the process itself outgrows is refused, not run to its
        // kill (root or not: the size is checked before cgroups are).
        (vec!["--memory-limit", "0"], "give at least 4MiB"),
        (vec!["--memory-limit", "1KiB"], "give at least 4MiB"),
    ] {
        let mut all = args.clone();
        all.extend(["--out", "o", "--device", "none"]);
        let o = smoke_run(&all, t.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("1 or less"), "{}", stderr(&o));
        assert!(
            !t.path().join("o").exists(),
            "{args:?} left its run directory"
        );
    }
    // A bad value in a run file names the file and the key.
    std::fs::write(t.path().join("run.toml"), "engine_memory = \"lots\"\n").expect("write");
    let o = smoke_run(&["--config", "run.toml", "--out", "o"], t.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("run file run.toml: engine_memory: `lots` is not a size"),
        "{}",
        stderr(&o)
    );
    let help = stdout(&ledgerbench(&["run", "stellar", "--help"], t.path()));
    assert!(
        help.contains("--set") && help.contains("outgrow-memory"),
        "{help}"
    );
    let help = stdout(&ledgerbench(&["run", "ycsb", "--help"], t.path()));
    assert!(
        help.contains("--threads") && !help.contains("\\\""),
        "{help}"
    );
}

#[test]
fn forced_runs_into_a_used_directory_get_their_own_and_never_collide() {
    let t = tempfile::tempdir().expect("tempdir");
    let quick = [
        "--backends",
        "null",
        "--durability",
        "none",
        "--device",
        "none",
    ];
    let mut first: Vec<&str> = quick.to_vec();
    first.extend(["--out", "out"]);
    let o = smoke_run(&first, t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    // The summary is the report's own tables: the per-batch one shows the
    // first, middle and last batch and says where every batch is.
    let summary = std::fs::read_to_string(t.path().join("out/summary.md")).expect("summary");
    assert!(
        summary.contains("## Per batch (first, middle, last)")
            && summary.contains("Every batch is in the run's `batches.jsonl`")
            && ["| null | 1 |", "| null | 3 |", "| null | 4 |"]
                .iter()
                .all(|row| summary.contains(row)),
        "{summary}"
    );
    let original = std::fs::read(t.path().join("out/results.json")).expect("results");
    let batches = std::fs::read(t.path().join("out/batches.jsonl")).expect("batches");
    // Two forced runs at once: each its own subdirectory, both complete.
    let mut forced: Vec<&str> = quick.to_vec();
    forced.extend(["--out", "out", "--force"]);
    let spawn = || {
        let mut all = vec!["run", "stellar", "--preset", "smoke"];
        all.extend(forced.iter());
        std::process::Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
            .args(&all)
            .current_dir(t.path())
            .output()
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(spawn);
        let b = s.spawn(spawn);
        (
            a.join().expect("a").expect("run a"),
            b.join().expect("b").expect("run b"),
        )
    });
    assert!(
        a.status.success() && b.status.success(),
        "{}\n{}",
        stderr(&a),
        stderr(&b)
    );
    assert_eq!(
        std::fs::read(t.path().join("out/results.json")).expect("kept"),
        original
    );
    assert_eq!(
        std::fs::read(t.path().join("out/batches.jsonl")).expect("kept"),
        batches
    );
    let subdirs: Vec<_> = std::fs::read_dir(t.path().join("out"))
        .expect("ls")
        .flatten()
        .filter(|e| e.path().join("results.json").is_file())
        .collect();
    assert_eq!(subdirs.len(), 2, "one directory per forced run");
    for d in subdirs {
        let r = read_json(&d.path().join("results.json"));
        assert_eq!(r["runs"].as_array().expect("runs").len(), 1);
    }
    // No empty store folders are left by finished runs.
    assert!(!t.path().join("out/stores").exists());
}

#[test]
fn an_interrupted_recording_leaves_nothing_and_says_so() {
    let t = tempfile::tempdir().expect("tempdir");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
        .args([
            "record",
            "stellar",
            "--ledgers",
            "200000",
            "--out",
            "x.kvtrace",
        ])
        .current_dir(t.path())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // Interrupted once the partial trace holds something.
    let partial = || {
        std::fs::read_dir(t.path()).expect("ls").flatten().any(|e| {
            e.file_name().to_string_lossy().contains(".partial-")
                && e.metadata().is_ok_and(|m| m.len() > 0)
        })
    };
    for _ in 0..600 {
        if partial() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(partial(), "no partial trace appeared");
    // SAFETY: kill has no memory preconditions; the pid is our child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("interrupted by SIGINT") && err.contains("partial trace was removed"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(t.path())
        .expect("ls")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    // The retry is not blocked by anything.
    let o = ledgerbench(
        &["record", "stellar", "--ledgers", "5", "--out", "x.kvtrace"],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

/// An engine memory under an engine's own minimums runs, saying which
/// engine raised what and the smallest budget it keeps as given.
#[test]
fn an_engine_memory_under_an_engine_s_floor_is_said_and_run() {
    let t = tempfile::tempdir().expect("tempdir");
    let o = ledgerbench(
        &[
            "run",
            "point-reads",
            "--keys",
            "1000",
            "--reads",
            "100",
            "--missing-reads",
            "10",
            "--backends",
            "rocksdb-leveled,lmdb",
            "--engine-memory",
            "1MiB",
            "--device",
            "none",
            "--out",
            "p",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(
            "[rocksdb-leveled] engine memory 1 MiB is under its smallest budget of 32 MiB"
        ),
        "{err}"
    );
    // LMDB keeps no budget of its own: nothing to say.
    assert!(!err.contains("[lmdb] engine memory"), "{err}");
}

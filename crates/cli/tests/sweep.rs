//! A sweep planned into cells, the cells run as separate processes in
//! parallel (`xargs -P2`, as a scheduler would), merged by `report`: the
//! same runs, counters and verdict as the single-process sweep.

use std::path::Path;

mod common;
use common::{
    SWEEP, cell_dirs, concatenated, counters_match, ledgerbench, read_json, stderr, stdout,
};

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn cells_run_apart_and_merged_are_the_single_process_sweep() {
    let here = ledgerbench_meter::cgroup::MemoryLimit::available().map_err(|e| e.to_string());
    if !ledgerbench_testkit::can_run(here) {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let mut plan = vec!["plan", "--dir", "plan"];
    plan.extend_from_slice(SWEEP);
    let p = ledgerbench(&plan, t.path());
    assert!(p.status.success(), "{}", stderr(&p));
    let matrix = read_json(&t.path().join("plan/matrix.json"));
    assert_eq!(matrix["jobs"], 4, "2 backends x 2 limits");
    let bin = env!("CARGO_BIN_EXE_ledgerbench");
    let xargs = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ls plan/jobs/*.json | xargs -P2 -I{{}} '{bin}' run --job {{}} --out-dir cells"
        ))
        .current_dir(t.path())
        .output()
        .expect("xargs");
    assert!(xargs.status.success(), "{}", stderr(&xargs));
    let mut single = SWEEP.to_vec();
    single.extend_from_slice(&["--out", "single"]);
    let s = ledgerbench(&single, t.path());
    assert!(s.status.success(), "{}", stderr(&s));

    let cells = cell_dirs(&t.path().join("cells"));
    assert_eq!(cells.len(), 4);
    let cell_args: Vec<String> = cells.iter().map(|c| c.display().to_string()).collect();
    let cell_refs: Vec<&str> = cell_args.iter().map(String::as_str).collect();

    // The same runs: labels, limits and repeats, in the same order.
    let runs = |r: &serde_json::Value| -> Vec<(String, u64, u64)> {
        r["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .map(|x| {
                (
                    x["label"].as_str().expect("label").to_string(),
                    x["memory_limit_bytes"].as_u64().expect("limit"),
                    x["repeat"].as_u64().unwrap_or(0),
                )
            })
            .collect()
    };
    concatenated(&cells, &t.path().join("joined"));
    let joined = read_json(&t.path().join("joined/results.json"));
    assert_eq!(
        runs(&joined),
        runs(&read_json(&t.path().join("single/results.json")))
    );
    assert_eq!(joined["seed"], 42);

    // The same counters.
    let c = counters_match(t.path(), "single", &cell_refs);
    let same: u64 = stdout(&c)
        .split(" same,")
        .next()
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("a count of metrics that are the same");
    assert!(same > 300, "{}", stdout(&c));

    // The same verdict: merging the cells reads them as one sweep's file.
    let mut merged = vec!["report", "--summary"];
    merged.extend_from_slice(&cell_refs);
    let m = ledgerbench(&merged, t.path());
    assert!(m.status.success(), "{}", stderr(&m));
    assert!(
        stderr(&m).contains("4 of its 4 jobs merged"),
        "{}",
        stderr(&m)
    );
    let one = ledgerbench(&["report", "--summary", "joined"], t.path());
    assert_eq!(stdout(&m), stdout(&one));
    assert!(stdout(&m).contains("From 4 runs"), "{}", stdout(&m));

    // Labels stay the sweep's, not the cells' directories.
    let mut report = vec!["report", "--out", "rep"];
    report.extend_from_slice(&cell_refs);
    assert!(ledgerbench(&report, t.path()).status.success());
    let md = std::fs::read_to_string(t.path().join("rep/report.md")).expect("report");
    assert!(md.contains("| mdbx@256MiB |"), "{md}");
    assert!(!md.contains("/mdbx@256MiB |"), "{md}");

    // A cell given twice is refused, not counted twice.
    let twice = ledgerbench(
        &["report", "--summary", &cell_args[0], &cell_args[0]],
        t.path(),
    );
    assert_eq!(twice.status.code(), Some(2));
    assert!(stderr(&twice).contains("given twice"), "{}", stderr(&twice));
}

#[test]
fn a_verdict_over_different_hardware_is_refused_unless_asked_for() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/results/stellar-smoke");
    let t = tempfile::tempdir().expect("tempdir");
    let mut j = read_json(&root.join("results.json"));
    j["runs"][0]["memory_limit_bytes"] = serde_json::json!(256u64 << 20);
    std::fs::write(
        t.path().join("a.json"),
        serde_json::to_vec(&j).expect("json"),
    )
    .expect("a");
    j["env"]["cores"] = serde_json::json!(64);
    j["env"]["host"] = serde_json::json!("big");
    std::fs::write(
        t.path().join("b.json"),
        serde_json::to_vec(&j).expect("json"),
    )
    .expect("b");
    let refused = ledgerbench(&["report", "--summary", "a.json", "b.json"], t.path());
    assert_eq!(refused.status.code(), Some(2));
    let e = stderr(&refused);
    assert!(
        e.contains("2 kinds of machine") && e.contains("--mixed-machines"),
        "{e}"
    );
    let told = ledgerbench(
        &[
            "report",
            "--summary",
            "--mixed-machines",
            "a.json",
            "b.json",
        ],
        t.path(),
    );
    assert!(told.status.success(), "{}", stderr(&told));
    assert!(
        stdout(&told).contains("**Mixed machines**"),
        "{}",
        stdout(&told)
    );
}

#[test]
fn plan_refuses_what_a_cell_cannot_be_and_keeps_a_used_directory() {
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(t.path().join("plan")).expect("dir");
    std::fs::write(t.path().join("plan/notes.txt"), "mine").expect("write");
    let used = ledgerbench(
        &[
            "plan",
            "--dir",
            "plan",
            "run",
            "stellar",
            "--backends",
            "mem",
        ],
        t.path(),
    );
    assert_eq!(used.status.code(), Some(2));
    assert!(stderr(&used).contains("holds files"), "{}", stderr(&used));
    assert_eq!(
        std::fs::read_to_string(t.path().join("plan/notes.txt")).expect("kept"),
        "mine"
    );
    let out = ledgerbench(
        &[
            "plan",
            "--dir",
            "p2",
            "run",
            "stellar",
            "--backends",
            "mem",
            "--out",
            "x",
        ],
        t.path(),
    );
    assert!(stderr(&out).contains("drop --out"), "{}", stderr(&out));
    let other = ledgerbench(&["plan", "--dir", "p3", "run", "micro"], t.path());
    assert!(stderr(&other).contains("run stellar"), "{}", stderr(&other));
    let typo = ledgerbench(
        &["plan", "--dir", "p4", "run", "stellar", "--bakends", "mem"],
        t.path(),
    );
    assert!(stderr(&typo).contains("--bakends"), "{}", stderr(&typo));
    let missing = ledgerbench(&["run", "--job", "nope.json"], t.path());
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("nope.json"),
        "{}",
        stderr(&missing)
    );
    for d in ["p2", "p3", "p4"] {
        assert!(!t.path().join(d).exists(), "{d} made for a refused plan");
    }
}

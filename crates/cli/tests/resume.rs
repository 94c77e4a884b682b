//! `run stellar --resume DIR` as a user meets it: a checkpointed run killed
//! with SIGKILL (supervisor and worker at once, as a reboot or `kill -9`
//! of the group would) at a random batch goes on from its last complete
//! batch, and ends with the same batches and the same content as a run
//! that was never stopped.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

mod common;
use common::{assert_no_devices_under, ledgerbench, read_json, stderr};

/// 30 batches of 10 ledgers on LMDB: seconds, each batch synced.
const RUN: &[&str] = &[
    "run",
    "stellar",
    "--preset",
    "smoke",
    "--ledgers",
    "300",
    "--batch-ledgers",
    "10",
    "--checkpoint",
    "--backends",
    "lmdb",
];

/// Batches recorded so far in a run directory.
fn recorded(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("batches.jsonl")).map_or(0, |t| t.lines().count())
}

/// Per batch: its ledgers and transactions, and each store's entries and
/// bytes: the key streams the generator made.
fn streams(run: &serde_json::Value) -> Vec<String> {
    let batches = run["batches"].as_array().expect("batches");
    batches
        .iter()
        .map(|b| {
            let stores: Vec<String> = b["stores"]
                .as_array()
                .expect("stores")
                .iter()
                .map(|s| format!("{}:{}:{}", s["store"], s["entries"], s["logical_bytes"]))
                .collect();
            format!(
                "{} {} {} {}",
                b["batch"],
                b["first_ledger"],
                b["txs"],
                stores.join(",")
            )
        })
        .collect()
}

fn content(run: &serde_json::Value) -> Vec<(String, String)> {
    let stores = run["summary"]["stores"].as_object().expect("stores");
    stores
        .iter()
        .map(|(name, s)| {
            let sha = s["content_sha256"].as_str().expect("content digest");
            (name.clone(), format!("{} {sha}", s["final_entries"]))
        })
        .collect()
}

/// The checkpointed run started in `dir/cut` (in its own process group),
/// once `at` batches are recorded.
fn cut_after(dir: &Path, at: usize) -> std::process::Child {
    let child = Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
        .args(RUN)
        .args(["--out", "cut"])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .expect("start");
    let started = Instant::now();
    while recorded(&dir.join("cut")) < at && started.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(2));
    }
    child
}

#[test]
fn a_run_killed_at_a_random_batch_and_resumed_matches_one_never_stopped() {
    let t = tempfile::tempdir().expect("tempdir");
    let whole = ledgerbench(&[RUN, &["--out", "whole"]].concat(), t.path());
    assert!(whole.status.success(), "{}", stderr(&whole));
    // A batch from the 3rd to the 20th, differing run to run; printed so a
    // failure can be repeated.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let at = std::env::var("KILL_AT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3 + (nanos % 18) as usize);
    println!("killing after batch {at}");
    let dir = t.path().join("cut");
    let mut child = cut_after(t.path(), at);
    // SAFETY: kill has no memory preconditions; the group is the child's.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    let _ = child.wait();
    let cut_at = recorded(&dir);
    assert!((at..30).contains(&cut_at), "killed after {cut_at} batches");

    let dir_arg = dir.display().to_string();
    let resumed = ledgerbench(&["run", "stellar", "--resume", &dir_arg], t.path());
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert!(
        stderr(&resumed).contains("resuming the run in"),
        "{}",
        stderr(&resumed)
    );
    let a = read_json(&t.path().join("whole/results.json"));
    let b = read_json(&dir.join("results.json"));
    assert_eq!(b["runs"].as_array().expect("runs").len(), 1, "{b}");
    let (a, b) = (&a["runs"][0], &b["runs"][0]);
    assert!(b.get("error").is_none(), "{b}");
    assert_eq!(streams(a), streams(b));
    assert_eq!(streams(b).len(), 30);
    assert_eq!(content(a), content(b));
    let stops = b["resumes"].as_array().expect("the stop is recorded");
    assert_eq!(stops.len(), 1, "{b}");
    assert_eq!(stops[0]["after_batch"], cut_at as u64);
    assert!(stops[0]["why"].as_str().expect("why").contains("ended"));
    // The kept stores went once the run was over.
    assert!(!dir.join(".ledgerbench-checkpoint").exists());
    assert_no_devices_under(&dir);
    assert!(!dir.join("stores").exists());
}

#[test]
fn a_run_stopped_by_ctrl_c_and_resumed_to_its_end_exits_zero() {
    // Ctrl-C records the stop in the results as the run's error; the
    // resumed run that finishes replaces that record, so a script going on
    // after `--resume` (`set -e`) is not stopped by a run that succeeded.
    let t = tempfile::tempdir().expect("tempdir");
    let dir = t.path().join("cut");
    let mut child = cut_after(t.path(), 3);
    // Ctrl-C reaches the supervisor; it passes it on to its worker.
    // SAFETY: kill has no memory preconditions; the pid is our child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let stopped = child.wait().expect("wait");
    assert_eq!(stopped.code(), Some(2), "a stopped run is no success");
    let cut = read_json(&dir.join("results.json"));
    assert!(cut["runs"][0].get("error").is_some(), "{cut}");
    let dir_arg = dir.display().to_string();
    let resumed = ledgerbench(&["run", "stellar", "--resume", &dir_arg], t.path());
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let b = read_json(&dir.join("results.json"));
    assert!(b["runs"][0].get("error").is_none(), "{b}");
    assert_eq!(
        b["started_at"], cut["started_at"],
        "the first start is kept"
    );
    assert_eq!(streams(&b["runs"][0]).len(), 30);
    let why = b["runs"][0]["resumes"][0]["why"].as_str().expect("why");
    assert!(why.contains("SIGINT"), "{why}");
    assert_no_devices_under(&dir);
}

#[test]
fn what_cannot_be_resumed_is_refused_saying_why() {
    let t = tempfile::tempdir().expect("tempdir");
    let o = ledgerbench(&["run", "stellar", "--resume", "nowhere"], t.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not a ledgerbench run directory"),
        "{}",
        stderr(&o)
    );
    let plain = ledgerbench(
        &[
            "run",
            "stellar",
            "--preset",
            "smoke",
            "--backends",
            "mem",
            "--out",
            "plain",
        ],
        t.path(),
    );
    assert!(plain.status.success(), "{}", stderr(&plain));
    let o = ledgerbench(&["run", "stellar", "--resume", "plain"], t.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("was not checkpointed"),
        "{}",
        stderr(&o)
    );
    let o = ledgerbench(
        &["run", "stellar", "--resume", "plain", "--backends", "mem"],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
}

#[test]
fn a_run_the_disk_cannot_hold_is_refused_before_it_starts_saying_what_it_needs() {
    let t = tempfile::tempdir().expect("tempdir");
    // A billion ledgers: hundreds of terabytes of transactions.
    let o = ledgerbench(
        &[
            "run",
            "stellar",
            "--preset",
            "smoke",
            "--ledgers",
            "1000000000",
            "--backends",
            "mem",
            "--out",
            "big",
        ],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("expects") && err.contains("GiB of data"),
        "{err}"
    );
    assert!(
        err.contains("may need") && err.contains("free disk"),
        "{err}"
    );
    assert!(
        !t.path().join("big").exists(),
        "the refused run left its directory"
    );
}

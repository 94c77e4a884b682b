//! `ledgerbench run crash` on the crash filesystem (FUSE) as a user meets
//! it: the planted bug's configs, Ctrl-C in the middle of a cycle, and
//! `ledgerbench clean` after a supervisor killed with its mount up. Each
//! needs root, loop devices, cgroups and /dev/fuse, and says "not run"
//! without them.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

mod common;
use common::{assert_no_devices_under, first_run, ledgerbench, leftovers_of, stderr, usable};

fn fuse_usable() -> bool {
    usable() && ledgerbench_testkit::can_run(ledgerbench_crashfs::available())
}

/// `ledgerbench run crash --durability power --out c ARGS` in `dir`.
fn crash(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["run", "crash", "--durability", "power", "--out", "c"];
    all.extend_from_slice(args);
    ledgerbench(&all, dir)
}

/// Starts a long `run crash` of `mem` under `lose` in `dir`, returned once
/// its writer has started on the mount.
fn long_run(dir: &Path) -> Child {
    let child = Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
        .args([
            "run",
            "crash",
            "--backends",
            "mem",
            "--durability",
            "power",
            "--kinds",
            "lose",
            "--cycles",
            "1000",
            "--batches-per-cycle",
            "4",
            "--memory-limit",
            "256MiB",
            "--out",
            "c",
        ])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let log = dir.join("c/mem-power-lose.worker.log");
    for _ in 0..400 {
        if log.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    assert!(log.exists(), "the crash test never started a writer");
    // Some cycles in (they take a fraction of a second each), so the
    // signal lands with the mount up or between steps.
    std::thread::sleep(Duration::from_millis(1500));
    child
}

/// Crash filesystem mounts served by `pid`.
fn crash_mounts_of(pid: u32) -> Vec<std::path::PathBuf> {
    ledgerbench_meter::clean::crash_mounts()
        .into_iter()
        .filter(|&(_, p)| p == pid)
        .map(|(m, _)| m)
        .collect()
}

/// No crash mount, loop device or cgroup of supervisor `pid` is left, and
/// nothing under `dir` is mounted.
fn assert_nothing_left(pid: u32, dir: &Path) {
    assert!(
        crash_mounts_of(pid).is_empty(),
        "{:?}",
        crash_mounts_of(pid)
    );
    assert!(leftovers_of(pid).is_empty(), "{:?}", leftovers_of(pid));
    assert_no_devices_under(dir);
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups, /dev/fuse); scripts/test.sh runs it as root"]
fn the_planted_configs_keep_the_promises_the_layer_cannot_break() {
    if !fuse_usable() {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let o = crash(
        t.path(),
        &[
            "--backends",
            "planted-barrier,planted-no-barrier",
            "--kinds",
            "lose,reorder,torn",
            "--cycles",
            "6",
            "--batches-per-cycle",
            "8",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = common::read_json(&t.path().join("c/results.json"));
    let runs = r["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 6, "2 backends x 3 kinds");
    for run in runs {
        let (backend, kind) = (run["backend"].as_str(), run["kind"].as_str());
        let s = &run["summary"];
        assert_eq!(s["cycles"], 6, "{run}");
        // Every cycle says what the layer kept of the unsynced writes.
        for c in run["cycles"].as_array().expect("cycles") {
            assert!(c["fs_crash"].is_object(), "{c}");
        }
        // The barrier holds under every fault; without it, losing every
        // unsynced write is still harmless (whether a cut lands between
        // the index write and the log's sync is up to timing here; the
        // crashfs crate's planted test plays every cut).
        if backend == Some("planted-barrier") || kind == Some("lose") {
            assert_eq!(s["promise_kept"], true, "{backend:?} {kind:?}: {s}");
        }
    }
    assert!(leftovers_of(std::process::id()).is_empty());
    assert_no_devices_under(t.path());
    // The simulated reboots leave nothing in the run directory: their ids
    // live in memory, their scratch mount points went with their workers.
    let scratch: Vec<_> = std::fs::read_dir(t.path().join("c"))
        .expect("run dir")
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.ends_with(".bootfs") || n.ends_with(".boot_id")
        })
        .collect();
    assert!(scratch.is_empty(), "{scratch:?}");
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups, /dev/fuse); scripts/test.sh runs it as root"]
fn ctrl_c_ends_a_crash_run_with_nothing_left_and_the_cycles_kept() {
    if !fuse_usable() {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let child = long_run(t.path());
    let pid = child.id();
    // SAFETY: kill has no memory preconditions; `pid` is our child.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let o = child.wait_with_output().expect("wait");
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("interrupted by SIGINT"), "{err}");
    let r = common::read_json(&t.path().join("c/results.json"));
    assert_eq!(r["interrupted"], "SIGINT (Ctrl-C)", "{r}");
    let run = first_run(&t.path().join("c"));
    assert!(
        !run["cycles"].as_array().expect("cycles").is_empty(),
        "{run}"
    );
    assert_nothing_left(pid, t.path());
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups, /dev/fuse); scripts/test.sh runs it as root"]
fn clean_unmounts_the_crash_filesystem_of_a_killed_supervisor() {
    if !fuse_usable() {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let mut child = long_run(t.path());
    let pid = child.id();
    // Killed while its mount is up: the next writer mounts it within a cycle.
    for _ in 0..200 {
        if !crash_mounts_of(pid).is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().expect("kill -9");
    child.wait().expect("reap");
    std::thread::sleep(Duration::from_millis(200));
    let left = leftovers_of(pid);
    assert!(
        left.iter().any(|l| l.starts_with("crash filesystem")),
        "{left:?}"
    );
    let o = ledgerbench(&["clean"], t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_nothing_left(pid, t.path());
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups, /dev/fuse); scripts/test.sh runs it as root"]
fn an_engine_that_never_syncs_its_directory_keeps_its_first_commits() {
    if !fuse_usable() {
        return;
    }
    // LMDB creates data.mdb without syncing the directory: before
    // ledgerbench synced it after open, every first cycle lost the store.
    let t = tempfile::tempdir().expect("tempdir");
    let o = crash(
        t.path(),
        &[
            "--backends",
            "lmdb",
            "--kinds",
            "lose",
            "--cycles",
            "2",
            "--batches-per-cycle",
            "6",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let run = first_run(&t.path().join("c"));
    assert_eq!(run["summary"]["promise_kept"], true, "{run}");
    assert_eq!(run["summary"]["lost"], 0, "{run}");
    assert!(
        run["summary"]["acked"].as_u64().expect("acked") > 0,
        "{run}"
    );
}

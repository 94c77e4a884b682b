//! Crash safety as a user meets it: `ledgerbench run crash`, a run killed by its
//! memory limit, and `ledgerbench clean`. Each needs root and loop devices and
//! says "not run" without them.

use std::path::Path;
use std::process::{Command, Stdio};

mod common;
use common::{assert_no_devices_under, first_run, ledgerbench, leftovers_of, stderr, usable};

/// `ledgerbench run crash` of `backends` at `levels` with the kill and
/// power-cut kinds into `c/` in `dir`; its output (a success) and results.
fn crash_run(
    dir: &Path,
    backends: &str,
    levels: &str,
    cycles: &str,
    batches: &str,
) -> (std::process::Output, serde_json::Value) {
    let o = ledgerbench(
        &[
            "run",
            "crash",
            "--backends",
            backends,
            "--durability",
            levels,
            "--cycles",
            cycles,
            "--batches-per-cycle",
            batches,
            "--out",
            "c",
        ],
        dir,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = serde_json::from_slice(&std::fs::read(dir.join("c/results.json")).expect("results"))
        .expect("json");
    (o, r)
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn the_reference_engine_keeps_every_promise_through_kills_and_power_cuts() {
    if !usable() {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let (o, r) = crash_run(t.path(), "mem", "none,process,power", "4", "12");
    let runs = r["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 6, "3 levels x 2 kinds");
    for run in runs {
        let s = &run["summary"];
        let (level, kind) = (run["durability"].as_str(), run["kind"].as_str());
        assert_eq!(s["cycles"], 4, "{run}");
        assert!(s["acked"].as_u64().expect("acked") >= 4, "{run}");
        assert_eq!(s["torn"], 0, "{level:?} {kind:?}: {s}");
        assert_eq!(s["corrupt"], 0, "{level:?} {kind:?}: {s}");
        assert_eq!(s["out_of_order"], 0, "{level:?} {kind:?}: {s}");
        assert_eq!(s["promise_kept"], true, "{level:?} {kind:?}: {s}");
        match (level, kind) {
            // Its log is synced per batch at `power`; written, not synced, at
            // `process`: a kill keeps it, and a power cut may not.
            (Some("power"), _) | (Some("process"), Some("kill")) => {
                assert_eq!(s["lost"], 0, "{level:?} {kind:?}: {s}")
            }
            // Without a log nothing since the last snapshot survives.
            (Some("none"), _) => assert!(s["lost"].as_u64().expect("lost") > 0, "{s}"),
            _ => {}
        }
    }
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("| mem | power | power-cut | 4 |"), "{table}");
    assert!(leftovers_of(std::process::id()).is_empty());
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn the_go_engines_in_process_keep_their_promises_through_kills_and_power_cuts() {
    if !usable() {
        return;
    }
    // In process, a Go engine dies with the worker under kill -9 and a
    // power cut, as the engines linked from C and Rust do; Pebble and bbolt
    // sync every commit at `power`, so nothing acknowledged may be lost.
    let t = tempfile::tempdir().expect("tempdir");
    let (_, r) = crash_run(t.path(), "pebble,bbolt", "power", "3", "8");
    let runs = r["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 4, "2 engines x 2 kinds");
    for run in runs {
        let s = &run["summary"];
        // Runs carry no label: name the cell by engine and kind.
        let cell = format!("{} {}", run["backend"], run["kind"]);
        assert_eq!(s["cycles"], 3, "{run}");
        assert_eq!(s["lost"], 0, "{cell}: {s}");
        assert_eq!(s["corrupt"], 0, "{cell}: {s}");
        assert_eq!(s["promise_kept"], true, "{cell}: {s}");
    }
    assert!(leftovers_of(std::process::id()).is_empty());
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn a_run_killed_by_its_memory_limit_says_so_keeps_its_batches_and_leaves_nothing() {
    if !usable() {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let child = Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
        .args([
            "run",
            "stellar",
            "--preset",
            "quick",
            // The in-memory engine holds every ledger in its heap, so it
            // outgrows a 48 MiB limit (the harness has its own 64 MiB).
            "--backends",
            "mem",
            "--memory-limit",
            "48MiB",
            "--streaming-ledgers",
            "0",
            "--out",
            "oom",
        ])
        .current_dir(t.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let o = child.wait_with_output().expect("wait");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cgroup limit 112 MiB") && err.contains("peak"),
        "{err}"
    );
    let run = first_run(&t.path().join("oom"));
    assert!(
        run["error"]
            .as_str()
            .expect("error")
            .contains("memory limit"),
        "{run}"
    );
    assert_eq!(run["label"], "mem");
    // The worker's three store devices and its cgroup, removed by the supervisor.
    assert!(err.contains("removed 4 device(s) and cgroup(s)"), "{err}");
    assert_no_devices_under(t.path());
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn a_backend_killed_by_its_memory_limit_does_not_stop_the_ones_after_it() {
    if !usable() {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let o = Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
        .args([
            "run",
            "stellar",
            "--preset",
            "quick",
            "--ledgers",
            "400",
            "--backends",
            "mem,lmdb",
            "--memory-limit",
            "48MiB",
            "--streaming-ledgers",
            "0",
            "--out",
            "go-on",
        ])
        .current_dir(t.path())
        .output()
        .expect("run");
    let err = stderr(&o);
    // A failed run makes the exit 2, but the next backend still ran.
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("going on with the remaining runs"), "{err}");
    let r: serde_json::Value = serde_json::from_slice(
        &std::fs::read(t.path().join("go-on/results.json")).expect("results"),
    )
    .expect("json");
    let runs = r["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2, "{r}");
    assert_eq!(runs[0]["label"], "mem");
    assert!(
        runs[0]["error"]
            .as_str()
            .expect("error")
            .contains("memory limit")
    );
    assert_eq!(runs[1]["label"], "lmdb");
    assert!(runs[1].get("error").is_none(), "{}", runs[1]);
    assert_eq!(runs[1]["batches"].as_array().expect("batches").len(), 4);
    assert_no_devices_under(t.path());
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn clean_removes_what_a_killed_supervisor_left() {
    if !usable() {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let pid = kill_a_crash_run(t.path());
    let before = leftovers_of(pid);
    assert!(
        !before.is_empty(),
        "a killed supervisor leaves its device and cgroup"
    );
    let o = ledgerbench(&["clean", "--dry-run"], t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("would remove"));
    assert_eq!(leftovers_of(pid), before, "a dry run removes nothing");
    let o = ledgerbench(&["clean"], t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(leftovers_of(pid).is_empty(), "{:?}", leftovers_of(pid));
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn clean_finds_a_killed_runs_device_after_its_directory_was_deleted() {
    if !usable() {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let pid = kill_a_crash_run(t.path());
    // `rm -rf` of the run: the image and its marker go, the mounted
    // device's mount point stays (busy).
    let _ = std::fs::remove_dir_all(t.path().join("c"));
    let left = leftovers_of(pid);
    assert!(
        left.iter().any(|l| l.contains("loop")),
        "the device is still known by its label: {left:?}"
    );
    let o = ledgerbench(&["clean", "--dry-run"], t.path());
    assert!(String::from_utf8_lossy(&o.stdout).contains("would remove"));
    let o = ledgerbench(&["clean"], t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(leftovers_of(pid).is_empty(), "{:?}", leftovers_of(pid));
    assert_no_devices_under(t.path());
}

/// Starts a long crash run of LMDB in `dir/c`, kills its supervisor
/// without warning once a writer runs, and returns the supervisor's pid.
fn kill_a_crash_run(dir: &Path) -> u32 {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
        .args([
            "run",
            "crash",
            "--backends",
            "lmdb",
            "--durability",
            "power",
            "--kinds",
            "kill",
            "--cycles",
            "1000",
            "--memory-limit",
            "256MiB",
            "--out",
            "c",
        ])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    // Wait until its device exists and a writer has started, then kill it
    // without warning (its workers die with it: they ask for that).
    let log = dir.join("c/lmdb-power-kill.worker.log");
    for _ in 0..400 {
        if log.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    assert!(log.exists(), "the crash test never started a writer");
    child.kill().expect("kill -9");
    child.wait().expect("reap");
    std::thread::sleep(std::time::Duration::from_millis(200));
    pid
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn a_stopped_run_is_recorded_and_cleaned_up() {
    if !usable() {
        return;
    }
    // The signal the supervisor got is the one it names (SIGINT was once
    // reported as SIGTERM, which it forwarded). A Go engine runs inside the
    // worker with the Go runtime's own signal handlers beside ledgerbench's:
    // both signals must still stop it the same way.
    stop_with(libc::SIGINT, "SIGINT", "mdbx");
    stop_with(libc::SIGINT, "SIGINT", "pebble");
    stop_with(libc::SIGTERM, "SIGTERM", "pebble");
}

/// `ledgerbench run stellar --preset quick ARGS --streaming-ledgers 0 --out
/// stop` in `dir`, returned once it has finished `batches` batches.
fn stellar_until(dir: &Path, args: &[&str], batches: usize) -> std::process::Child {
    let mut all = vec![
        "run",
        "stellar",
        "--preset",
        "quick",
        "--streaming-ledgers",
        "0",
        "--out",
        "stop",
    ];
    all.extend_from_slice(args);
    let child = Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
        .args(&all)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let jsonl = dir.join("stop/batches.jsonl");
    for _ in 0..600 {
        if std::fs::read_to_string(&jsonl).is_ok_and(|s| s.lines().count() >= batches) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child
}

fn stop_with(sig: libc::c_int, name: &str, backend: &str) {
    let t = tempfile::tempdir().expect("tempdir");
    // Stopped once it has finished a batch or two.
    let child = stellar_until(
        t.path(),
        &["--backends", backend, "--memory-limit", "512MiB"],
        2,
    );
    let pid = child.id();
    // SAFETY: kill has no memory preconditions; `pid` is our child.
    unsafe { libc::kill(pid as i32, sig) };
    let o = child.wait_with_output().expect("wait");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{backend}: {err}");
    assert!(err.contains(name), "{backend}: {err}");
    let run = first_run(&t.path().join("stop"));
    assert!(
        run["error"].as_str().expect("error").contains(name),
        "{run}"
    );
    assert!(
        run["batches"].as_array().expect("batches").len() >= 2,
        "{run}"
    );
    // The worker's three store devices and its cgroup, removed by the supervisor.
    assert!(err.contains("removed 4 device(s) and cgroup(s)"), "{err}");
    assert_no_devices_under(t.path());
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn an_interrupted_run_without_devices_removes_its_stores_and_says_so() {
    if !usable() {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let child = stellar_until(t.path(), &["--backends", "lmdb", "--device", "none"], 1);
    assert!(
        t.path().join("stop/stores").is_dir(),
        "the run placed its stores in the run directory"
    );
    // SAFETY: kill has no memory preconditions; the pid is our child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().expect("wait");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("unfinished stores (") && err.contains("were removed"),
        "{err}"
    );
    assert!(!t.path().join("stop/stores").exists(), "stores left behind");
    assert!(
        t.path().join("stop/results.json").is_file(),
        "what finished is kept"
    );
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn a_full_private_device_asks_for_a_larger_device() {
    if !usable() {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    // The smoke preset writes tens of MiB per store: 16 MiB devices fill.
    let o = ledgerbench(
        &[
            "run",
            "stellar",
            "--preset",
            "smoke",
            "--backends",
            "lmdb",
            "--device",
            "loop",
            "--device-size",
            "16MiB",
            "--streaming-ledgers",
            "0",
            "--out",
            "full",
        ],
        t.path(),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("raise --device-size"), "{err}");
    assert!(!err.contains("free disk"), "{err}");
    assert_no_devices_under(t.path());
}

//! Every subcommand `ledgerbench --help` reaches, run small, into closed
//! pipes: standard output closed (`| head -1` once head is done) ends
//! quietly, and standard output and error both closed (`2>&1 | head -3`)
//! neither hangs nor fails, each with the exit code the command has with
//! its output read. The list of
//! commands comes from clap's tree, so a new command is covered the day it
//! lands.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::args::{base, seed_trace};
use common::{stdout, subcommands};

/// Settings that keep a generated workload to a second or so.
fn small(workload: &str) -> &'static [&'static str] {
    match workload {
        "ycsb" => &["records=2000", "operations=2000", "ops_per_segment=200"],
        "solana" => &["slots=20"],
        "blobs" => &["batches=20", "value_bytes=1024"],
        "accounts" => &["accounts=1000", "operations=2000"],
        _ => &[],
    }
}

/// `path`'s valid arguments, made small: the reference engine, no private
/// device, a named output. `None` for a command that has subcommands of
/// its own, and for the crash test without root (it refuses to start).
fn quick(path: &[String], cwd: &Path) -> Option<Vec<String>> {
    let mut help: Vec<&str> = path.iter().map(String::as_str).collect();
    help.push("--help");
    let text = stdout(&common::ledgerbench(&help, cwd));
    if text.contains("\nCommands:") {
        return None;
    }
    let (mut args, _) = base(path);
    let run = path.first().is_some_and(|p| p == "run");
    let has = |args: &[String], f: &str| args.iter().any(|a| a == f);
    let takes = |f: &str| text.contains(&format!("{f} <"));
    if run && path.get(1).is_some_and(|w| w == "crash") {
        if !common::usable() {
            return None;
        }
        args.extend(
            [
                "--cycles",
                "2",
                "--batches-per-cycle",
                "2",
                "--durability",
                "process",
            ]
            .map(String::from),
        );
    }
    for (flag, value) in [("--backends", "mem"), ("--device", "none")] {
        if run && takes(flag) && !has(&args, flag) {
            args.extend([flag.to_string(), value.to_string()]);
        }
    }
    if takes("--out") && !has(&args, "--out") {
        args.extend(["--out".to_string(), format!("out-{}", path.join("-"))]);
    }
    for p in small(path.last().map_or("", String::as_str)) {
        args.extend(["--param".to_string(), p.to_string()]);
    }
    if path == ["run", "capacity"] {
        args.extend(["--intervals", "3", "--close-interval", "100ms"].map(String::from));
    }
    if path == ["drift-trials"] {
        args.extend(["--series", "2"].map(String::from));
    }
    Some(args)
}

/// Where a command's output goes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Output {
    /// Read, as usual.
    Read,
    /// Standard output into a pipe whose reader is gone.
    StdoutClosed,
    /// Both into it.
    BothClosed,
}

/// Runs `args` with its output as `how` says; its exit code and standard
/// error (when read), or a panic after two minutes. What it made in `cwd`
/// is removed after, so the next run starts from the same tree.
fn run(args: &[String], cwd: &Path, how: Output) -> (Option<i32>, String) {
    let before = entries(cwd);
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut c = Command::new(env!("CARGO_BIN_EXE_ledgerbench"));
    c.args(args)
        .current_dir(cwd)
        .env("LEDGERBENCH_RUNS_DIR", cwd.join("runs"))
        .stdin(Stdio::null());
    match how {
        Output::Read => c.stdout(Stdio::null()).stderr(Stdio::piped()),
        Output::StdoutClosed => c.stdout(writer).stderr(Stdio::piped()),
        Output::BothClosed => c.stdout(writer.try_clone().expect("clone")).stderr(writer),
    };
    let out = wait(c.spawn().expect("spawn ledgerbench"), args, how);
    for made in entries(cwd).difference(&before) {
        let p = cwd.join(made);
        let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
    }
    out
}

/// The names in `dir`.
fn entries(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .expect("read_dir")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect()
}

/// The child's exit code and standard error (read as it comes, so a full
/// pipe is not taken for a hang).
fn wait(mut child: std::process::Child, args: &[String], how: Output) -> (Option<i32>, String) {
    let reader = child.stderr.take().map(|mut e| {
        std::thread::spawn(move || {
            let mut err = String::new();
            let _ = std::io::Read::read_to_string(&mut e, &mut err);
            err
        })
    });
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().expect("wait") {
            let err = reader.map(|r| r.join().unwrap_or_default());
            return (s.code(), err.unwrap_or_default());
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("{args:?} hung ({how:?})");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn every_command_into_closed_pipes_ends_as_it_would_have() {
    let t = tempfile::tempdir().expect("tempdir");
    seed_trace(t.path());
    let mut ran = Vec::new();
    for path in subcommands(&[], t.path()) {
        let Some(args) = quick(&path, t.path()) else {
            continue;
        };
        // A Go engine in process too: the Go runtime's SIGPIPE handler must
        // not turn a closed pipe into a crash.
        let mut cases = vec![args.clone()];
        if path == ["run", "stellar"] {
            let mut go = args.clone();
            if let Some(at) = go.iter().position(|a| a == "mem") {
                go[at] = "pebble".into();
            }
            cases.push(go);
        }
        for args in cases {
            let (want, err) = run(&args, t.path(), Output::Read);
            assert!(
                matches!(want, Some(0..=2)),
                "{args:?} read as usual:\n{err}"
            );
            let (code, err) = run(&args, t.path(), Output::StdoutClosed);
            assert_eq!(code, want, "{args:?} with stdout closed:\n{err}");
            assert!(
                !err.contains("panicked") && !err.contains("Broken pipe"),
                "{args:?}:\n{err}"
            );
            let (code, _) = run(&args, t.path(), Output::BothClosed);
            assert_eq!(code, want, "{args:?} with stdout and stderr closed");
        }
        ran.push(path.join(" "));
    }
    eprintln!("{} commands: {}", ran.len(), ran.join(", "));
    for must in [
        "run stellar",
        "run soak",
        "run synth",
        "fit",
        "ab",
        "plan",
        "list",
    ] {
        assert!(ran.iter().any(|r| r == must), "{must} not run: {ran:?}");
    }
}

#[test]
fn a_failure_into_a_closed_pipe_is_still_a_failure() {
    // The test's own check: a command that fails is not read as a quiet end.
    let t = tempfile::tempdir().expect("tempdir");
    let args = ["report".to_string(), "/nonexistent/results".to_string()];
    let (code, err) = run(&args, t.path(), Output::StdoutClosed);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("/nonexistent/results"), "{err}");
}

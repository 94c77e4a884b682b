//! Every subcommand against generated bad arguments: no panic, no
//! backtrace, an error that names what was wrong, and nothing left behind.
//! (Closed pipes: `pipes.rs`.)

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};

mod common;
use common::args::{base, seed_trace};
use common::{ledgerbench, stderr, subcommands};

/// The flags of a subcommand that take a value, with the value's name,
/// read from its `--help` so that a new flag is covered without a change here.
fn value_flags(path: &[String], cwd: &Path) -> Vec<(String, String)> {
    let mut help: Vec<&str> = path.iter().map(String::as_str).collect();
    help.push("--help");
    let o = ledgerbench(&help, cwd);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut flags = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        let line = line.strip_prefix("-h, ").unwrap_or(line);
        let Some(rest) = line.strip_prefix("--") else {
            continue;
        };
        let mut parts = rest.split_whitespace();
        let name = parts.next().unwrap_or_default().to_string();
        let Some(value) = parts.next().filter(|v| v.starts_with('<')) else {
            continue;
        };
        flags.push((
            name,
            value
                .trim_matches(|c| c == '<' || c == '>' || c == '.')
                .to_string(),
        ));
    }
    flags
}

/// Values no flag of that value name accepts.
fn bad_values(value: &str) -> &'static [&'static str] {
    match value {
        "SIZE" => &["lots", "12 parsecs", "99999999999TiB", "-5MiB"],
        "FILE" | "RESULTS" | "TRACE" | "PATHS" => &["/nonexistent/ledgerbench/input"],
        "DIR" | "PATH" => &["/proc/ledgerbench-cannot-be-made/out"],
        "LIST" => &["nosuch", "lmdb,lmdb", ",", "99999999999TiB"],
        "LEVEL" => &["bogus", ""],
        _ => &["abc", "-1", "18446744073709551616", "nan", "1e400", ""],
    }
}

/// Entries below `dir`, as paths relative to it.
fn tree(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            out.insert(p.strip_prefix(dir).expect("below").display().to_string());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out
}

fn check(o: &Output, args: &[String], what: &str) {
    let err = stderr(o);
    assert_ne!(o.status.code(), Some(101), "{args:?} panicked:\n{err}");
    assert!(
        o.status.code().is_some(),
        "{args:?} died of a signal:\n{err}"
    );
    for bad in ["panicked", "RUST_BACKTRACE", "stack backtrace"] {
        assert!(!err.contains(bad), "{args:?}: `{bad}` in:\n{err}");
    }
    if !o.status.success() {
        let line = err
            .lines()
            .find(|l| l.starts_with("error"))
            .unwrap_or_else(|| panic!("{args:?}: no error line in:\n{err}"));
        // Without root the crash test refuses to start once its arguments
        // are read: that, not an output path it never makes, is the error.
        let crash_needs_root = args.iter().any(|a| a == "crash")
            && ledgerbench_meter::loopdev::LoopFs::available().is_err()
            && err.contains("needs root and loop devices");
        assert!(
            err.contains(what) || line.contains("argument") || crash_needs_root,
            "{args:?}: the error does not name `{what}`:\n{err}"
        );
    }
}

#[test]
fn every_subcommand_refuses_bad_arguments_cleanly_and_leaves_nothing() {
    let t = tempfile::tempdir().expect("tempdir");
    let runs = t.path().join("runs");
    std::fs::create_dir(&runs).expect("runs dir");
    seed_trace(t.path());
    let before = tree(t.path());
    // What a killed run of another checkout left is not this test's: only
    // what appears while it runs counts.
    let left_before = leftovers(t.path());
    let mut rng = ledgerbench_rng::Rng::new(2026);
    let mut cases = 0;
    let paths = subcommands(&[], t.path());
    // Every bad value a command ran with anyway, listed together.
    let mut accepted: Vec<String> = Vec::new();
    for must in [
        &["plan"][..],
        &["ab"],
        &["run", "capacity"],
        &["run", "stellar"],
    ] {
        assert!(
            paths.iter().any(|p| p == must),
            "{must:?} not reached: {paths:?}"
        );
    }
    for path in &paths {
        let (cmd, at) = base(path);
        let with = |flag: &str, value: Option<&str>| {
            let mut args = cmd.clone();
            let mut extra = vec![flag.to_string()];
            extra.extend(value.map(str::to_string));
            args.splice(at..at, extra);
            args
        };
        let mut tried: Vec<(Vec<String>, String)> = Vec::new();
        // An unknown flag, and each value flag with one of its bad values,
        // drawn seeded (another run tries the same): more commands than the
        // hand-made list had, in about the time two values each took.
        tried.push((with("--no-such-flag", None), "--no-such-flag".into()));
        for (flag, value) in value_flags(path, t.path()) {
            let bads = bad_values(&value);
            let bad = bads[rng.below(bads.len() as u64) as usize];
            let args = with(&format!("--{flag}"), Some(bad));
            let what = if bad.is_empty() {
                flag.clone()
            } else {
                bad.to_string()
            };
            tried.push((args, what));
        }
        for (args, what) in tried {
            let o = Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
                .args(&args)
                .current_dir(t.path())
                .env("LEDGERBENCH_RUNS_DIR", &runs)
                .stdin(Stdio::null())
                .output()
                .expect("run ledgerbench");
            // The name of the flag or the value must be in the error; a
            // value clap or ledgerbench names through its flag counts too.
            let flag = args[at].clone();
            let named = if stderr(&o).contains(&flag) {
                flag
            } else {
                what
            };
            check(&o, &args, &named);
            if o.status.success() {
                accepted.push(format!("{args:?}"));
                // What the accepted run made, removed so the next case
                // starts from the same tree.
                for made in tree(t.path()).difference(&before) {
                    let p = t.path().join(made);
                    let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
                }
                continue;
            }
            assert_eq!(tree(t.path()), before, "{args:?} left files behind");
            cases += 1;
        }
    }
    eprintln!("{cases} cases over {} subcommands", paths.len());
    assert!(accepted.is_empty(), "accepted:\n{}", accepted.join("\n"));
    assert!(cases > 150, "only {cases} cases");
    let new: Vec<String> = leftovers(t.path())
        .into_iter()
        .filter(|l| !left_before.contains(l))
        .collect();
    assert!(new.is_empty(), "a loop device or cgroup was left: {new:?}");
}

/// What `clean --dry-run` would remove, one line each.
fn leftovers(cwd: &std::path::Path) -> Vec<String> {
    let o = ledgerbench(&["clean", "--dry-run"], cwd);
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.starts_with("would remove"))
        .map(str::to_string)
        .collect()
}

#[test]
fn ledgerbench_backends_applies_to_every_run_command_that_takes_backends() {
    let t = tempfile::tempdir().expect("tempdir");
    seed_trace(t.path());
    let mut checked = Vec::new();
    for path in subcommands(&["run".to_string()], t.path()) {
        let mut help: Vec<&str> = path.iter().map(String::as_str).collect();
        help.push("--help");
        let text = common::stdout(&ledgerbench(&help, t.path()));
        if !text.contains("--backends <") {
            continue;
        }
        // The variable stands in for the default list: a list no engine
        // has must be refused by name, as --backends would be. The base
        // arguments' own --backends (an explicit list wins) is left out.
        let (mut args, _) = base(&path);
        if let Some(at) = args.iter().position(|a| a == "--backends") {
            args.drain(at..at + 2);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
            .args(&args)
            .current_dir(t.path())
            .env("LEDGERBENCH_BACKENDS", "garbage-engine")
            .env("LEDGERBENCH_RUNS_DIR", t.path().join("runs"))
            .stdin(Stdio::null())
            .output()
            .expect("run ledgerbench");
        assert!(
            !o.status.success(),
            "{path:?} ignored LEDGERBENCH_BACKENDS:\n{}",
            stderr(&o)
        );
        assert!(
            stderr(&o).contains("garbage-engine"),
            "{path:?}: {}",
            stderr(&o)
        );
        checked.push(path.join(" "));
    }
    for must in [
        "run stellar",
        "run point-reads",
        "run fan-out",
        "run ycsb",
        "run crash",
    ] {
        assert!(
            checked.iter().any(|c| c == must),
            "{must} not checked: {checked:?}"
        );
    }
}

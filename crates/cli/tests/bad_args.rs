//! Every subcommand against generated bad arguments, and every printing
//! command into a closed pipe: no panic, no backtrace, an error that names
//! what was wrong, and nothing left behind.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};

mod common;
use common::{ledgerbench, stderr, subcommands};

fn fixture(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(rel)
        .display()
        .to_string()
}

/// The arguments that make a subcommand valid apart from the flag under
/// test, and where in them the flag goes; a subcommand not named here is
/// tried with none (its error then says what it needs, which is clean too).
fn base(path: &[String]) -> (Vec<String>, usize) {
    let results = fixture("results/stellar-smoke");
    let pubnet = fixture("stellar-pubnet");
    let ab_json = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../results/ab-2026-11-26/gate/planted-1.json")
        .display()
        .to_string();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let key: Vec<&str> = path.iter().map(String::as_str).collect();
    let args = match key.as_slice() {
        ["run", "stellar"] => s(&["run", "stellar", "--preset", "smoke"]),
        ["run", "point-reads"] => s(&["run", "point-reads", "--keys", "1000"]),
        ["run", "fan-out"] => s(&[
            "run",
            "fan-out",
            "--keys-per-batch",
            "1000",
            "--batches",
            "1",
        ]),
        ["run", "trie"] => s(&[
            "run",
            "trie",
            "--accounts",
            "1000",
            "--blocks",
            "1",
            "--backends",
            "mem",
        ]),
        ["run", "micro"] => s(&["run", "micro", "--num", "1000", "--backends", "mem"]),
        ["run", "capacity"] => s(&["run", "capacity", "--backends", "mem", "--probes", "2"]),
        ["run", "replay"] => s(&["run", "replay", "seed.kvtrace"]),
        ["run", "soak"] => s(&[
            "run",
            "soak",
            "blobs",
            "--duration",
            "1s",
            "--interval",
            "100ms",
            "--param",
            "value_bytes=1024",
        ]),
        ["run", "synth"] => {
            let model = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../examples/workloads/cosmos.toml")
                .display()
                .to_string();
            s(&["run", "synth", "--workload", &model, "--scale", "0.001x"])
        }
        ["fit"] => {
            let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../fixtures/rocksdb-trace/6-mixgraph.trace")
                .display()
                .to_string();
            s(&["fit", &trace, "--scan-length", "10", "--out", "new.toml"])
        }
        ["record"] => s(&["record", "ycsb", "--out", "new.kvtrace"]),
        ["import"] => s(&["import", "galexie", &pubnet, "--out", "new.kvtrace"]),
        ["calibrate"] => s(&["calibrate", "stellar", &pubnet]),
        ["report"] => s(&["report", &results, "--out", "report"]),
        ["compare"] => s(&["compare", "--baseline", &results, "--current", &results]),
        ["export"] => s(&["export", "bencher", &results]),
        ["ab"] => s(&["ab", "--rejudge", &ab_json]),
        ["clean"] => s(&["clean", "--dry-run"]),
        ["completions"] => s(&["completions", "bash"]),
        // The planned command follows plan's own flags.
        ["plan"] => {
            return (
                s(&[
                    "plan", "--dir", "newplan", "run", "stellar", "--preset", "smoke",
                ]),
                3,
            );
        }
        _ => path.to_vec(),
    };
    let at = args.len();
    (args, at)
}

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

/// A real trace for `run replay`, `seed.kvtrace` in `dir`.
fn seed_trace(dir: &Path) {
    let o = ledgerbench(
        &[
            "record",
            "ycsb",
            "--param",
            "records=10",
            "--param",
            "operations=10",
            "--out",
            "seed.kvtrace",
        ],
        dir,
    );
    assert!(o.status.success(), "{}", stderr(&o));
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

#[test]
fn printing_into_a_closed_pipe_ends_quietly() {
    let results = fixture("results/stellar-smoke");
    let pubnet = fixture("stellar-pubnet");
    let t = tempfile::tempdir().expect("tempdir");
    for args in [
        vec!["list"],
        vec!["list", "--json"],
        vec!["completions", "bash"],
        vec!["compare", "--baseline", &results, "--current", &results],
        vec!["export", "bencher", &results],
        vec!["calibrate", "stellar", &pubnet, "--synthetic-ledgers", "5"],
        vec!["clean", "--dry-run"],
        // A Go engine in process: the Go runtime's SIGPIPE handler must not
        // turn the closed pipe into a crash.
        vec![
            "run",
            "stellar",
            "--preset",
            "smoke",
            "--device",
            "none",
            "--backends",
            "pebble",
            "--out",
            "pebble",
        ],
    ] {
        // The reading end is closed before ledgerbench writes a byte: every
        // write fails with EPIPE, as under `| head -1` once head is done.
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let o = Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
            .args(&args)
            .current_dir(t.path())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .expect("run ledgerbench");
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}:\n{err}");
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "{args:?}:\n{err}"
        );
    }
}

#[test]
fn a_closed_standard_error_neither_hangs_nor_fails_a_run() {
    let results = fixture("results/stellar-smoke");
    let t = tempfile::tempdir().expect("tempdir");
    let runs = t.path().join("runs");
    for args in [
        vec![
            "run",
            "stellar",
            "--preset",
            "smoke",
            "--device",
            "none",
            "--backends",
            "mem",
        ],
        vec![
            "run",
            "ycsb",
            "--backends",
            "mem",
            "--device",
            "none",
            "--param",
            "records=2000",
            "--param",
            "operations=2000",
            "--param",
            "ops_per_segment=200",
        ],
        vec![
            "run",
            "stellar",
            "--preset",
            "smoke",
            "--device",
            "none",
            "--backends",
            "goleveldb",
        ],
        vec!["report", &results, "--out", "report"],
        vec!["compare", "--baseline", &results, "--current", &results],
        vec!["clean", "--dry-run"],
        vec!["list"],
    ] {
        // Both ends closed before ledgerbench writes a byte, as under
        // `2>&1 | head -3` once head is done: progress lines and warnings
        // must be dropped, not end the run or leave it waiting.
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let mut child = Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
            .args(&args)
            .current_dir(t.path())
            .env("LEDGERBENCH_RUNS_DIR", &runs)
            .stdin(Stdio::null())
            .stdout(writer.try_clone().expect("clone"))
            .stderr(writer)
            .spawn()
            .expect("spawn ledgerbench");
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().expect("wait") {
                break s;
            }
            if start.elapsed() > std::time::Duration::from_secs(120) {
                let _ = child.kill();
                panic!("{args:?} hung with its standard error closed");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        assert_eq!(status.code(), Some(0), "{args:?}");
    }
}

//! Every `LEDGERBENCH_*` variable the README, the guide or a `--help` page
//! names does what they say: each is set here and its effect checked, or
//! the test that checks it is named (and must set it). A variable the docs
//! gain without a check here fails, and so does a check of a variable the
//! docs no longer name.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::{read_json, stderr, stdout, subcommands};

/// How a documented variable is shown to take effect.
enum Effect {
    /// Checked here, by this function in a scratch directory.
    Here(fn(&Path)),
    /// Checked by this test file (it must set the variable).
    In(&'static str),
    /// Read by the test harness or a script, not by ledgerbench (the file
    /// named must read it).
    ReadBy(&'static str),
    /// Not a variable: a file of that name (the docs show a listing).
    NotAVariable,
}

const EFFECTS: &[(&str, Effect)] = &[
    ("LEDGERBENCH_BACKENDS", Effect::Here(backends)),
    ("LEDGERBENCH_RUNS_DIR", Effect::Here(runs_dir)),
    ("LEDGERBENCH_GO_LIB", Effect::Here(go_lib)),
    ("LEDGERBENCH_SPOOL_CACHE", Effect::Here(spool_cache)),
    ("LEDGERBENCH_PLANT_SLOWDOWN_PCT", Effect::Here(slowdown)),
    ("LEDGERBENCH_PLANT_STALL", Effect::In("watchdog.rs")),
    ("LEDGERBENCH_STATE_CACHE", Effect::In("state_cache.rs")),
    (
        "LEDGERBENCH_GATE_BASELINE",
        Effect::ReadBy("scripts/gate.sh"),
    ),
    (
        "LEDGERBENCH_REQUIRE_PRIVILEGED",
        Effect::ReadBy("crates/testkit/src/lib.rs"),
    ),
    (
        "LEDGERBENCH_FUZZ_SECS",
        Effect::ReadBy("crates/fuzz/src/lib.rs"),
    ),
    (
        "LEDGERBENCH_FUZZ_INPUTS",
        Effect::ReadBy("crates/fuzz/src/lib.rs"),
    ),
    // The marker file of a run directory (docs/src/soak.md's listing).
    ("LEDGERBENCH_RUN", Effect::NotAVariable),
];

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The names in `text` that look like `LEDGERBENCH_X`.
fn names_in(text: &str, into: &mut BTreeSet<String>) {
    let mut rest = text;
    while let Some(at) = rest.find("LEDGERBENCH_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        let name = tail[..end].trim_end_matches('_');
        // `LEDGERBENCH_*` names the family, not a variable.
        if name != "LEDGERBENCH" {
            into.insert(name.to_string());
        }
        rest = &tail[end..];
    }
}

/// The variables the README, the guide and every `--help` page name.
fn documented(cwd: &Path) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut pages = vec![root().join("README.md")];
    let guide = root().join("docs/src");
    for e in std::fs::read_dir(&guide).expect("docs/src") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "md") {
            pages.push(p);
        }
    }
    for p in pages {
        names_in(&std::fs::read_to_string(&p).expect("page"), &mut names);
    }
    let mut paths = subcommands(&[], cwd);
    paths.push(Vec::new());
    for path in paths {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        names_in(&stdout(&common::ledgerbench(&args, cwd)), &mut names);
    }
    names
}

fn with_env(args: &[&str], cwd: &Path, vars: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ledgerbench"));
    c.args(args).current_dir(cwd);
    for (k, v) in vars {
        c.env(k, v);
    }
    c.output().expect("run ledgerbench")
}

const SMOKE: &[&str] = &[
    "run",
    "stellar",
    "--preset",
    "smoke",
    "--device",
    "none",
    "--streaming-ledgers",
    "0",
];

fn smoke(cwd: &Path, extra: &[&str], vars: &[(&str, &str)]) -> serde_json::Value {
    let mut args = SMOKE.to_vec();
    args.extend_from_slice(extra);
    let o = with_env(&args, cwd, vars);
    assert!(o.status.success(), "{args:?} {vars:?}: {}", stderr(&o));
    read_json(&cwd.join("out/results.json"))
}

/// Stands in for the default backends.
fn backends(cwd: &Path) {
    let r = smoke(cwd, &["--out", "out"], &[("LEDGERBENCH_BACKENDS", "mem")]);
    let labels: Vec<&str> = r["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .filter_map(|x| x["label"].as_str())
        .collect();
    assert_eq!(labels, ["mem"]);
}

/// Where runs go without `--out`.
fn runs_dir(cwd: &Path) {
    let runs = cwd.join("elsewhere");
    let runs_s = runs.display().to_string();
    let o = with_env(
        &[SMOKE, &["--backends", "mem"][..]].concat(),
        cwd,
        &[("LEDGERBENCH_RUNS_DIR", runs_s.as_str())],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let made: Vec<_> = std::fs::read_dir(&runs)
        .expect("the run went under LEDGERBENCH_RUNS_DIR")
        .filter_map(Result::ok)
        .filter(|e| e.path().join("results.json").is_file())
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
}

/// The only Go library tried when set.
fn go_lib(cwd: &Path) {
    let o = with_env(
        &[SMOKE, &["--backends", "pebble", "--out", "out"][..]].concat(),
        cwd,
        &[("LEDGERBENCH_GO_LIB", "/nonexistent/libledgerbenchgo.so")],
    );
    assert!(!o.status.success(), "ran without the named library");
    assert!(stderr(&o).contains("LEDGERBENCH_GO_LIB"), "{}", stderr(&o));
}

/// Pregenerated ledgers are kept there, and the next run of the same
/// settings reuses them instead of generating them again.
fn spool_cache(cwd: &Path) {
    let cache = cwd.join("spools");
    let cache_s = cache.display().to_string();
    let vars = [("LEDGERBENCH_SPOOL_CACHE", cache_s.as_str())];
    for (out, reused) in [("a", false), ("b", true)] {
        let args = [
            SMOKE,
            &["--backends", "mem", "--pregenerate", "--out", out][..],
        ]
        .concat();
        let o = with_env(&args, cwd, &vars);
        assert!(o.status.success(), "{}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.contains("pregenerate: reusing"), reused, "{out}: {err}");
    }
    let spools = std::fs::read_dir(&cache)
        .expect("the spool went under LEDGERBENCH_SPOOL_CACHE")
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "spool"))
        .count();
    assert_eq!(spools, 1);
}

/// Planted, and recorded so it cannot pass for a real result.
fn slowdown(cwd: &Path) {
    let r = smoke(
        cwd,
        &["--backends", "mem", "--out", "out"],
        &[("LEDGERBENCH_PLANT_SLOWDOWN_PCT", "5")],
    );
    assert_eq!(
        r["runs"][0]["planted_slowdown_pct"], 5.0,
        "{}",
        r["runs"][0]
    );
}

#[test]
fn every_documented_variable_takes_effect_or_is_checked_where_named() {
    let t = tempfile::tempdir().expect("tempdir");
    let docs = documented(t.path());
    let known: BTreeSet<String> = EFFECTS.iter().map(|(n, _)| n.to_string()).collect();
    let unchecked: Vec<_> = docs.difference(&known).collect();
    assert!(
        unchecked.is_empty(),
        "documented without a check in crates/cli/tests/env_vars.rs: {unchecked:?}"
    );
    let stale: Vec<_> = known.difference(&docs).collect();
    assert!(
        stale.is_empty(),
        "checked but no longer documented: {stale:?}"
    );
    for (name, effect) in EFFECTS {
        match effect {
            Effect::Here(check) => {
                let dir = tempfile::tempdir().expect("tempdir");
                check(dir.path());
            }
            Effect::In(file) => {
                let text = std::fs::read_to_string(root().join("crates/cli/tests").join(file))
                    .expect("test file");
                assert!(
                    text.contains(&format!(".env(\"{name}\"")),
                    "{file} does not set {name}"
                );
            }
            Effect::ReadBy(file) => {
                let text = std::fs::read_to_string(root().join(file)).expect("script");
                assert!(text.contains(name), "{file} does not read {name}");
            }
            Effect::NotAVariable => {}
        }
    }
}

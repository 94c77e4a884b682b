//! `scripts/ab-trials.sh` resumes an unfinished set of trials with the
//! binary that began it, whatever the tree is now, and refuses anything
//! else; `scripts/ab-prefix.sh` judges a set again on its first rounds.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{read_json, stderr, stdout};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The script on `out` with `args`, its kept binaries under `bins`.
fn trials(out: &Path, bins: &Path, args: &[&str]) -> Output {
    Command::new("bash")
        .arg(root().join("scripts/ab-trials.sh"))
        .arg(out)
        .args(args)
        .env("LEDGERBENCH_AB_TRIALS_BINS", bins)
        .output()
        .expect("run ab-trials.sh")
}

/// The kept binary's path, from the refusal that says it is gone.
fn gone_binary(err: &str) -> PathBuf {
    err.split("whose binary ")
        .nth(1)
        .and_then(|s| s.split(" is gone").next())
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("no binary path in: {err}"))
}

/// Puts at `bin` a stand-in for a kept binary: its `ab` appends its
/// arguments to `calls` and writes `ab_json` as the trial's ab.json.
fn stand_in(bin: &Path, calls: &Path, ab_json: &Path) {
    std::fs::create_dir_all(bin.parent().expect("dir")).expect("keep");
    std::fs::write(
        bin,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\nwhile [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=$2; shift; done\nmkdir -p \"$out\" && cp '{}' \"$out/ab.json\"\n",
            calls.display(),
            ab_json.display()
        ),
    )
    .expect("stand-in");
    std::fs::set_permissions(bin, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn an_unfinished_set_is_resumed_by_its_own_binary_and_nothing_else_is() {
    let t = tempfile::tempdir().expect("tempdir");
    let (out, bins) = (t.path().join("out"), t.path().join("bins"));
    std::fs::create_dir(&out).expect("out");
    // A set of one trial each, begun by another commit, its planted trial
    // kept (a real one, from the published set).
    let kept = root().join("results/ab-2026-11-25/rounds-20-alpha-0.01");
    std::fs::write(
        out.join("trials.args"),
        "commit 0123456789ab\npercent 5\nab flags --rounds 20\n",
    )
    .expect("args");
    let mut planted = read_json(&kept.join("planted-1.json"));
    planted["planted_slowdown_pct"] = serde_json::json!(5);
    std::fs::write(out.join("planted-1.json"), planted.to_string()).expect("planted");
    let args = ["1", "5", "--", "--rounds", "20"];

    // Its binary is gone: refused, with where to put one.
    let o = trials(&out, &bins, &args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("commit 0123456789ab"), "{err}");
    let bin = gone_binary(&err);
    assert!(bin.starts_with(&bins), "{}", bin.display());
    // ... and how to build that commit's binary there again.
    let keep = bin.parent().expect("dir").display().to_string();
    assert!(
        err.contains("git worktree add /tmp/ab-trials-0123456789ab 0123456789ab")
            && err.contains(&format!("mkdir -p {keep} && cp ")),
        "{err}"
    );

    // The kept binary: a stand-in whose `ab` records its arguments and
    // writes a real same-code trial's ab.json.
    let calls = t.path().join("calls");
    stand_in(&bin, &calls, &kept.join("same-1.json"));

    // Other flags or another percent are another set: refused.
    for other in [
        &["1", "5", "--", "--rounds", "30"][..],
        &["1", "4", "--", "--rounds", "20"][..],
    ] {
        let o = trials(&out, &bins, other);
        assert_eq!(o.status.code(), Some(2), "{other:?}: {}", stdout(&o));
        assert!(
            stderr(&o).contains("not an unfinished set"),
            "{}",
            stderr(&o)
        );
    }
    assert!(!calls.exists(), "a refused set ran a trial");

    // The same: the kept trial stays, the missing one runs by the kept
    // binary against itself, the summary is written and the binary removed.
    let o = trials(&out, &bins, &args);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("planted 1/1: kept from before"),
        "{}",
        stdout(&o)
    );
    let call = std::fs::read_to_string(&calls).expect("calls");
    assert_eq!(call.lines().count(), 1, "{call}");
    let words: Vec<&str> = call.split_whitespace().collect();
    let side = |flag: &str| words.iter().position(|w| *w == flag).map(|i| words[i + 1]);
    assert_eq!(side("--baseline"), side("--current"), "{call}");
    assert!(call.trim_end().ends_with("--rounds 20"), "{call}");
    assert_eq!(
        read_json(&out.join("same-1.json")),
        read_json(&kept.join("same-1.json"))
    );
    let summary = std::fs::read_to_string(out.join("summary.md")).expect("summary");
    assert!(
        summary.contains("1 planted and 1 same-code trials"),
        "{summary}"
    );
    assert!(!bin.exists(), "the finished set's binary was kept");

    // Finished: refused, nothing run again.
    let o = trials(&out, &bins, &args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&calls).expect("calls"), call);
}

/// `scripts/ab-prefix.sh DIR N` with this build's binary.
fn prefix(dir: &Path, n: &str) -> Output {
    Command::new("bash")
        .arg(root().join("scripts/ab-prefix.sh"))
        .arg(dir)
        .arg(n)
        .env("LEDGERBENCH_BIN", env!("CARGO_BIN_EXE_ledgerbench"))
        .output()
        .expect("run ab-prefix.sh")
}

#[test]
fn a_set_cut_to_its_first_rounds_is_judged_on_those_alone() {
    let t = tempfile::tempdir().expect("tempdir");
    // Two trials of the gate's published set, 60 rounds each: the planted
    // one was called worse at 60; on its first 20 rounds its effect
    // (+5.06%) lay inside that cut's band (±5.09%).
    let set = root().join("results/ab-2026-11-25/noise-target");
    for f in ["planted-1.json", "same-1.json"] {
        std::fs::copy(set.join(f), t.path().join(f)).expect("copy");
    }
    let batch = |o: &Output| {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
        stdout(o)
            .lines()
            .find(|l| l.starts_with("| rocksdb-leveled/summary.batch_secs |"))
            .unwrap_or_else(|| panic!("no batch time row: {}", stdout(o)))
            .to_string()
    };
    let o = prefix(t.path(), "20");
    assert!(
        stdout(&o).contains("first 20 rounds of 1 planted and 1 same-code trials"),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        batch(&o),
        "| rocksdb-leveled/summary.batch_secs | 0 | 0 | 0 | 0 |"
    );
    assert_eq!(
        batch(&prefix(t.path(), "60")),
        "| rocksdb-leveled/summary.batch_secs | 1 | 0 | 0 | 0 |"
    );
    // More rounds than a trial ran, fewer than alpha 0.01 can use (8),
    // or no count: refused.
    for bad in ["61", "x", "0", "7"] {
        let o = prefix(t.path(), bad);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stdout(&o));
    }
    assert!(stderr(&prefix(t.path(), "61")).contains("fewer than 61 rounds"));
}

#[test]
fn gate_as_the_flags_measures_the_gates_own_comparison() {
    let t = tempfile::tempdir().expect("tempdir");
    let (out, bins) = (t.path().join("out"), t.path().join("bins"));
    std::fs::create_dir(&out).expect("out");
    let gate = Command::new("bash")
        .current_dir(root())
        .args([
            "-c",
            "source scripts/gate-ab.sh && echo \"${GATE_AB_BATCH[*]}\"",
        ])
        .output()
        .expect("source gate-ab.sh");
    let flags = stdout(&gate).trim().to_string();
    assert!(flags.contains("--noise-target"), "{flags}");
    // An unfinished set of the gate's flags, its planted trial kept.
    let kept = root().join("results/ab-2026-11-25/rounds-20-alpha-0.01");
    std::fs::write(
        out.join("trials.args"),
        format!("commit 0123456789ab\npercent 5\nab flags {flags}\n"),
    )
    .expect("args");
    let mut planted = read_json(&kept.join("planted-1.json"));
    planted["planted_slowdown_pct"] = serde_json::json!(5);
    std::fs::write(out.join("planted-1.json"), planted.to_string()).expect("planted");
    // Its kept binary: a stand-in that records its arguments.
    let o = trials(&out, &bins, &["1", "5", "--", "gate"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("whose binary"), "`-- gate` is this set: {err}");
    let bin = gone_binary(&err);
    let calls = t.path().join("calls");
    stand_in(&bin, &calls, &kept.join("same-1.json"));
    let o = trials(&out, &bins, &["1", "5", "--", "gate"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let call = std::fs::read_to_string(&calls).expect("calls");
    assert!(call.trim_end().ends_with(&flags), "{call}");
}

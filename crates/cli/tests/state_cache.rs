//! `run synth --state-cache DIR`: the initial state is loaded once per
//! engine and settings, and every later run opens a cold copy of it and
//! plays what follows the load exactly as a run that loaded it would.

use std::path::Path;

mod common;
use common::{ledgerbench, read_json, segments, stderr};

/// A model of one store: 20,000 keys loaded, then 3,000 operations, half
/// of them reads of loaded or written keys (checked against their values).
const MODEL: &str = "version = 1\n[[store]]\nname = \"state\"\ninitial_keys = 20000\n\
    operations = 3000\n[store.mix]\noverwrite = 0.4\ninsert = 0.1\nget_found = 0.5\n\
    [store.key_size]\nfixed = 32\n[store.value_size]\nfixed = 100\n";

fn synth(dir: &Path, out: &str, more: &[&str]) -> (serde_json::Value, String) {
    let mut args = vec![
        "run",
        "synth",
        "--workload",
        "m.toml",
        "--backends",
        "lmdb,mem",
    ];
    args.extend(["--device", "none", "--out", out]);
    args.extend(more);
    let o = ledgerbench(&args, dir);
    assert!(o.status.success(), "{}", stderr(&o));
    // What it said and what it printed (the summary's tables).
    let said = format!("{}{}", stderr(&o), common::stdout(&o));
    (read_json(&dir.join(out).join("results.json")), said)
}

/// The cache's entries, and anything else in it.
fn entries(cache: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(cache)
        .expect("cache")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_state_is_loaded_once_and_every_later_run_plays_on_a_copy_as_if_it_had_loaded_it() {
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::write(t.path().join("m.toml"), MODEL).expect("model");
    let (whole, _) = synth(t.path(), "whole", &[]);
    let (made, err) = synth(t.path(), "made", &["--state-cache", "cache"]);
    assert_eq!(
        err.matches("loading the initial state once").count(),
        2,
        "{err}"
    );
    let (again, err) = synth(t.path(), "again", &["--state-cache", "cache"]);
    assert_eq!(err.matches("initial state given from").count(), 2, "{err}");
    assert!(!err.contains("loading the initial state"), "{err}");
    assert!(
        err.contains("Given their initial state from `--state-cache`"),
        "{err}"
    );
    let cache = t.path().join("cache");
    let kept = entries(&cache);
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(
        kept.iter()
            .all(|e| e.starts_with("state-") && !e.contains("partial"))
    );
    for i in 0..2 {
        let (w, m, a) = (&whole["runs"][i], &made["runs"][i], &again["runs"][i]);
        let given = &m["replay"]["initial_state"];
        assert_eq!(given["made_here"], true, "{m}");
        assert!(
            given["load_secs"].as_f64().is_some_and(|s| s > 0.0),
            "{given}"
        );
        assert!(
            given["bytes"].as_u64().is_some_and(|b| b > 2_000_000),
            "{given}"
        );
        assert_eq!(a["replay"]["initial_state"]["made_here"], false);
        assert_eq!(
            a["replay"]["initial_state"]["load_secs"],
            given["load_secs"]
        );
        assert!(w["replay"].get("initial_state").is_none(), "{w}");
        // The same reads of the same values, found alike: the copy holds
        // what the load wrote, and the run after it plays the same ops.
        for r in [m, a] {
            for k in ["gets", "gets_found", "gets_digest", "scans", "mismatches"] {
                assert_eq!(r["replay"]["summary"][k], w["replay"]["summary"][k], "{k}");
            }
            // The same puts but the load's 20,000.
            let puts = |r: &serde_json::Value| r["replay"]["summary"]["puts"].as_u64();
            assert_eq!(puts(r).map(|p| p + 20_000), puts(w));
            assert_eq!(r["replay"]["summary"]["mismatches"], 0);
        }
        // Given, the load has no segment; loaded, it is the first.
        let marks = |dir: &str, r| {
            let s = segments(&t.path().join(dir), r);
            s.as_array()
                .expect("segments")
                .iter()
                .map(|s| s["mark"].as_str().unwrap_or("").to_string())
                .collect::<Vec<_>>()
        };
        let played = marks("whole", w);
        assert_eq!(played[0], "load");
        assert_eq!(marks("made", m), played[1..]);
        assert_eq!(marks("again", a), played[1..]);
    }
    // The variable names the cache as the flag does.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
        .args(["run", "synth", "--workload", "m.toml", "--backends", "lmdb"])
        .args(["--device", "none", "--out", "by-env"])
        .env("LEDGERBENCH_STATE_CACHE", &cache)
        .current_dir(t.path())
        .output()
        .expect("run ledgerbench");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("initial state given from"),
        "{}",
        stderr(&o)
    );
    // Another seed is another state.
    let (_, err) = synth(t.path(), "seed", &["--state-cache", "cache", "--seed", "7"]);
    assert_eq!(
        err.matches("loading the initial state once").count(),
        2,
        "{err}"
    );
    assert_eq!(entries(&cache).len(), 4);
    // No store of any run is left in the run directories.
    for out in ["made", "again", "seed"] {
        assert!(!t.path().join(out).join("stores").exists(), "{out}");
    }
}

#[test]
fn a_state_cache_that_cannot_be_made_is_refused_before_anything_runs() {
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::write(t.path().join("m.toml"), MODEL).expect("model");
    std::fs::write(t.path().join("file"), b"not a directory").expect("file");
    let o = ledgerbench(
        &[
            "run",
            "synth",
            "--workload",
            "m.toml",
            "--backends",
            "mem",
            "--device",
            "none",
            "--state-cache",
            "file/cache",
            "--out",
            "x",
        ],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--state-cache"), "{}", stderr(&o));
}

/// A run given its state keeps `--op-rate`: its schedule starts with the
/// stream (there is no load mark to start after), not flat out.
#[test]
fn a_given_state_keeps_the_op_rate_of_the_run_after_it() {
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::write(t.path().join("m.toml"), MODEL).expect("model");
    // 3,000 operations at 2,000 a second: a second and a half at least.
    let paced = ["--state-cache", "cache", "--op-rate", "2000"];
    for out in ["made", "again"] {
        let (r, said) = synth(t.path(), out, &paced);
        for run in r["runs"].as_array().expect("runs") {
            assert!(run["replay"]["initial_state"].is_object(), "{run}");
            let wall = run["replay"]["summary"]["wall_secs"]
                .as_f64()
                .expect("wall");
            assert!(
                wall >= 1.4,
                "{out} {}: {wall} s: not paced\n{said}",
                run["label"]
            );
        }
    }
}

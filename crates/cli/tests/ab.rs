//! `ledgerbench ab`: a planted slowdown is called worse, the same code is
//! not, from results and from binaries run in A B B A order.

use std::path::Path;

mod common;
use common::{ledgerbench, read_json, stderr, stdout};

/// `n` results files edited from the smoke fixture, batch time `secs(i)`.
fn series(dir: &Path, name: &str, n: usize, secs: impl Fn(usize) -> f64) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/results/stellar-smoke");
    let base = read_json(&root.join("results.json"));
    (0..n)
        .map(|i| {
            let mut j = base.clone();
            for run in j["runs"].as_array_mut().expect("runs") {
                run["summary"]["batch_secs"] = serde_json::json!(secs(i));
            }
            let p = dir.join(format!("{name}-{i}.json"));
            std::fs::write(&p, serde_json::to_vec(&j).expect("json")).expect("write");
            p.display().to_string()
        })
        .collect()
}

fn ab(dir: &Path, base: &[String], cur: &[String]) -> std::process::Output {
    let mut args = vec!["ab", "--metric", "summary.batch_secs", "--baseline"];
    args.extend(base.iter().map(String::as_str));
    args.push("--current");
    args.extend(cur.iter().map(String::as_str));
    ledgerbench(&args, dir)
}

#[test]
fn from_results_eight_percent_slower_is_worse_and_the_same_is_no_change() {
    let t = tempfile::tempdir().expect("tempdir");
    // Run-to-run noise of about 1%, the same pattern on both sides.
    let noise = |i: usize| 1.0 + [0.0, 0.01, -0.01, 0.005, -0.005, 0.008][i % 6];
    let a = series(t.path(), "a", 12, |i| 2.0 * noise(i));
    let slow = series(t.path(), "b", 12, |i| 2.16 * noise(i + 1));
    let o = ab(t.path(), &a, &slow);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("| worse |"), "{}", stdout(&o));
    let same = series(t.path(), "c", 12, |i| 2.0 * noise(i + 1));
    let o = ab(t.path(), &a, &same);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("| no change |"), "{}", stdout(&o));
    // Unpaired or too few: refused with what to give.
    let o = ab(t.path(), &a[..3], &same[..2]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("as many of each"), "{}", stderr(&o));
    let o = ab(t.path(), &a[..3], &same[..3]);
    assert!(stderr(&o).contains("--rounds"), "{}", stderr(&o));
}

#[test]
fn binaries_run_alternately_and_a_planted_slowdown_fails_the_gate() {
    let t = tempfile::tempdir().expect("tempdir");
    let bin = env!("CARGO_BIN_EXE_ledgerbench");
    let slow = t.path().join("slow.sh");
    std::fs::write(
        &slow,
        format!("#!/bin/sh\nLEDGERBENCH_PLANT_SLOWDOWN_PCT=100 exec '{bin}' \"$@\"\n"),
    )
    .expect("script");
    std::fs::set_permissions(&slow, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let slow = slow.display().to_string();
    let run = [
        "--",
        "run",
        "stellar",
        "--preset",
        "smoke",
        "--backends",
        "rocksdb-leveled",
        "--device",
        "none",
    ];
    let mut args = vec![
        "ab",
        "--baseline",
        bin,
        "--current",
        &slow,
        "--rounds",
        "6",
        "--alpha",
        "0.2",
        "--out",
        "ab",
        "--metric",
        "summary.batch_secs",
    ];
    args.extend_from_slice(&run);
    let o = ledgerbench(&args, t.path());
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("| worse |"), "{}", stdout(&o));
    // A B B A A B ...: the second and third runs are current.
    let kept = read_json(&t.path().join("ab/ab.json"));
    let sides: Vec<&str> = kept["samples"]["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r[1].as_str().expect("side"))
        .collect();
    assert_eq!(sides[..8], ["A", "B", "B", "A", "A", "B", "B", "A"]);
    assert_eq!(sides.len(), 12);
    // A run's log keeps both its streams (each opened apart, they wrote
    // over each other from offset 0).
    let log = std::fs::read_to_string(t.path().join("ab/00-baseline.log")).expect("log");
    assert!(
        log.contains("ledgerbench: stellar preset") && log.contains("## Ingestion"),
        "{log}"
    );
    let planted = read_json(&t.path().join("ab/01-current/results.json"));
    assert_eq!(planted["runs"][0]["planted_slowdown_pct"], 100.0);
    let plain = read_json(&t.path().join("ab/00-baseline/results.json"));
    assert!(plain["runs"][0].get("planted_slowdown_pct").is_none());
    // The kept samples judge again to the same table.
    let again = ledgerbench(
        &["ab", "--alpha", "0.2", "--rejudge", "ab/ab.json"],
        t.path(),
    );
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(stdout(&again), stdout(&o));
    // A directory with files is not written into.
    let mut args = vec![
        "ab",
        "--baseline",
        bin,
        "--current",
        bin,
        "--rounds",
        "4",
        "--alpha",
        "0.2",
        "--out",
        "ab",
    ];
    args.extend_from_slice(&run);
    let o = ledgerbench(&args, t.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("holds files"), "{}", stderr(&o));
}

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

/// The side (A or B) of each run an ab.json kept, in run order.
fn sides(kept: &serde_json::Value) -> Vec<&str> {
    kept["samples"]["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r[1].as_str().expect("side"))
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
        "--pregenerate",
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
    let sides = sides(&kept);
    assert_eq!(sides[..8], ["A", "B", "B", "A", "A", "B", "B", "A"]);
    assert_eq!(sides.len(), 12);
    // A run's log keeps both its streams (each opened apart, they wrote
    // over each other from offset 0).
    let log = std::fs::read_to_string(t.path().join("ab/000-baseline.log")).expect("log");
    assert!(
        log.contains("ledgerbench: stellar preset") && log.contains("## Ingestion"),
        "{log}"
    );
    // Each side generated its ledgers once (run 3 is round 2's A), and
    // the spools are gone with the rounds.
    let log = std::fs::read_to_string(t.path().join("ab/003-baseline.log")).expect("log");
    assert!(log.contains("pregenerate: reusing"), "{log}");
    let left: Vec<_> = std::fs::read_dir(t.path().join("ab"))
        .expect("ls")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("spool"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let planted = read_json(&t.path().join("ab/001-current/results.json"));
    assert_eq!(planted["runs"][0]["planted_slowdown_pct"], 100.0);
    let plain = read_json(&t.path().join("ab/000-baseline/results.json"));
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

/// A stand-in for a ledgerbench binary: each call writes the next of the
/// prepared results into the `--out` it is given (ab passes it last).
fn replayer(dir: &Path, series: &[String]) -> String {
    let list = dir.join("series.txt");
    std::fs::write(&list, series.join("\n") + "\n").expect("list");
    let bin = dir.join("replay.sh");
    std::fs::write(
        &bin,
        format!(
            "#!/bin/sh\nfor a; do out=$a; done\nn=$(cat '{c}' 2>/dev/null || echo 0)\nmkdir -p \"$out\"\ncp \"$(sed -n \"$((n + 1))p\" '{l}')\" \"$out/results.json\"\necho $((n + 1)) > '{c}'\n",
            c = dir.join("count").display(),
            l = list.display()
        ),
    )
    .expect("script");
    std::fs::set_permissions(&bin, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    bin.display().to_string()
}

#[test]
fn a_noise_target_adds_rounds_while_the_noise_is_wider_and_says_when_it_stays() {
    let t = tempfile::tempdir().expect("tempdir");
    let run = |name: &str, noise: &dyn Fn(usize) -> f64, extra: &[&str]| {
        let dir = t.path().join(name);
        std::fs::create_dir(&dir).expect("dir");
        let s = series(&dir, "r", 48, |i| 2.0 * noise(i));
        let bin = replayer(&dir, &s);
        let mut args = vec![
            "ab",
            "--baseline",
            &bin,
            "--current",
            &bin,
            "--rounds",
            "6",
            "--alpha",
            "0.05",
            "--metric",
            "summary.batch_secs",
            "--out",
            "ab",
        ];
        args.extend_from_slice(extra);
        let o = ledgerbench(&args, &dir);
        let kept = dir.join("ab/ab.json");
        let kept = if kept.exists() {
            read_json(&kept)
        } else {
            serde_json::Value::Null
        };
        (o, kept)
    };
    let quiet = |i: usize| 1.0 + 0.002 * ((i * 7) % 5) as f64;
    let target = [
        "--noise-target",
        "summary.batch_secs=5",
        "--max-rounds",
        "12",
    ];
    // Quiet runs: the noise is inside the target after --rounds, none added.
    let (o, kept) = run("quiet", &quiet, &target);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(kept["rounds"], 6, "{}", stderr(&o));
    assert!(!stdout(&o).contains("over its target"), "{}", stdout(&o));
    // Noisy runs: rounds added two at a time up to --max-rounds, still in
    // A B B A order, and the output says the noise stayed over its target.
    let noisy = |i: usize| 1.0 + [0.0, 0.3, -0.2, 0.25, -0.3, 0.1, 0.2][i % 7];
    let (o, kept) = run("noisy", &noisy, &target);
    assert_eq!(kept["rounds"], 12, "{}", stderr(&o));
    let sides = sides(&kept);
    assert_eq!(sides, ["A", "B", "B", "A"].repeat(6));
    assert!(stderr(&o).contains("on to 8 rounds"), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("Noise over its target"),
        "{}",
        stdout(&o)
    );
    assert_eq!(kept["noise_targets"][0]["pct"], 5.0);
    // One per run of the fixture (four backends, the same values).
    assert_eq!(kept["over_target"].as_array().map(Vec::len), Some(4));
    // Judged again from ab.json, the same note.
    let again = ledgerbench(
        &["ab", "--alpha", "0.05", "--rejudge", "ab/ab.json"],
        &t.path().join("noisy"),
    );
    assert_eq!(stdout(&again), stdout(&o));
    // Noisy first, quiet after: it stops once the noise is inside (12
    // rounds here), not at --max-rounds.
    let settles = |i: usize| {
        if i < 12 {
            1.0 + 0.1 * [0.0, 1.0, -1.0, 0.8, -0.6][i % 5]
        } else {
            quiet(i)
        }
    };
    let (o, kept) = run(
        "settles",
        &settles,
        &[
            "--noise-target",
            "summary.batch_secs=5",
            "--max-rounds",
            "24",
        ],
    );
    assert_eq!(kept["rounds"], 12, "{}", stderr(&o));
    assert!(stderr(&o).contains("on to 8 rounds"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("on to 14"), "{}", stderr(&o));
    // A target no judged timing matches is refused after the first run.
    let (o, _) = run("unknown", &quiet, &["--noise-target", "nothing.like.it=5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no judged timing matches"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("round 1/6"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("round 2/6"), "{}", stderr(&o));
    // With results, there is nothing to run more of.
    let o = ledgerbench(
        &[
            "ab",
            "--baseline",
            "quiet/r-0.json",
            "quiet/r-1.json",
            "quiet/r-2.json",
            "--current",
            "quiet/r-3.json",
            "quiet/r-4.json",
            "quiet/r-5.json",
            "--noise-target",
            "summary.batch_secs=1",
        ],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("as binaries"), "{}", stderr(&o));
}

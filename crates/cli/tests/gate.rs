//! `ledgerbench compare` as the CI gate uses it: exit codes, and the gate
//! failing on a regression, a fall, a vanished metric and a device meter.

use std::path::Path;
use std::process::Output;

mod common;
use common::{ledgerbench, read_json, stderr, stdout};

#[test]
fn compare_exits_1_on_a_regression_and_2_on_incomparable_results() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/results/stellar-smoke");
    let t = tempfile::tempdir().expect("tempdir");
    let mut j = read_json(&root.join("results.json"));
    let wa = &mut j["runs"][0]["summary"]["stores"]["txdata"]["write_amp_engine"];
    *wa = serde_json::json!(wa.as_f64().expect("WA") * 1.5);
    std::fs::write(
        t.path().join("worse.json"),
        serde_json::to_vec(&j).expect("json"),
    )
    .expect("write");
    let base = root.display().to_string();
    let same = ledgerbench(
        &["compare", "--baseline", &base, "--current", &base],
        t.path(),
    );
    assert_eq!(same.status.code(), Some(0), "{}", stderr(&same));
    let worse = ledgerbench(
        &["compare", "--baseline", &base, "--current", "worse.json"],
        t.path(),
    );
    assert_eq!(worse.status.code(), Some(1), "{}", stderr(&worse));
    assert!(String::from_utf8_lossy(&worse.stdout).contains("| regressed"));
    j["config"]["ledgers"] = serde_json::json!(7);
    std::fs::write(
        t.path().join("other.json"),
        serde_json::to_vec(&j).expect("json"),
    )
    .expect("write");
    let other = ledgerbench(
        &["compare", "--baseline", &base, "--current", "other.json"],
        t.path(),
    );
    assert_eq!(other.status.code(), Some(2));
    assert!(stderr(&other).contains("--force"), "{}", stderr(&other));
    let rep = ledgerbench(&["report", &base, "--out", "rep"], t.path());
    assert!(rep.status.success(), "{}", stderr(&rep));
    assert!(t.path().join("rep/report.md").exists());
    let bmf = ledgerbench(&["export", "bencher", &base], t.path());
    assert!(bmf.status.success());
    let v: serde_json::Value = serde_json::from_slice(&bmf.stdout).expect("BMF is JSON");
    assert!(v.as_object().is_some_and(|o| !o.is_empty()));
}

/// Writes `j` as `name` in `dir` and compares it with `base`.
fn compare_with(
    base: &str,
    j: &serde_json::Value,
    name: &str,
    extra: &[&str],
    dir: &Path,
) -> Output {
    std::fs::write(dir.join(name), serde_json::to_vec(j).expect("json")).expect("write");
    let mut args = vec!["compare", "--baseline", base, "--current", name];
    args.extend_from_slice(extra);
    ledgerbench(&args, dir)
}

#[test]
fn the_gate_fails_on_a_fallen_counter_a_vanished_metric_and_a_changed_device_meter() {
    // The committed gate baseline with private loop devices.
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results/baselines/ci-smoke-devices");
    let base = root.display().to_string();
    let t = tempfile::tempdir().expect("tempdir");
    let orig = read_json(&root.join("results.json"));
    let gate = [
        "--only",
        "counter,exact",
        "--json",
        "rows.json",
        "--overwrite",
    ];
    // A WAL no longer counted: engine write amplification falls.
    let mut fell = orig.clone();
    let wa = &mut fell["runs"][0]["summary"]["stores"]["txdata"]["write_amp_engine"];
    *wa = serde_json::json!(wa.as_f64().expect("WA") * 0.5);
    let o = compare_with(&base, &fell, "fell.json", &gate, t.path());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let rows: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.path().join("rows.json")).expect("--json written"))
            .expect("rows");
    let row = rows
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["name"] == "summary.stores.txdata.write_amp_engine" && r["verdict"] == "fell")
        .expect("the planted fall is a row of its own");
    assert_eq!(row["class"], "counter");
    // The same fall, let through on purpose by a wide threshold or by
    // judging exact figures only.
    let o = compare_with(
        &base,
        &fell,
        "fell.json",
        &["--threshold", "*write_amp_engine=60"],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = compare_with(&base, &fell, "fell.json", &["--only", "exact"], t.path());
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    // A meter that reads 0.
    let mut zero = orig.clone();
    zero["runs"][1]["batches"][2]["stores"][1]["engine_write_bytes"] = serde_json::json!(0);
    let o = compare_with(&base, &zero, "zero.json", &gate, t.path());
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("dropped to 0"), "{}", stdout(&o));
    // A metric that vanished.
    let mut gone = orig.clone();
    let stores = gone["runs"][0]["summary"]["stores"]["txindex"]
        .as_object_mut()
        .expect("store summary");
    assert!(stores.remove("write_amp_engine").is_some());
    let o = compare_with(&base, &gone, "gone.json", &gate, t.path());
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("vanished"), "{}", stdout(&o));
    // A device meter that changed past its band.
    let mut dev = orig;
    let mut planted = false;
    for s in dev["runs"][0]["batches"][3]["stores"]
        .as_array_mut()
        .expect("stores")
    {
        if let Some(b) = s.get_mut("device_write_bytes") {
            *b = serde_json::json!(b.as_u64().expect("bytes") * 2 + 1_000_000);
            planted = true;
        }
    }
    assert!(planted, "the devices baseline has device bytes per batch");
    let o = compare_with(&base, &dev, "dev.json", &gate, t.path());
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("device_write_bytes"), "{}", stdout(&o));
}

//! Reports, comparisons and exports from the committed fixtures.

use std::path::{Path, PathBuf};

use ledgerbench_report::compare::{self, Options, Verdict};
use ledgerbench_report::doc::{self, Loaded};
use ledgerbench_report::metrics::Class;
use ledgerbench_report::{ReportError, bencher, render};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/results")
        .join(name)
}

fn smoke() -> Loaded {
    doc::load(&fixture("stellar-smoke")).expect("fixture loads")
}

/// A copy of `d` with its JSON changed by `f`, reparsed as a file would be.
fn edited(d: &Loaded, f: impl FnOnce(&mut serde_json::Value)) -> Loaded {
    let mut json = d.json.clone();
    f(&mut json);
    let t = tempfile::tempdir().expect("tempdir");
    let p = t.path().join("results.json");
    std::fs::write(&p, serde_json::to_vec(&json).expect("json")).expect("write");
    doc::load(&p).expect("edited file loads")
}

fn row<'a>(rows: &'a [compare::Row], run: &str, name: &str) -> &'a compare::Row {
    rows.iter()
        .find(|r| r.run == run && r.name == name)
        .unwrap_or_else(|| panic!("no row {run} {name}"))
}

#[test]
fn report_matches_its_snapshot_and_links_valid_charts() {
    // Relative paths, so the snapshot does not depend on where the clone is.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::env::set_current_dir(&root).expect("cd to workspace root");
    let docs = vec![
        doc::load(Path::new("fixtures/results/stellar-smoke")).expect("load"),
        doc::load(Path::new("fixtures/results/point-reads-small")).expect("load"),
    ];
    let t = tempfile::tempdir().expect("tempdir");
    let written = render::render(&docs, t.path()).expect("render");
    let md = std::fs::read_to_string(t.path().join("report.md")).expect("report.md");
    let snap = Path::new("fixtures/snapshots/report-smoke.md");
    if std::env::var_os("LEDGERBENCH_UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(snap.parent().expect("parent")).expect("mkdir");
        std::fs::write(snap, &md).expect("write snapshot");
    }
    let want = std::fs::read_to_string(snap)
        .expect("snapshot exists (LEDGERBENCH_UPDATE_SNAPSHOTS=1 cargo test ... writes it)");
    assert_eq!(
        md, want,
        "report changed: review, then refresh with LEDGERBENCH_UPDATE_SNAPSHOTS=1"
    );
    let charts: Vec<&str> = md
        .lines()
        .filter_map(|l| l.strip_prefix("![").and_then(|l| l.split_once("](")))
        .map(|(_, rest)| rest.trim_end_matches(')'))
        .collect();
    assert!(charts.len() >= 5, "{charts:?}");
    for c in charts {
        let svg = std::fs::read_to_string(t.path().join(c)).expect("linked chart exists");
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{c}"
        );
        // Labels are text, escaped: every character of a run label shows.
        assert!(svg.contains("</text>"), "{c} has no labels");
        assert!(!svg.contains("\u{1}"), "{c}");
    }
    let csv = std::fs::read_to_string(t.path().join("batches.csv")).expect("csv");
    // 4 backends x 4 batches x 3 stores, plus the header.
    assert_eq!(csv.lines().count(), 1 + 4 * 4 * 3);
    assert!(written.files.iter().any(|f| f.ends_with("samples.csv")));
}

#[test]
fn identical_results_pass_and_a_counter_regression_fails() {
    let base = smoke();
    let rows = compare::compare(
        std::slice::from_ref(&base),
        std::slice::from_ref(&base),
        &Options::default(),
    )
    .expect("comparable");
    assert!(!compare::failed(&rows));
    let worse = edited(&base, |j| {
        let wa = &mut j["runs"][0]["summary"]["stores"]["txdata"]["write_amp_engine"];
        *wa = serde_json::json!(wa.as_f64().expect("rocksdb reports WA") * 1.05);
    });
    let run = base.json["runs"][0]["label"]
        .as_str()
        .expect("label")
        .to_string();
    let rows = compare::compare(
        std::slice::from_ref(&base),
        std::slice::from_ref(&worse),
        &Options::default(),
    )
    .expect("comparable");
    let r = row(&rows, &run, "summary.stores.txdata.write_amp_engine");
    assert_eq!(r.verdict, Verdict::Regressed);
    assert!(compare::failed(&rows));
    assert!(compare::markdown(&rows, &[]).contains("write_amp_engine"));
    // A looser threshold for that metric lets it through.
    let opts = Options {
        thresholds: vec![("*write_amp_engine".into(), 10.0)],
        ..Options::default()
    };
    let rows = compare::compare(std::slice::from_ref(&base), &[worse], &opts).expect("comparable");
    assert!(!compare::failed(&rows));
    // Exact metrics may not move at all.
    let changed = edited(&base, |j| {
        j["runs"][1]["summary"]["stores"]["txindex"]["logical_bytes"] = serde_json::json!(1);
    });
    let rows = compare::compare(&[base], &[changed], &Options::default()).expect("comparable");
    assert!(
        rows.iter()
            .any(|r| r.verdict == Verdict::Changed && r.class == Class::Exact)
    );
}

#[test]
fn differing_configs_are_refused_unless_forced() {
    let base = smoke();
    let other = edited(&base, |j| j["config"]["ledgers"] = serde_json::json!(41));
    let e = compare::compare(
        std::slice::from_ref(&base),
        std::slice::from_ref(&other),
        &Options::default(),
    )
    .expect_err("refused");
    assert!(matches!(e, ReportError::Incomparable(_)));
    assert!(
        e.to_string().contains("config") && e.to_string().contains("--force"),
        "{e}"
    );
    let forced = Options {
        force: true,
        ..Options::default()
    };
    compare::compare(&[base], &[other], &forced).expect("forced");
}

#[test]
fn timings_are_judged_only_over_repeats() {
    let base = smoke();
    let run = base.json["runs"][0]["label"]
        .as_str()
        .expect("label")
        .to_string();
    let scaled = |k: f64| {
        edited(&base, |j| {
            let w = &mut j["runs"][0]["summary"]["wall_secs"];
            *w = serde_json::json!(w.as_f64().expect("wall") * k);
        })
    };
    let name = "summary.wall_secs";
    // One run each: shown, never judged, however large the change.
    let rows = compare::compare(
        std::slice::from_ref(&base),
        &[scaled(2.0)],
        &Options::default(),
    )
    .expect("ok");
    assert_eq!(row(&rows, &run, name).verdict, Verdict::NotJudged);
    // Three runs each, 30% slower beyond their spread: a regression.
    let b = vec![scaled(1.0), scaled(1.02), scaled(0.98)];
    let c = vec![scaled(1.30), scaled(1.33), scaled(1.28)];
    let rows = compare::compare(&b, &c, &Options::default()).expect("ok");
    let r = row(&rows, &run, name);
    assert_eq!(r.verdict, Verdict::Regressed, "{r:?}");
    assert!(r.interval.expect("interval").0 > 1.1);
    // Three runs each within noise: the same.
    let c = vec![scaled(1.01), scaled(0.99), scaled(1.03)];
    let rows = compare::compare(&b, &c, &Options::default()).expect("ok");
    assert_eq!(row(&rows, &run, name).verdict, Verdict::Same);
}

#[test]
fn bencher_export_carries_every_metric() {
    let base = smoke();
    let bmf = bencher::export(std::slice::from_ref(&base));
    let run = base.json["runs"][0]["label"].as_str().expect("label");
    let want = base.json["runs"][0]["summary"]["stores"]["txdata"]["space_amp"]
        .as_f64()
        .expect("space amp");
    let got = bmf[format!("stellar/{run}/summary.stores.txdata")]["space_amp"]["value"]
        .as_f64()
        .expect("exported");
    assert_eq!(got, want);
}

#[test]
fn bad_files_say_what_is_wrong() {
    let t = tempfile::tempdir().expect("tempdir");
    let missing = doc::load(&t.path().join("nope.json")).expect_err("missing");
    assert!(missing.to_string().contains("nope.json"), "{missing}");
    let p = t.path().join("x.json");
    std::fs::write(&p, b"{ not json").expect("write");
    assert!(
        doc::load(&p)
            .expect_err("bad")
            .to_string()
            .contains("not JSON")
    );
    std::fs::write(&p, br#"{"schema_version": 99, "workload": "stellar"}"#).expect("write");
    assert!(
        doc::load(&p)
            .expect_err("newer")
            .to_string()
            .contains("schema version 99")
    );
    std::fs::write(&p, br#"{"hello": 1}"#).expect("write");
    assert!(
        doc::load(&p)
            .expect_err("foreign")
            .to_string()
            .contains("not a ledgerbench results file")
    );
}

#[test]
fn results_of_two_machines_merge_with_the_machine_as_a_dimension() {
    let a = edited(&smoke(), |j| {
        j["env"]["host"] = serde_json::json!("nvme-box")
    });
    let b = edited(&smoke(), |j| {
        j["env"]["host"] = serde_json::json!("network-disk")
    });
    let t = tempfile::tempdir().expect("tempdir");
    render::render(&[a.clone(), b.clone()], t.path()).expect("render");
    let md = std::fs::read_to_string(t.path().join("report.md")).expect("report");
    let run = a.json["runs"][0]["label"].as_str().expect("label");
    assert!(md.contains(&format!("| nvme-box/{run} |")), "{md}");
    assert!(md.contains(&format!("| network-disk/{run} |")));
    assert!(
        md.contains("| nvme-box |") && md.contains("| network-disk |"),
        "machines table"
    );
    // Counters still compare across machines; timings are shown, not judged.
    let rows = compare::compare(&[a], &[b], &Options::default()).expect("comparable");
    assert!(!compare::failed(&rows));
}

#[test]
fn results_of_different_durability_are_refused_unless_forced() {
    let base = edited(&smoke(), |j| j["durability"] = serde_json::json!("process"));
    let other = edited(&base, |j| j["durability"] = serde_json::json!("power"));
    let e = compare::compare(
        std::slice::from_ref(&base),
        std::slice::from_ref(&other),
        &Options::default(),
    )
    .expect_err("refused");
    assert!(
        e.to_string().contains("durability: process vs power"),
        "{e}"
    );
    // A file from before levels were recorded is not silently the same level.
    let old = smoke();
    assert!(compare::compare(&[old], std::slice::from_ref(&base), &Options::default()).is_err());
    let forced = Options {
        force: true,
        ..Options::default()
    };
    compare::compare(&[base], &[other], &forced).expect("forced");
}

#[test]
fn the_machines_table_names_the_engines_of_every_file() {
    // Two files of one machine and build, each running other engines.
    let a = edited(&smoke(), |j| {
        j["env"]["engine_versions"] = serde_json::json!({ "lmdb": "0.9.70" })
    });
    let b = edited(&smoke(), |j| {
        j["env"]["engine_versions"] = serde_json::json!({ "pebble": "1.1.5" })
    });
    let t = tempfile::tempdir().expect("tempdir");
    render::render(&[a, b], t.path()).expect("render");
    let md = std::fs::read_to_string(t.path().join("report.md")).expect("report");
    let machines: Vec<&str> = md
        .lines()
        .skip_while(|l| *l != "## Machines")
        .take_while(|l| *l != "## Results files")
        .filter(|l| l.starts_with("| ") && !l.starts_with("| machine"))
        .collect();
    assert_eq!(machines.len(), 1, "{machines:?}");
    assert!(
        machines[0].contains("lmdb 0.9.70, pebble 1.1.5"),
        "{machines:?}"
    );
}

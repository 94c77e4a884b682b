//! The verdict's answer carries one line per capacity search among the
//! results: every backend's sustained rate, highest first, with the rate
//! that failed or why none did.

use std::path::{Path, PathBuf};

use ledgerbench_report::doc::{self, Loaded};
use ledgerbench_report::render::{VerdictOptions, summary};

fn results() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results")
}

fn capacity_row(answer: &str) -> String {
    answer
        .lines()
        .find(|l| l.starts_with("| transactions by hash"))
        .unwrap_or_else(|| panic!("no capacity row in\n{answer}"))
        .to_string()
}

/// The published 5 s `txdata` search, edited by `f`, as a loaded file.
fn search(dir: &Path, f: impl FnOnce(&mut serde_json::Value)) -> Loaded {
    let path = results().join("threads-2026-11-24/capacity-txdata-5s/results.json");
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json");
    f(&mut v);
    let out = dir.join("results.json");
    std::fs::write(&out, serde_json::to_vec(&v).expect("json")).expect("write");
    doc::load(&out).expect("load")
}

#[test]
fn a_capacity_search_is_a_line_of_the_answer_highest_rate_first() {
    let t = tempfile::tempdir().expect("tempdir");
    let verdict =
        doc::load(&results().join("verdict-sweeps-2026-11-22/partitioned")).expect("load");
    let opts = VerdictOptions::default();

    // Without a capacity search, no capacity table.
    let alone = summary(std::slice::from_ref(&verdict), &opts)
        .expect("render")
        .expect("a verdict");
    assert!(
        !alone.contains("Sustainable rate at a close interval"),
        "{alone}"
    );

    let published = search(t.path(), |_| {});
    let a = summary(&[verdict.clone(), published], &opts)
        .expect("render")
        .expect("a verdict");
    let row = capacity_row(&a);
    assert!(row.contains("| 5 s | 256 MiB | `power` |"), "{row}");
    assert!(row.contains("fjall 74989 (100000 failed)"), "{row}");
    let at = |name: &str| row.find(name).unwrap_or_else(|| panic!("{name} in {row}"));
    assert!(at("fjall") < at("rocksdb-leveled"), "{row}");
    assert!(at("rocksdb-leveled") < at("lmdb"), "{row}");
    // Pebble's search ended in an error after its lowest rate held.
    assert!(
        row.contains("pebble 1000 (then an error ended the search)"),
        "{row}"
    );

    // Had fjall held the highest rate tried, its figure is a lower bound.
    let d = t.path().join("held");
    std::fs::create_dir(&d).expect("dir");
    let held = search(&d, |v| {
        let fjall = v["runs"]
            .as_array_mut()
            .expect("runs")
            .iter_mut()
            .find(|r| r["backend"] == "fjall")
            .expect("fjall");
        fjall["sustained_rate"] = 100_000.0.into();
        fjall.as_object_mut().expect("run").remove("failed_rate");
    });
    let row = capacity_row(
        &summary(&[verdict, held], &opts)
            .expect("render")
            .expect("a verdict"),
    );
    assert!(
        row.contains("fjall 100000 (the highest tried: a lower bound)"),
        "{row}"
    );
}

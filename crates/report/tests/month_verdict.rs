//! The verdict with a month measured: a checkpointed run of a config's
//! month is evidence for that config (its batch time beside the
//! prediction, its debt and lookups at the month's size), never a
//! candidate of its own.

use std::path::Path;

use ledgerbench_report::doc::{self, Loaded};
use ledgerbench_report::render::{VerdictOptions, summary, summary_brief};
use serde_json::{Value, json};

mod common;
use common::{sweeps, txdata_row};

fn results(folder: &str) -> Value {
    let bytes = std::fs::read(sweeps().join(folder).join("results.json")).expect("results");
    serde_json::from_slice(&bytes).expect("json")
}

/// A month run of the sweep run `label` in `folder`: its batches repeated
/// to `n`, each checkpointed, `txdata`'s debt `debt(batch)` bytes, and its
/// lookups timed after the last batch at a p99 of `p99_us`.
fn month(
    dir: &Path,
    folder: &str,
    label: &str,
    n: u32,
    debt: impl Fn(u32) -> u64,
    p99_us: f64,
) -> Loaded {
    let mut doc = results(folder);
    let runs = doc["runs"].as_array().expect("runs").clone();
    let mut run = runs
        .into_iter()
        .find(|r| r["label"] == label)
        .expect("the sweep's run");
    let measured = run["batches"].as_array().expect("batches").clone();
    let latency = json!({"count": 100, "p50_us": p99_us / 4.0, "p90_us": p99_us / 2.0,
        "p99_us": p99_us, "p999_us": p99_us, "max_us": p99_us, "mean_us": p99_us / 4.0});
    let batches: Vec<Value> = (1..=n)
        .map(|b| {
            let mut x = measured[(b as usize - 1) % measured.len()].clone();
            x["batch"] = json!(b);
            x["checkpoint_secs"] = json!(0.01);
            for s in x["stores"].as_array_mut().expect("stores") {
                if s["store"] == "txdata" {
                    s["engine"]["pending_compaction_bytes"] = json!(debt(b));
                }
            }
            if b == n {
                x["lookups"] = json!({"batch": b, "one_step": latency, "two_step": latency,
                    "reads": {"txs": 100, "stores": []}});
            }
            x
        })
        .collect();
    run["batches"] = json!(batches);
    run["label"] = json!("month");
    doc["runs"] = json!([run]);
    let path = dir.join(format!("{folder}-month"));
    std::fs::create_dir_all(&path).expect("dir");
    std::fs::write(path.join("results.json"), doc.to_string()).expect("write");
    doc::load(&path).expect("load")
}

fn load(folders: &[&str]) -> Vec<Loaded> {
    folders
        .iter()
        .map(|f| doc::load(&sweeps().join(f)).expect("load"))
        .collect()
}

#[test]
fn a_runner_up_whose_month_fell_behind_is_set_aside_by_its_own_month() {
    let t = tempfile::tempdir().expect("tempdir");
    let opts = VerdictOptions::default();
    let before = summary_brief(&load(&["partitioned", "background"]), &opts)
        .expect("render")
        .expect("a verdict");
    let row = txdata_row(&before);
    assert!(row.contains("| `background/rocksdb-leveled` |"), "{row}");
    assert!(!before.contains("month measured"), "{before}");

    // Background leveled run to batch 60, its debt rising 100 MiB a batch
    // and its GETs within any bound (no fan-out run: the bound is not
    // weighed).
    let mut docs = load(&["partitioned", "background"]);
    docs.push(month(
        t.path(),
        "background",
        "rocksdb-leveled@128MiB",
        60,
        |b| u64::from(b) * (100 << 20),
        2_000.0,
    ));
    let brief = summary_brief(&docs, &opts)
        .expect("render")
        .expect("a verdict");
    let row = txdata_row(&brief);
    assert!(
        !row.contains("| `background/rocksdb-leveled` |"),
        "the month's debt sets it aside: {row}"
    );
    assert!(
        brief.contains("Set aside, compaction fell behind: `txdata`: ")
            && brief.contains("`background/rocksdb-leveled`"),
        "{brief}"
    );
    // The month run is no candidate of its own, and is named in the line
    // of months measured with its out-of-sample error.
    assert!(!row.contains("month/"), "{row}");
    let line = brief
        .lines()
        .find(|l| l.starts_with("- Months measured for `txdata`"))
        .expect("the months line");
    assert!(
        line.contains("background-month/month")
            && line.contains("model ")
            && line.contains("debt rising")
            && line.contains("stopped after batch 60"),
        "{line}"
    );
    // The pick (partitioned) ran no month: its row says so, and its
    // predicted month gives the batches it rests on.
    assert!(row.contains("| not run |"), "{row}");
    assert!(row.contains(", from 54 batches |"), "{row}");
    // The full answer's text gives the debt over the month's batches.
    let full = summary(&docs, &opts).expect("render").expect("a verdict");
    assert!(full.contains("| month measured, its scale |"), "{full}");
}

#[test]
fn the_pick_with_its_month_measured_shows_it_beside_the_prediction() {
    let t = tempfile::tempdir().expect("tempdir");
    let opts = VerdictOptions::default();
    let mut docs = load(&["partitioned", "background"]);
    // Partitioned run to the month's 234 batches, no debt.
    docs.push(month(
        t.path(),
        "partitioned",
        "rocksdb-partitioned@128MiB",
        234,
        |_| 0,
        4_000.0,
    ));
    let brief = summary_brief(&docs, &opts)
        .expect("render")
        .expect("a verdict");
    let row = txdata_row(&brief);
    assert!(
        row.contains("| `partitioned/rocksdb-partitioned` |"),
        "{row}"
    );
    // Its measured month and the model's signed error on it; the whole
    // month, so no "of 234 batches".
    let cell = row
        .split(" | ")
        .find(|c| c.contains("(model "))
        .expect("the measured cell");
    assert!(!cell.contains("of 234"), "{cell}");
    assert!(
        cell.ends_with("%)") && (cell.contains("(model +") || cell.contains("(model -")),
        "{cell}"
    );
    // The runner-up kept up (no month of its own): still the runner-up.
    assert!(row.contains("| `background/rocksdb-leveled` |"), "{row}");
    assert!(
        !brief.contains("over the lookup bound at a month"),
        "{brief}"
    );
    let line = brief
        .lines()
        .find(|l| l.starts_with("- Months measured for `txdata`"))
        .expect("the months line");
    assert!(
        line.contains("GET p99 4.0 ms (existing keys) at batch 234") && !line.contains("debt"),
        "{line}"
    );
}

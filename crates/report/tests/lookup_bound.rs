//! The verdict's lookup bound on the published sweeps: a fan-out run of
//! the recommended `txdata` design, with its exact settings, decides
//! whether it stays recommended.

use std::path::Path;

use ledgerbench_report::doc::{self, Loaded};
use ledgerbench_report::render::{VerdictOptions, summary};
use ledgerbench_results::fanout::{
    Checkpoint, FanOutConfig, FanOutResults, FanOutRun, Held, PassCost, Passes,
};
use ledgerbench_results::{Latency, RunHeader, SCHEMA_VERSION};

mod common;
use common::{sweeps, txdata_row};

fn pass(p99_us: f64) -> PassCost {
    PassCost {
        gets: 1000,
        secs: 1.0,
        stopped_early: false,
        latency: Some(Latency {
            count: 1000,
            p50_us: p99_us / 4.0,
            p90_us: p99_us / 2.0,
            p99_us,
            p999_us: p99_us,
            max_us: p99_us,
            mean_us: p99_us / 4.0,
        }),
        cpu_us_per_get: Some(10.0),
        device_reads_per_get: None,
        device_kib_per_get: None,
        probes_per_get: Some(118.0),
        filter_negatives_per_get: None,
        filter_positives_per_get: None,
        filter_misses_per_get: None,
        index_misses_per_get: None,
        data_misses_per_get: None,
        mismatches: 0,
    }
}

/// A fan-out file holding one run of `config` (`backend`) with GET p99s
/// of `found` and `missing` microseconds at the month's 234 batches.
fn fanout(
    dir: &Path,
    backend: &str,
    config: serde_json::Value,
    found: f64,
    missing: f64,
) -> Loaded {
    let c = Checkpoint {
        batches: 234,
        keys: 234_000,
        settle_secs: 0.0,
        unsettled_bytes: None,
        page_cache_dropped: true,
        open_secs: 1.0,
        held: Held {
            anon_before_open: None,
            anon_after_open: None,
            anon_after_reads: None,
            fds_before_open: None,
            fds_after_open: None,
            cgroup_peak_bytes: None,
        },
        disk_allocated_bytes: 0,
        passes: Passes {
            cold_found: pass(found),
            cold_missing: pass(missing),
            steady_found: pass(found),
            steady_missing: pass(missing),
        },
        engine: Default::default(),
    };
    let f = FanOutResults {
        header: RunHeader {
            schema_version: SCHEMA_VERSION,
            ledgerbench_version: "test".into(),
            workload: "fan-out".into(),
            seed: 42,
            started_at: "2026-11-23T00:00:00Z".into(),
            command: "ledgerbench run fan-out".into(),
            // The sweeps' machine, so labels stay `folder/run`.
            env: serde_json::from_value(sweep_json()["env"].clone()).expect("env"),
            durability: None,
            cell: None,
            scheduler: None,
        },
        config: FanOutConfig::default(),
        memory_limit_bytes: Some(256 << 20),
        engine_memory_bytes: 64 << 20,
        runs: vec![FanOutRun {
            backend: backend.into(),
            config,
            device_meter: "test".into(),
            read_path: None,
            load_secs: 1.0,
            checkpoints: vec![c],
            error: None,
        }],
    };
    let path = dir.join("fanout.json");
    std::fs::write(&path, serde_json::to_vec(&f).expect("json")).expect("write");
    doc::load(&path).expect("load")
}

fn sweep_json() -> serde_json::Value {
    let bytes = std::fs::read(sweeps().join("partitioned/results.json")).expect("results");
    serde_json::from_slice(&bytes).expect("json")
}

/// The `txdata` store's config in the partitioned sweep.
fn partitioned_config() -> serde_json::Value {
    let r = sweep_json();
    let stores = r["runs"][0]["stores"].as_array().expect("stores").clone();
    stores
        .into_iter()
        .find(|s| s["store"] == "txdata")
        .expect("txdata")["config"]
        .clone()
}

#[test]
fn the_partitioned_design_stays_recommended_only_within_the_bound() {
    let t = tempfile::tempdir().expect("tempdir");
    let docs_with = |f: Loaded| {
        let mut d: Vec<Loaded> = ["partitioned", "background-blob-tuned"]
            .iter()
            .map(|a| doc::load(&sweeps().join(a)).expect("load"))
            .collect();
        d.push(f);
        d
    };
    let opts = VerdictOptions::default();
    let answer =
        |docs: &[Loaded], o: &VerdictOptions| summary(docs, o).expect("render").expect("a verdict");

    // Within 10 ms: still recommended, and the answer gives its figure.
    let within = docs_with(fanout(
        t.path(),
        "rocksdb-partitioned",
        partitioned_config(),
        2_000.0,
        3_000.0,
    ));
    let a = answer(&within, &opts);
    let row = txdata_row(&a);
    assert!(row.contains("`partitioned/rocksdb-partitioned`"), "{row}");
    assert!(row.contains("2.0 / 3.0 ms"), "{row}");
    assert!(a.contains("Lookup bound: a `txdata` design"), "{a}");

    // Over it (a missing key at 25 ms): the next design is recommended.
    let over = docs_with(fanout(
        t.path(),
        "rocksdb-partitioned",
        partitioned_config(),
        2_000.0,
        25_000.0,
    ));
    let row = txdata_row(&answer(&over, &opts));
    assert!(!row.contains("`partitioned/rocksdb-partitioned`"), "{row}");
    // The other design (BlobDB) is set aside for its growing compaction
    // debt, so nothing is left, and the answer says why.
    assert!(
        !row.contains("`background-blob-tuned/rocksdb-blob`"),
        "{row}"
    );
    assert!(
        row.contains("fell behind in compaction or is over the lookup bound"),
        "{row}"
    );
    // A looser bound, stated by the reader, lets it back in.
    let loose = VerdictOptions {
        lookup_bound_us: 30_000.0,
        ..opts
    };
    let row = txdata_row(&answer(&over, &loose));
    assert!(row.contains("`partitioned/rocksdb-partitioned`"), "{row}");

    // Other settings are another design: a fan-out run of them decides nothing.
    let mut other = partitioned_config();
    other["base"]["cache_index_and_filter_blocks"] = false.into();
    let elsewhere = docs_with(fanout(
        t.path(),
        "rocksdb-partitioned",
        other,
        2_000.0,
        25_000.0,
    ));
    let row = txdata_row(&answer(&elsewhere, &opts));
    assert!(row.contains("`partitioned/rocksdb-partitioned`"), "{row}");
    assert!(row.contains("not measured"), "{row}");
}

//! Run files and `--set` values as users write them: any mutation of a
//! real one is taken or refused with a message, never a panic. Budget:
//! `LEDGERBENCH_FUZZ_INPUTS` / `LEDGERBENCH_FUZZ_SECS`.

use std::path::Path;

use ledgerbench_fuzz::{Budget, fuzz};

use super::plan::{file_workload, parse_run_file};
use crate::presets;
use crate::registry::{self, BackendSpec};

fn repo_file(rel: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// What `ledgerbench run stellar --config FILE` does with a run file before
/// it runs anything: parse, preset, `[workload]` merged and validated,
/// `engine_memory` parsed, every `[backend.NAME]` table applied and its
/// durability checked. True when all of it was accepted.
fn take_run_file(bytes: &[u8]) -> bool {
    let path = Path::new("fuzz.toml");
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    let Ok(file) = parse_run_file(text, path) else {
        return false;
    };
    let Some(preset) = presets::get(file.preset.as_deref().unwrap_or("quick")) else {
        return false;
    };
    let Ok(w) = file_workload(preset.workload, &file, path) else {
        return false;
    };
    if w.validate().is_err() {
        return false;
    }
    if let Some(m) = &file.engine_memory
        && crate::size::parse_named("engine_memory", m).is_err()
    {
        return false;
    }
    for (name, table) in &file.backend {
        let Ok(mut spec) = BackendSpec::by_name(name) else {
            return false;
        };
        if spec.apply_overrides(table).is_err()
            || spec
                .check_durability(ledgerbench_core::Durability::Process)
                .is_err()
        {
            return false;
        }
    }
    true
}

#[test]
fn run_files() {
    let seeds = vec![
        repo_file("results/verdict-sweeps-2026-11-22/manual.toml"),
        repo_file("results/verdict-sweeps-2026-11-22/blob-tuned.toml"),
        repo_file("results/verdict-2026-11-22/background.toml"),
        br#"preset = "smoke"
backends = ["rocksdb-leveled", "lmdb", "mdbx"]
engine_memory = "64MiB"
[workload]
ledgers = 40
batch_ledgers = 10
commit_ledgers = 5
max_batch_secs = 30.5
[workload.streaming]
ledgers = 10
lookup_rate = 100.0
arrival = "poisson"
lookup_rates = [50.0, 100.0]
[workload.profile]
tx_per_ledger_quantiles = [71.0, 203.0, 270.0, 586.0, 917.0]
tx_record_median_bytes = 4260.0
zstd_level = 3
[backend.lmdb]
map_size = 1073741824
[backend.rocksdb-leveled]
use_direct_reads = true
"#
        .to_vec(),
    ];
    for s in &seeds {
        assert!(
            take_run_file(s),
            "seed refused: {}",
            String::from_utf8_lossy(s)
        );
    }
    let r = fuzz("run-file", &seeds, Budget::from_env(), take_run_file);
    eprintln!("{r}");
}

#[test]
fn set_values() {
    let seeds: Vec<Vec<u8>> = [
        "rocksdb-leveled.use_direct_reads=true",
        "rocksdb-leveled.block_cache_bytes=67108864",
        "rocksdb-fifo.compaction.max_table_files_size=157286400",
        "rocksdb-partitioned.partition_flushes=1",
        "lmdb.map_size=1073741824",
        "mdbx.geometry_max_bytes=1099511627776",
        "rocksdb-blob.blob.min_blob_size=4096",
        "redb.cache_bytes=16777216",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    let take = |bytes: &[u8]| {
        let Ok(line) = std::str::from_utf8(bytes) else {
            return false;
        };
        let Ok((backend, table)) = registry::parse_set(line) else {
            return false;
        };
        let Ok(mut spec) = BackendSpec::by_name(&backend) else {
            return false;
        };
        spec.apply_overrides(&table).is_ok()
    };
    let r = fuzz("set", &seeds, Budget::from_env(), take);
    eprintln!("{r}");
    assert!(r.accepted > 0, "no --set line was taken");
}

//! Named presets: the Stellar workload's shape at several sizes.

use ledgerbench_driver::stellar::{StellarConfig, StreamingConfig};

/// Preset names, smallest first.
pub const NAMES: &[&str] = &[
    "smoke",
    "quick",
    "month-scaled",
    "outgrow-memory",
    "month",
    "seed",
];

/// Ledgers in a batch of the `month` preset: the report's 2,000 over 22
/// (2,000 / 91 = 21.98), so each of its 234 batches is 1/22 of the report's.
pub const MONTH_BATCH_LEDGERS: u32 = 91;

/// A preset: the workload config and the engines' memory budget (bytes).
pub struct Preset {
    /// The workload settings.
    pub workload: StellarConfig,
    /// Memory given to each store's engine (memtables, caches); `None` keeps
    /// the backends' defaults (the report's 512 MiB x 6 memtables).
    pub engine_memory: Option<u64>,
    /// Default memory cgroup limit (page cache included), for presets whose
    /// point is behaviour once data outgrows memory.
    pub memory_limit: Option<u64>,
    /// Default `--ratio`: the limit set by the data at the last batch.
    pub ratio: Option<&'static str>,
    /// One line on what the preset is for.
    pub about: &'static str,
}

/// Looks a preset up by name.
///
/// Long because a table: one struct literal per preset.
pub fn get(name: &str) -> Option<Preset> {
    let d = StellarConfig::default();
    Some(match name {
        "smoke" => Preset {
            workload: StellarConfig {
                ledgers: 40,
                batch_ledgers: 10,
                commit_ledgers: 10,
                verify_txs: 200,
                streaming: StreamingConfig {
                    ledgers: 5,
                    close_interval_ms: 0,
                    lookup_workers: 1,
                    ..StreamingConfig::default()
                },
                ..d
            },
            engine_memory: Some(16 << 20),
            memory_limit: None,
            ratio: None,
            about: "40 ledgers in 4 batches: checks every backend end to end in seconds",
        },
        "quick" => Preset {
            workload: StellarConfig {
                ledgers: 1000,
                batch_ledgers: 100,
                // The largest commit the harness budget holds.
                commit_ledgers: 0,
                streaming: StreamingConfig {
                    ledgers: 30,
                    close_interval_ms: 500,
                    lookup_workers: 2,
                    ..StreamingConfig::default()
                },
                ..d
            },
            engine_memory: Some(64 << 20),
            memory_limit: None,
            ratio: None,
            about: "1,000 ledgers in 10 batches, then 30 streamed ledgers with lookups: a few minutes for four backends",
        },
        "month-scaled" => Preset {
            workload: StellarConfig {
                ledgers: 3000,
                batch_ledgers: 25,
                // One commit per batch, as in the published month-scaled
                // runs; that chunk needs more than the default budget
                // (measured peak 67 MiB).
                commit_ledgers: 25,
                harness_budget: 96 << 20,
                streaming: StreamingConfig {
                    ledgers: 60,
                    close_interval_ms: 500,
                    lookup_workers: 2,
                    ..StreamingConfig::default()
                },
                ..d
            },
            engine_memory: Some(32 << 20),
            // About a fifth of the smallest engine's data (1.4 GB): the
            // B-trees' pages stop fitting part way through, as at full scale.
            memory_limit: Some(320 << 20),
            ratio: None,
            about: "3,000 ledgers in 120 batches, data ~40x the memtables: compaction cost grows visibly",
        },
        "outgrow-memory" => Preset {
            workload: StellarConfig {
                // 18 batches of 400 ledgers: each puts ~103,000 random
                // keys into txdata and txindex (the report's per-batch
                // insert pattern at a fifth of its 2,000 ledgers), ~2 GB
                // of txdata in all: 8x the memory limit by the end.
                ledgers: 7200,
                batch_ledgers: 400,
                commit_ledgers: 0,
                // A batch ten times slower than a healthy one has fallen
                // off the cliff; the run records where and goes on.
                max_batch_secs: Some(600.0),
                streaming: StreamingConfig {
                    ledgers: 60,
                    close_interval_ms: 500,
                    lookup_workers: 1,
                    ..StreamingConfig::default()
                },
                ..d
            },
            engine_memory: Some(64 << 20),
            memory_limit: Some(256 << 20),
            ratio: None,
            about: "7,200 ledgers in batches of 400 (~103k random keys each), txdata 8x a 256 MiB limit: where B-trees and LSMs part ways",
        },
        "month" => Preset {
            workload: StellarConfig {
                // The report's 234 batches, each of 2,000 / 22 = 91
                // ledgers (~23,500 random keys into txdata and txindex,
                // 1/22 of its ~550,000), values as generated (the report's
                // sizes); ~6 GB of txdata at the end.
                ledgers: 234 * u64::from(MONTH_BATCH_LEDGERS),
                batch_ledgers: MONTH_BATCH_LEDGERS,
                commit_ledgers: 0,
                // Hours long: synced and kept after each batch, so
                // `--resume` goes on after a kill or a reboot.
                checkpoint: true,
                // The verdict's lookups on the run's own data: after the
                // batches the model is fitted on, half way, and at the end.
                lookups_at: vec![18, 117, 234],
                // A batch 15 minutes long has fallen off a cliff (the
                // report's worst, 23.5 min at full size, is ~1 min here).
                max_batch_secs: Some(900.0),
                streaming: StreamingConfig {
                    ledgers: 0,
                    ..StreamingConfig::default()
                },
                ..d
            },
            engine_memory: Some(64 << 20),
            memory_limit: None,
            ratio: Some("c5"),
            about: "the report's 234 batches at 1/22 of their size, memory set so txdata ends 4.8x it (the c5; --ratio i4i: 1.2x), resumable: hours",
        },
        "seed" => Preset {
            workload: d,
            engine_memory: None,
            memory_limit: None,
            ratio: None,
            about: "the report's full parameters (468,038 ledgers, batches of 2,000, 512 MiB x 6 memtables): big machines only",
        },
        _ => return None,
    })
}

/// A preset of a generated workload (`run solana --preset NAME`): its
/// settings, and the backends, threads and memory limit it runs with unless
/// given on the command line.
pub struct OpsPreset {
    /// `--param` lines, before the user's own (which win).
    pub params: &'static [&'static str],
    /// Client threads.
    pub threads: &'static str,
    /// Backends side by side.
    pub backends: &'static str,
    /// Memory cgroup limit.
    pub memory_limit: &'static str,
    /// One line on what the preset is for.
    pub about: &'static str,
}

/// Presets of the generated workloads, by workload and name.
pub const OPS: &[(&str, &str, OpsPreset)] = &[
    (
        "solana",
        "contrast",
        OpsPreset {
            // 40,000 slots of 128 shreds (~6 GB), 10,000 kept (~1.5 GB, three
            // times the limit), 8 slots in flight with 2% late repairs, purged
            // 100 slots at a time by range delete on leveled; FIFO's 1 GiB cap
            // per store keeps about as many slots. 512 MiB: three stores of a
            // 64 MiB engine budget each and eight threads outgrew 256 MiB
            // (leveled was OOM-killed after 1,500 slots).
            params: &[
                "slots=40000",
                "keep_slots=10000",
                "in_flight=8",
                "repair_fraction=0.02",
                "repair_delay_slots=8",
                "retention=\"auto\"",
                "purge_every=100",
                "slots_per_segment=500",
            ],
            threads: "8",
            backends: "rocksdb-leveled,rocksdb-fifo",
            memory_limit: "512MiB",
            about: "the Solana blockstore note's contrast: leveled (range purges) against FIFO (size cap), 8 inserters, data 3x a 512 MiB limit",
        },
    ),
    (
        "synth",
        "cosmos",
        OpsPreset {
            // The hand-written Cosmos-SDK model (examples/workloads/
            // cosmos.toml): 10.5 million keys, about 1.4 GB, 10x a 128 MiB
            // limit; one block writer and four readers; the engines a
            // Cosmos team weighs (goleveldb is the SDK's default).
            params: &["workload=\"preset:cosmos\""],
            threads: "5",
            backends: "goleveldb,pebble,rocksdb-leveled,mdbx",
            memory_limit: "128MiB",
            about: "a Cosmos-SDK node: a block of 5,000 random updates every 6 s, four RPC readers, its state 10x a 128 MiB limit",
        },
    ),
    (
        "synth",
        "mixgraph",
        OpsPreset {
            // fixtures/models/mixgraph.toml: 102,293 keys of 48 bytes read
            // before written (9 MB), 1,000,000 operations; at --scale 100x
            // its state is about 3x this limit. The quick preset's engines
            // and the two other LSMs.
            params: &["workload=\"preset:mixgraph\""],
            threads: "1",
            backends: "rocksdb-leveled,rocksdb-fifo,lmdb,mdbx,pebble,fjall",
            memory_limit: "256MiB",
            about: "RocksDB's published mixgraph example, fitted from db_bench's trace: 85% gets over 30 key ranges of unequal hotness",
        },
    ),
    (
        "synth",
        "stellar",
        OpsPreset {
            // fixtures/models/stellar.toml: the quick preset's three
            // stores as recorded (about 400 MB written), fitted.
            params: &["workload=\"preset:stellar\""],
            threads: "1",
            backends: "rocksdb-leveled,rocksdb-fifo,lmdb,mdbx",
            memory_limit: "512MiB",
            about: "Stellar's ledgers, txdata and txindex stores as a fitted model (the quick preset recorded)",
        },
    ),
    (
        "synth",
        "solana",
        OpsPreset {
            // fixtures/models/solana.toml: 128,000 data and as many
            // coding shreds (about 310 MB), fitted from `record solana`.
            params: &["workload=\"preset:solana\""],
            threads: "1",
            backends: "rocksdb-leveled,rocksdb-fifo",
            memory_limit: "512MiB",
            about: "the Solana blockstore as a fitted model: shreds inserted, 2% repaired late, slot metadata updated",
        },
    ),
];

/// The preset `name` of `workload`, or why there is none.
pub fn ops(workload: &str, name: &str) -> anyhow::Result<&'static OpsPreset> {
    if let Some((_, _, p)) = OPS.iter().find(|(w, n, _)| *w == workload && *n == name) {
        return Ok(p);
    }
    let known: Vec<String> = OPS.iter().map(|(w, n, _)| format!("{n} ({w})")).collect();
    anyhow::bail!(
        "--preset `{name}` is not a preset of {workload}; presets of generated workloads: {}",
        known.join(", ")
    )
}

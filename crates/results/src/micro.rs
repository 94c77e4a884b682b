//! Results of `ledgerbench run micro`: db_bench's staple benchmarks, with
//! db_bench's meanings, per backend.

use serde::{Deserialize, Serialize};

use crate::{Latency, RunHeader};

/// The staples, in db_bench's names.
pub const BENCHMARKS: &[&str] = &[
    "fillseq",
    "fillrandom",
    "overwrite",
    "readrandom",
    "readseq",
    "seekrandom",
    "deleterandom",
    "readwhilewriting",
];

/// Settings of a micro run (db_bench's flags of the same names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MicroConfig {
    /// Seed of keys picked and values.
    pub seed: u64,
    /// Benchmarks in order, as db_bench's `--benchmarks`.
    pub benchmarks: Vec<String>,
    /// Keys in the key space (`--num`): fills write this many.
    pub num: u64,
    /// Reads per reading thread (`--reads`; db_bench's default is `--num`).
    pub reads: u64,
    /// Key bytes (`--key_size`): the key number big-endian, then `0`s.
    pub key_size: usize,
    /// Value bytes (`--value_size`).
    pub value_size: usize,
    /// Threads of every benchmark but fillseq and readseq (`--threads`),
    /// each doing `num` writes or `reads` reads, as db_bench's do.
    pub threads: u64,
    /// Puts per commit (`--batch_size`).
    pub batch_size: u64,
}

impl Default for MicroConfig {
    fn default() -> Self {
        Self {
            seed: 42,
            benchmarks: BENCHMARKS.iter().map(|s| s.to_string()).collect(),
            num: 1_000_000,
            reads: 1_000_000,
            key_size: 16,
            value_size: 100,
            threads: 1,
            batch_size: 1,
        }
    }
}

impl MicroConfig {
    /// Checks the settings.
    pub fn validate(&self) -> Result<(), crate::InvalidConfig> {
        if let Some(b) = self
            .benchmarks
            .iter()
            .find(|b| !BENCHMARKS.contains(&b.as_str()))
        {
            return Err(format!(
                "unknown benchmark `{b}`; accepted: {}",
                BENCHMARKS.join(",")
            )
            .into());
        }
        if self.benchmarks.is_empty() {
            return Err("--benchmarks names none".into());
        }
        if self.num == 0 || self.batch_size == 0 || self.threads == 0 {
            return Err("--num, --batch-size and --threads must be at least 1".into());
        }
        if !(8..=511).contains(&self.key_size) {
            return Err(
                "--key-size must be in 8..=511 (8 bytes hold the key number; LMDB's limit is 511)"
                    .into(),
            );
        }
        if self
            .num
            .checked_mul((self.key_size + self.value_size) as u64)
            .is_none_or(|b| b > 1 << 50)
        {
            return Err("--num x (key + value size) is over 1 PiB".into());
        }
        Ok(())
    }
}

/// Whole results of a micro run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MicroResults {
    /// Schema, workload, seed, time, command, machine.
    #[serde(flatten)]
    pub header: RunHeader,
    /// The settings.
    pub config: MicroConfig,
    /// One per backend.
    pub runs: Vec<MicroRun>,
}

/// One backend's benchmarks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MicroRun {
    /// Backend name.
    pub backend: String,
    /// The backend's typed config.
    pub config: serde_json::Value,
    /// The engine library's version, as the store reported it (absent
    /// where it cannot tell, and in results from before 2026-11-27).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<String>,
    /// Each benchmark run, in order.
    pub benchmarks: Vec<MicroBench>,
    /// Why the backend stopped early.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One benchmark, as db_bench reports it, with ledgerbench's percentiles.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MicroBench {
    /// db_bench's name.
    pub name: String,
    /// Operations measured (for readwhilewriting: the readers').
    pub ops: u64,
    /// Threads measured.
    pub threads: u64,
    /// Wall seconds.
    pub secs: f64,
    /// Operations per wall second.
    pub ops_per_sec: f64,
    /// db_bench's micros/op: every measured thread's seconds over the operations.
    pub micros_per_op: f64,
    /// Key and value bytes moved per second, MiB (as db_bench's MB/s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mb_per_sec: Option<f64>,
    /// Reads that found their key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found: Option<u64>,
    /// Writes the background writer made (readwhilewriting).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background_writes: Option<u64>,
    /// Latency of one operation (a put, get, delete, seek or `next`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<Latency>,
    /// The engine's figures as the benchmark ended; its counters count
    /// from the store's open (a fill opens a new store, the benchmarks
    /// after it add to its counts). Absent before 2026-11-29.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<ledgerbench_core::EngineStats>,
}

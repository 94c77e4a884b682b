//! Results of `ledgerbench run capacity`: the highest rate of rows (a
//! chain's transactions, or a Solana validator's shreds) an engine persists
//! at a fixed close interval, found by bisection, with the curve of persist
//! time against the offered rate.

use serde::{Deserialize, Serialize};

use crate::RunHeader;

/// What a row is: the key shape of the store being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum RowShape {
    /// A transaction by hash: random 32-byte keys (Stellar's `txdata`,
    /// reth's transaction tables).
    TxHash,
    /// A shred by (slot, index), 16 big-endian bytes: keys ascend with the
    /// slot (Solana's blockstore data shreds).
    Shred,
}

impl RowShape {
    /// The shape's name as flags and results spell it.
    pub fn name(self) -> &'static str {
        match self {
            RowShape::TxHash => "tx-hash",
            RowShape::Shred => "shred",
        }
    }
}

/// Settings of a capacity search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapacityConfig {
    /// Seed of keys and values.
    pub seed: u64,
    /// What a row is.
    pub rows: RowShape,
    /// Value bytes per row.
    pub value_bytes: usize,
    /// Seconds between closes: each close commits the rows that arrived in
    /// one interval, as one batch.
    pub interval_secs: f64,
    /// Consecutive closes a rate must be persisted in time for.
    pub intervals: u32,
    /// Rows per second the search starts from below and above.
    pub min_rate: f64,
    /// Upper end of the search.
    pub max_rate: f64,
    /// Probes at most (the two ends included).
    pub probes: u32,
    /// Rows each probe's store is loaded with before its first close
    /// (untimed, then flushed): the search on a store that already holds
    /// data, as a node's does (`--prefill`); 0 starts each probe empty.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub prefill_rows: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl CapacityConfig {
    /// Checks the settings; the message names the flag to change.
    pub fn validate(&self) -> Result<(), crate::InvalidConfig> {
        if !(self.interval_secs >= 0.001 && self.interval_secs <= 3600.0) {
            return Err("--close-interval must be between 1ms and 1h".into());
        }
        if self.intervals < 2 {
            return Err(
                "--intervals must be at least 2 (a rate is sustained over several closes)".into(),
            );
        }
        if !(self.min_rate >= 1.0 && self.max_rate > self.min_rate && self.max_rate <= 1e9) {
            return Err(
                "--min-rate and --max-rate: give 1 <= min < max <= 1,000,000,000 rows/s".into(),
            );
        }
        if self.probes < 2 {
            return Err("--probes must be at least 2 (both ends of the search)".into());
        }
        if self.value_bytes == 0 || self.value_bytes > 1 << 20 {
            return Err("--value-bytes must be 1 to 1,048,576".into());
        }
        if self.prefill_rows > 0 && self.rows == RowShape::Shred {
            return Err(
                "--prefill: shreds come slot after slot from the probe's first close; give --rows tx-hash, or leave --prefill out".into(),
            );
        }
        Ok(())
    }

    /// Rows one close commits at `rate`.
    pub fn rows_per_close(&self, rate: f64) -> u64 {
        (rate * self.interval_secs).round().max(1.0) as u64
    }
}

/// One rate tried: every close's persist time, and whether it held.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Probe {
    /// Rows per second offered.
    pub rate: f64,
    /// Rows each close committed.
    pub rows_per_close: u64,
    /// Seconds each close took to persist (commit at the run's durability
    /// level), in order; the probe stops at the first close over the
    /// interval, whose time is then the time until it was over.
    pub persist_secs: Vec<f64>,
    /// Engine's pending compaction bytes after each close, where it reports
    /// them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_compaction_bytes: Vec<u64>,
    /// The slowest close, seconds (the p99 of so few closes); absent when
    /// the probe was killed (by the memory limit) before its closes were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_persist_secs: Option<f64>,
    /// Seconds this probe's own store took to load its prefill and flush
    /// it: searches before 2026-11-29 loaded one in every probe; since then
    /// the backend's is loaded once ([`CapacityRun::prefill_secs`]) and
    /// this is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_secs: Option<f64>,
    /// Seconds to copy the backend's prefilled store onto this probe's
    /// device and empty its cache, untimed by the search; absent without
    /// `--prefill`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_secs: Option<f64>,
    /// Whether every close persisted within the interval and neither the
    /// persist time nor the compaction debt grew.
    pub sustained: bool,
    /// Why not, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
}

impl Probe {
    /// A probe the OOM killer ended: it failed, with `why`, and its closes'
    /// times died with the engine.
    pub fn killed(rate: f64, rows_per_close: u64, why: String) -> Probe {
        Probe {
            rate,
            rows_per_close,
            persist_secs: Vec::new(),
            pending_compaction_bytes: Vec::new(),
            max_persist_secs: None,
            prefill_secs: None,
            copy_secs: None,
            sustained: false,
            why_not: Some(why),
        }
    }
}

/// One backend's search.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CapacityRun {
    /// Backend name.
    pub backend: String,
    /// The backend's config as run.
    pub config: serde_json::Value,
    /// Every probe, in the order tried.
    pub probes: Vec<Probe>,
    /// The highest rate sustained; absent when even `min_rate` was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sustained_rate: Option<f64>,
    /// The lowest rate that failed; absent when even `max_rate` held (the
    /// capacity is then at least `max_rate`, not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_rate: Option<f64>,
    /// Seconds the backend took to load `--prefill` into its store once
    /// (under the memory limit) and flush it; every probe starts from a
    /// copy of that store. Absent without `--prefill` (and in searches
    /// before 2026-11-29, whose probes each loaded their own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_secs: Option<f64>,
    /// Bytes of the prefilled store's files on disk, closed: the engine's
    /// footprint for the prefill's rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_store_bytes: Option<u64>,
    /// The `--state-cache` entry the prefilled store was given from (or
    /// kept as, `made_here`); absent without a cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_state: Option<crate::GivenState>,
    /// Where the device figures come from.
    pub device_meter: String,
    /// The error that ended the search, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A whole `ledgerbench run capacity` invocation: its `results.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CapacityResults {
    /// Schema, version, workload (`capacity`), seed, time, command,
    /// machine, durability.
    #[serde(flatten)]
    pub header: RunHeader,
    /// The search's settings.
    pub config: CapacityConfig,
    /// Memory cgroup limit of every probe, bytes.
    pub memory_limit_bytes: Option<u64>,
    /// ledgerbench's own allowance, bytes, added to the cgroup's limit on
    /// top of `memory_limit_bytes`; absent in searches made before it was
    /// (their harness's batch counted against the engine's limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_allowance_bytes: Option<u64>,
    /// One entry per backend.
    pub runs: Vec<CapacityRun>,
}

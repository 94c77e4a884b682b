//! Results of `ledgerbench run fan-out`: what a random-hash lookup costs as a
//! store grows batch by batch (partition by partition, for a store that
//! opens a database per batch), measured at chosen batch counts.

use ledgerbench_core::EngineStats;
use serde::{Deserialize, Serialize};

use crate::points::{PointReadConfig, ReadPath};
use crate::{Latency, RunHeader};

/// Settings of the fan-out profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FanOutConfig {
    /// Seed of keys, values and the keys looked up.
    pub seed: u64,
    /// Keys per batch (a batch is a partition of a partitioned store).
    pub keys_per_batch: u64,
    /// Key length, bytes (random: a transaction hash).
    pub key_bytes: usize,
    /// Value length, bytes.
    pub value_bytes: usize,
    /// Keys per write within a batch.
    pub write_batch: u64,
    /// Batch counts at which lookups are measured, ascending.
    pub checkpoints: Vec<u32>,
    /// GETs of existing keys per pass (at most: see `pass_secs`).
    pub reads: u64,
    /// GETs of missing keys per pass (at most).
    pub missing_reads: u64,
    /// A pass stops after this many seconds, with the GETs it made: a
    /// lookup that reads hundreds of filter blocks from the device would
    /// otherwise hold the run for hours.
    pub pass_secs: f64,
}

impl Default for FanOutConfig {
    fn default() -> Self {
        Self {
            seed: 42,
            keys_per_batch: 100_000,
            key_bytes: 32,
            value_bytes: 110,
            write_batch: 10_000,
            checkpoints: vec![19, 50, 100, 234, 250, 500],
            reads: 10_000,
            missing_reads: 5_000,
            pass_secs: 60.0,
        }
    }
}

impl FanOutConfig {
    /// Checks the settings; the message names the flag to change.
    pub fn validate(&self) -> Result<(), crate::InvalidConfig> {
        if self.keys_per_batch == 0 || self.write_batch == 0 {
            return Err("--keys-per-batch and --write-batch must be at least 1".into());
        }
        if self.reads == 0 {
            return Err("--reads must be at least 1".into());
        }
        if self.checkpoints.is_empty() || self.checkpoints.contains(&0) {
            return Err("--batches needs one or more batch counts, each at least 1".into());
        }
        if self.checkpoints.windows(2).any(|w| w[0] >= w[1]) {
            return Err(format!(
                "--batches {:?}: batch counts must be ascending without repeats",
                self.checkpoints
            )
            .into());
        }
        // Over a day is no bound a pass will meet: refused, not ignored.
        if !(self.pass_secs.is_finite() && self.pass_secs > 0.0 && self.pass_secs <= 86_400.0) {
            return Err(format!(
                "--pass-secs {}: must be a positive number of seconds, at most 86400 (a day)",
                self.pass_secs
            )
            .into());
        }
        self.points().validate().map_err(|e| {
            format!(
                "--keys-per-batch {} x {} batches: {e}",
                self.keys_per_batch,
                self.last()
            )
            .into()
        })
    }

    /// The key and value generator: point reads' own, over every key the
    /// last checkpoint loads.
    pub fn points(&self) -> PointReadConfig {
        PointReadConfig {
            seed: self.seed,
            keys: self.keys_per_batch.saturating_mul(u64::from(self.last())),
            key_bytes: self.key_bytes,
            value_bytes: self.value_bytes,
            load_batch: self.write_batch,
            reads: self.reads,
            missing_reads: self.missing_reads,
        }
    }

    /// The largest batch count measured.
    pub fn last(&self) -> u32 {
        self.checkpoints.last().copied().unwrap_or(0)
    }
}

/// What one pass of GETs cost, per GET.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PassCost {
    /// GETs made (fewer than asked when the pass ran out of time).
    pub gets: u64,
    /// Wall seconds of the pass.
    pub secs: f64,
    /// The pass stopped at `pass_secs` before making every GET asked for.
    pub stopped_early: bool,
    /// Latency of each GET; absent when none was made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<Latency>,
    /// CPU microseconds (user + system, the whole process) per GET; absent
    /// when the pass made no GET.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_get: Option<f64>,
    /// Device read requests per GET; absent without a private device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_reads_per_get: Option<f64>,
    /// Device KiB read per GET.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_kib_per_get: Option<f64>,
    /// Databases a GET looked in (a partitioned store's fan-out); absent
    /// for stores that do not count it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probes_per_get: Option<f64>,
    /// Bloom filter checks per GET that ruled a table out (RocksDB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter_negatives_per_get: Option<f64>,
    /// Bloom filter checks per GET that let the lookup through to the
    /// table's index and data (true and false positives; RocksDB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter_positives_per_get: Option<f64>,
    /// Filter, index and data block-cache misses per GET (RocksDB): each is
    /// a read from the page cache or the device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter_misses_per_get: Option<f64>,
    /// Index block misses per GET.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_misses_per_get: Option<f64>,
    /// Data block misses per GET.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_misses_per_get: Option<f64>,
    /// Answers that differed from the regenerated expectation (must be 0).
    pub mismatches: u64,
}

/// The four passes at one checkpoint: existing and missing keys, right
/// after the reopen (`cold`: filters and indexes not yet cached) and again
/// with other keys once the first pass has run (`steady`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Passes {
    /// Existing keys, first pass after the reopen.
    pub cold_found: PassCost,
    /// Missing keys, right after.
    pub cold_missing: PassCost,
    /// Other existing keys, second pass.
    pub steady_found: PassCost,
    /// Other missing keys, second pass.
    pub steady_missing: PassCost,
}

/// Memory and handles the open store held, measured in its own process;
/// each figure absent where `/proc` could not be read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Held {
    /// Anonymous resident bytes (engine heaps and caches, ledgerbench's own
    /// heap) before the store was opened.
    pub anon_before_open: Option<u64>,
    /// The same right after the open.
    pub anon_after_open: Option<u64>,
    /// The same after every pass.
    pub anon_after_reads: Option<u64>,
    /// File descriptors open in the process before the open.
    pub fds_before_open: Option<u64>,
    /// File descriptors once open.
    pub fds_after_open: Option<u64>,
    /// Memory cgroup's peak charge (anonymous and page cache), bytes;
    /// absent without a limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup_peak_bytes: Option<u64>,
}

impl Held {
    /// Resident bytes the open store added after its reads.
    pub fn added_after_reads(&self) -> Option<u64> {
        Some(
            self.anon_after_reads?
                .saturating_sub(self.anon_before_open?),
        )
    }

    /// Resident bytes the open itself added.
    pub fn added_at_open(&self) -> Option<u64> {
        Some(self.anon_after_open?.saturating_sub(self.anon_before_open?))
    }

    /// File descriptors the open store holds.
    pub fn fds_added(&self) -> Option<u64> {
        Some(self.fds_after_open?.saturating_sub(self.fds_before_open?))
    }
}

/// One checkpoint: the store at `batches` batches, closed, the page cache
/// dropped, reopened under the memory limit and read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Batches loaded so far.
    pub batches: u32,
    /// Keys loaded so far.
    pub keys: u64,
    /// Seconds spent waiting for background compaction to finish before
    /// the store was closed (0 for stores with none).
    pub settle_secs: f64,
    /// Background work still pending when the wait gave up, bytes; absent
    /// when it finished or the engine does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsettled_bytes: Option<u64>,
    /// The store's page cache was emptied before the open (before
    /// 2026-11-29: the whole machine's, which needed root): the open and
    /// the first passes were cold.
    pub page_cache_dropped: bool,
    /// Seconds to open the store.
    pub open_secs: f64,
    /// Memory and handles.
    pub held: Held,
    /// Allocated bytes of the store.
    pub disk_allocated_bytes: u64,
    /// The four passes.
    pub passes: Passes,
    /// The engine's figures after the passes (partitions, block cache use,
    /// table readers, files per level).
    pub engine: EngineStats,
}

/// One backend grown through every checkpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FanOutRun {
    /// Backend name.
    pub backend: String,
    /// The backend's config as run.
    pub config: serde_json::Value,
    /// Where the device figures come from.
    pub device_meter: String,
    /// Read mode, read-ahead and page size of the GETs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_path: Option<ReadPath>,
    /// Seconds spent loading (writes, flushes, seals), over every batch.
    pub load_secs: f64,
    /// Every checkpoint measured, in order.
    pub checkpoints: Vec<Checkpoint>,
    /// What ended the run early, if anything; the checkpoints before it
    /// are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A whole `ledgerbench run fan-out` invocation: its `results.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FanOutResults {
    /// Schema, version, workload (`fan-out`), seed, time, command,
    /// machine, durability.
    #[serde(flatten)]
    pub header: RunHeader,
    /// The profile's settings.
    pub config: FanOutConfig,
    /// Memory cgroup limit the checkpoints are read under, bytes.
    pub memory_limit_bytes: Option<u64>,
    /// Memory budget given to each engine (memtables, block cache), bytes.
    pub engine_memory_bytes: u64,
    /// One entry per backend.
    pub runs: Vec<FanOutRun>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_flag() {
        let ok = FanOutConfig::default();
        assert!(ok.validate().is_ok());
        assert_eq!(ok.points().keys, 50_000_000);
        for (bad, flag) in [
            (
                FanOutConfig {
                    checkpoints: vec![50, 19],
                    ..ok.clone()
                },
                "ascending",
            ),
            (
                FanOutConfig {
                    checkpoints: vec![],
                    ..ok.clone()
                },
                "--batches",
            ),
            (
                FanOutConfig {
                    pass_secs: f64::NAN,
                    ..ok.clone()
                },
                "--pass-secs",
            ),
            (
                FanOutConfig {
                    keys_per_batch: 0,
                    ..ok.clone()
                },
                "--keys-per-batch",
            ),
            (
                FanOutConfig {
                    keys_per_batch: u64::MAX / 2,
                    ..ok.clone()
                },
                "1 PiB",
            ),
        ] {
            let e = bad.validate().expect_err("refused");
            assert!(e.0.contains(flag), "{e} should name {flag}");
        }
    }
}

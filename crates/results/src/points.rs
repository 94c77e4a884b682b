//! Results of `ledgerbench run point-reads`: the profile's settings, what each
//! GET cost under each cache state, and one entry per backend.

use ledgerbench_meter::rusage::Usage;
use ledgerbench_rng::{Rng, stream};
use serde::{Deserialize, Serialize};

use crate::{Latency, RunHeader};

/// Settings of the point-read profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PointReadConfig {
    /// Seed of keys and values.
    pub seed: u64,
    /// Keys loaded.
    pub keys: u64,
    /// Key length, bytes.
    pub key_bytes: usize,
    /// Value length, bytes.
    pub value_bytes: usize,
    /// Keys per load batch.
    pub load_batch: u64,
    /// Random existing keys read per measurement.
    pub reads: u64,
    /// Random missing keys read per measurement (the bloom-filter path).
    pub missing_reads: u64,
}

impl Default for PointReadConfig {
    fn default() -> Self {
        Self {
            seed: 42,
            keys: 1_000_000,
            key_bytes: 32,
            value_bytes: 110,
            load_batch: 100_000,
            reads: 20_000,
            missing_reads: 5_000,
        }
    }
}

const TAG_KEY: u64 = 0x706b;
const TAG_VALUE: u64 = 0x7076;

impl PointReadConfig {
    /// Checks the settings.
    pub fn validate(&self) -> Result<(), crate::InvalidConfig> {
        if self.keys == 0 || self.reads == 0 || self.load_batch == 0 {
            return Err("keys, reads and load_batch must be at least 1".into());
        }
        if self.key_bytes < 8 || self.key_bytes > 511 {
            return Err("key_bytes must be in 8..=511 (LMDB's key limit)".into());
        }
        // The data set and its private device (3x) must be sizes a machine
        // can have: checked, so huge flags are refused rather than wrapped.
        const MAX_BYTES: u64 = 1 << 50;
        let bytes = self
            .keys
            .checked_mul((self.key_bytes + self.value_bytes) as u64)
            .filter(|b| *b <= MAX_BYTES);
        if bytes.is_none() {
            return Err(format!(
                "--keys {} of {} + {} bytes is over the largest data set ledgerbench sizes devices for (1 PiB): \
                 at most {} keys of this size",
                self.keys,
                self.key_bytes,
                self.value_bytes,
                MAX_BYTES / (self.key_bytes + self.value_bytes).max(1) as u64
            ).into());
        }
        Ok(())
    }

    /// Key number `i`: random bytes regenerated from (seed, i).
    pub fn key(&self, i: u64, out: &mut Vec<u8>) {
        out.clear();
        Rng::new(stream(self.seed, TAG_KEY, i)).fill(out, self.key_bytes);
    }

    /// Value of key `i`.
    pub fn value(&self, i: u64, out: &mut Vec<u8>) {
        out.clear();
        Rng::new(stream(self.seed, TAG_VALUE, i)).fill(out, self.value_bytes);
    }

    /// Logical bytes of the data set.
    pub fn logical_bytes(&self) -> u64 {
        self.keys * (self.key_bytes + self.value_bytes) as u64
    }
}

/// IO per GET under one cache state, with the source of every figure.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GetCost {
    /// GETs of existing keys measured.
    pub reads: u64,
    /// Device read requests per GET (`/sys/block/<loop>/stat`); absent
    /// without a private device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_reads_per_get: Option<f64>,
    /// Device bytes read per GET.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_bytes_per_get: Option<f64>,
    /// Bytes the process caused to be read from storage per GET (`/proc/self/io`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process_bytes_per_get: Option<f64>,
    /// Major page faults per GET (`getrusage`): the reads of mmap engines.
    pub major_faults_per_get: f64,
    /// The engine's own count per GET (RocksDB block-cache misses); absent
    /// for engines without one. Not disk reads: a miss may hit the page cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine_block_misses_per_get: Option<f64>,
    /// GET latency.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<Latency>,
    /// Missing-key GETs measured.
    pub missing_reads: u64,
    /// Device reads per missing-key GET.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_reads_per_missing_get: Option<f64>,
    /// Values that differed from the regenerated expectation (must be 0).
    pub mismatches: u64,
    /// CPU time and faults of the existing-key GETs (`getrusage`).
    #[serde(default)]
    pub usage: Usage,
    /// Client threads reading at once (the queue depth the engine sees);
    /// absent in results from before the sweep, which read with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u64>,
    /// Existing-key GETs per second of wall time, all threads together;
    /// absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gets_per_sec: Option<f64>,
    /// Device read requests per second over the same GETs; absent without a
    /// private device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_reads_per_sec: Option<f64>,
}

/// The device's own random-read rate at one queue depth: fio, 4 KiB random
/// reads with O_DIRECT, one synchronous reader per thread (as the engines'
/// GET threads read), on the backend's private device in the same run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FioPoint {
    /// Reader threads (`--numjobs`, `psync`): the queue depth.
    pub threads: u64,
    /// Read requests per second.
    pub iops: f64,
    /// Completion latency, microseconds: median and 99th percentile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_us: Option<f64>,
    /// 99th percentile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_us: Option<f64>,
    /// Seconds fio read for.
    pub secs: f64,
    /// Size of the file it read, bytes.
    pub file_bytes: u64,
}

/// The cache state a measurement ran under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum CacheState {
    /// Store closed, page cache dropped, store reopened.
    Cold,
    /// Cold, then read inside a memory cgroup (page cache and engine caches).
    Limited,
    /// The same GETs again, right after a pass that cached them.
    Warm,
}

impl CacheState {
    /// The state's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cold => "cold",
            Self::Limited => "limited",
            Self::Warm => "warm",
        }
    }
}

/// One measurement: a phase (before or after the full compaction) under one
/// cache state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measurement {
    /// `before-compaction` or `after-compaction`.
    pub phase: String,
    /// Cache state.
    pub cache: CacheState,
    /// Allocated bytes of the store when measured.
    pub disk_allocated_bytes: u64,
    /// What the GETs cost.
    pub cost: GetCost,
}

/// How GETs reach the device: besides the engine, IO per GET depends on
/// these, so every result states them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadPath {
    /// `buffered` (pread through the page cache), `direct` (O_DIRECT,
    /// bypassing it), `mmap` (page faults), or `memory`.
    pub reads: String,
    /// The private device's read-ahead, KiB, as the kernel reported it;
    /// absent without a private device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_ahead_kb: Option<u32>,
    /// Whether that read-ahead is the kernel's default or was set.
    pub read_ahead_source: String,
    /// Memory page size, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_size_bytes: Option<u64>,
}

/// One backend through the point-read profile.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PointRun {
    /// Backend name.
    pub backend: String,
    /// The backend's config as run.
    pub config: serde_json::Value,
    /// Where the device figures come from: a private loop device, or absent and why.
    pub device_meter: String,
    /// Read mode, read-ahead and page size of the GETs (absent in results
    /// written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_path: Option<ReadPath>,
    /// Bytes written to the private device by the load and its flush;
    /// absent without a device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_device_write_bytes: Option<u64>,
    /// Bytes written to the private device by the full compaction; absent
    /// without a device or a compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compact_device_write_bytes: Option<u64>,
    /// Time to load every key, seconds; absent when the load failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_secs: Option<f64>,
    /// CPU time, peak RSS and faults of the load; absent when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_usage: Option<Usage>,
    /// Key + value bytes loaded.
    pub logical_bytes: u64,
    /// Time of the full compaction, seconds; absent for engines without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compact_secs: Option<f64>,
    /// Every measurement, in order.
    pub measurements: Vec<Measurement>,
    /// Cache states requested but not measurable here, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// Engine state after loading.
    pub engine_after_load: ledgerbench_core::EngineStats,
    /// Engine counters of the full compaction's session (the store is
    /// reopened for it, so they count from 0); absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_after_compaction: Option<ledgerbench_core::EngineStats>,
    /// The device's own random-read rate at each thread count of the run
    /// (fio), measured after the engine's reads on the same device.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fio: Vec<FioPoint>,
    /// Why there is no fio figure (fio missing, no private device, a
    /// failure), when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_note: Option<String>,
    /// What ended this backend's run early, if anything did; the
    /// measurements before it are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A whole `ledgerbench run point-reads` invocation: its `results.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PointResults {
    /// Schema, version, workload (`point-reads`), seed, time, command,
    /// machine, durability.
    #[serde(flatten)]
    pub header: RunHeader,
    /// The profile's settings.
    pub config: PointReadConfig,
    /// Memory cgroup limit of `limited` measurements, bytes.
    pub memory_limit_bytes: Option<u64>,
    /// One entry per backend.
    pub runs: Vec<PointRun>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_regenerate_and_differ() {
        let c = PointReadConfig::default();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        c.key(5, &mut a);
        c.key(5, &mut b);
        assert_eq!(a, b);
        assert_eq!(a.len(), 32);
        c.key(6, &mut b);
        assert_ne!(a, b);
        c.value(5, &mut b);
        assert_eq!(b.len(), 110);
    }
}

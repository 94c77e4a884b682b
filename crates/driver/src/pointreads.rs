//! Point reads on a data set of random 32-byte keys: device IO per GET before
//! and after a full compaction, the shape of the bench_kvdb study (32-byte
//! hashes, 110-byte values).

use std::time::Instant;

use hdrhistogram::Histogram;
use kvbench_core::{Batch, KvStore};
use kvbench_meter::blockdev::BlockStat;
use kvbench_meter::proc_io::ProcIo;
use kvbench_meter::rusage::Usage;
use kvbench_rng::{Rng, stream};
use serde::{Deserialize, Serialize};

use crate::DriverError;
use crate::results::Latency;

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
const TAG_MISS: u64 = 0x706d;
const TAG_PICK: u64 = 0x7070;

impl PointReadConfig {
    /// Checks the settings.
    pub fn validate(&self) -> Result<(), DriverError> {
        if self.keys == 0 || self.reads == 0 || self.load_batch == 0 {
            return Err(DriverError::Config(
                "keys, reads and load_batch must be at least 1".into(),
            ));
        }
        if self.key_bytes < 8 || self.key_bytes > 511 {
            return Err(DriverError::Config(
                "key_bytes must be in 8..=511 (LMDB's key limit)".into(),
            ));
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

/// Loads every key; returns seconds taken.
pub fn load(cfg: &PointReadConfig, store: &dyn KvStore) -> Result<f64, DriverError> {
    cfg.validate()?;
    let t = Instant::now();
    let mut batch = Batch::with_capacity(
        cfg.load_batch as usize,
        (cfg.load_batch as usize) * (cfg.key_bytes + cfg.value_bytes),
    );
    let (mut k, mut v) = (Vec::new(), Vec::new());
    let err = |source| DriverError::Store {
        store: "points".into(),
        source,
    };
    for i in 0..cfg.keys {
        cfg.key(i, &mut k);
        cfg.value(i, &mut v);
        batch.put(&k, &v);
        if batch.len() as u64 == cfg.load_batch || i + 1 == cfg.keys {
            store.write(&batch).map_err(err)?;
            batch.clear();
        }
    }
    store.flush().map_err(err)?;
    Ok(t.elapsed().as_secs_f64())
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
}

/// Reads random existing and missing keys and measures what they cost.
/// `device` returns the private device's counters, when there is one.
pub fn measure(
    cfg: &PointReadConfig,
    store: &dyn KvStore,
    device: &dyn Fn() -> Option<BlockStat>,
    round: u64,
) -> Result<GetCost, DriverError> {
    let err = |source| DriverError::Store {
        store: "points".into(),
        source,
    };
    let mut r = Rng::new(stream(cfg.seed, TAG_PICK, round));
    let mut hist = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3)
        .expect("constant bounds are valid");
    let (mut k, mut want, mut got) = (Vec::new(), Vec::new(), Vec::new());
    let engine0 = store.stats().map_err(err)?.block_cache_misses;
    let (dev0, io0, ru0) = (device(), ProcIo::now().ok(), Usage::now());
    let mut mismatches = 0u64;
    for _ in 0..cfg.reads {
        let i = r.below(cfg.keys);
        cfg.key(i, &mut k);
        let t = Instant::now();
        let found = store.get_into(&k, &mut got).map_err(err)?;
        let _ = hist.record(t.elapsed().as_nanos() as u64);
        cfg.value(i, &mut want);
        mismatches += u64::from(!found || got != want);
    }
    let (dev1, io1, ru1) = (device(), ProcIo::now().ok(), Usage::now());
    let engine1 = store.stats().map_err(err)?.block_cache_misses;
    let n = cfg.reads as f64;
    let dev = dev0.zip(dev1).map(|(a, b)| b.since(&a));
    let mut miss_dev = None;
    if cfg.missing_reads > 0 {
        let d0 = device();
        for j in 0..cfg.missing_reads {
            k.clear();
            Rng::new(stream(cfg.seed ^ TAG_MISS, round, j)).fill(&mut k, cfg.key_bytes);
            mismatches += u64::from(store.get_into(&k, &mut got).map_err(err)?);
        }
        miss_dev = d0
            .zip(device())
            .map(|(a, b)| b.since(&a).read_ios as f64 / cfg.missing_reads as f64);
    }
    Ok(GetCost {
        reads: cfg.reads,
        device_reads_per_get: dev.map(|d| d.read_ios as f64 / n),
        device_bytes_per_get: dev.map(|d| d.read_bytes() as f64 / n),
        process_bytes_per_get: io0.zip(io1).map(|(a, b)| b.since(&a).read_bytes as f64 / n),
        major_faults_per_get: ru1.since(&ru0).major_faults as f64 / n,
        engine_block_misses_per_get: engine0
            .zip(engine1)
            .map(|(a, b)| b.saturating_sub(a) as f64 / n),
        latency: Latency::from_histogram(&hist),
        missing_reads: cfg.missing_reads,
        device_reads_per_missing_get: miss_dev,
        mismatches,
        usage: ru1.since(&ru0),
    })
}

/// The cache state a measurement ran under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Parses a comma-separated list; `limited` needs a memory limit.
    pub fn parse_list(list: &str, limit: Option<u64>) -> Result<Vec<Self>, DriverError> {
        let mut out = Vec::new();
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let state = match name {
                "cold" => Self::Cold,
                "limited" => Self::Limited,
                "warm" => Self::Warm,
                other => {
                    return Err(DriverError::Config(format!(
                        "unknown cache state `{other}`; accepted: cold, limited, warm"
                    )));
                }
            };
            if state == Self::Limited && limit.is_none() {
                return Err(DriverError::Config(
                    "cache state `limited` needs --memory-limit SIZE".into(),
                ));
            }
            if !out.contains(&state) {
                out.push(state);
            }
        }
        if out.is_empty() {
            return Err(DriverError::Config(
                "--cache names no state; accepted: cold, limited, warm".into(),
            ));
        }
        Ok(out)
    }

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

/// One backend through the point-read profile.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PointRun {
    /// Backend name.
    pub backend: String,
    /// The backend's config as run.
    pub config: serde_json::Value,
    /// Where the device figures come from: a private loop device, or absent and why.
    pub device_meter: String,
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
    pub engine_after_load: kvbench_core::EngineStats,
    /// What ended this backend's run early, if anything did; the
    /// measurements before it are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A whole `kvbench run point-reads` invocation: its `results.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PointResults {
    /// Results schema version.
    pub schema_version: u32,
    /// `point-reads`.
    pub workload: String,
    /// Seed of keys, values and picks.
    pub seed: u64,
    /// Start time, UTC RFC 3339.
    pub started_at: String,
    /// The command line.
    pub command: String,
    /// Where it ran.
    pub env: crate::env::EnvInfo,
    /// The profile's settings.
    pub config: PointReadConfig,
    /// Memory cgroup limit of `limited` measurements, bytes.
    pub memory_limit_bytes: Option<u64>,
    /// The durability level every store was set to (absent in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<kvbench_core::Durability>,
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

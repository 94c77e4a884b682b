//! A run's totals: per store and over all stores, with what bound its pace.

use super::*;

/// Totals of a backend run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    /// Batches completed.
    pub batches: u32,
    /// Ledgers ingested.
    pub ledgers: u64,
    /// Transactions ingested.
    pub txs: u64,
    /// Wall time of ingestion, seconds.
    pub wall_secs: f64,
    /// Ledgers per second of wall time.
    pub ledgers_per_sec: f64,
    /// Seconds of the batches (each batch's total, meters between batches
    /// excluded); with `null`, ledgers / this is the harness's feed ceiling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_secs: Option<f64>,
    /// Seconds of the batches spent in the engines: each batch's time less
    /// the writer's wait for generated data. Absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_secs: Option<f64>,
    /// Ledgers per second of engine time: the headline rate, which the
    /// generator's speed does not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_ledgers_per_sec: Option<f64>,
    /// Seconds the writer waited for the generator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_wait_secs: Option<f64>,
    /// What set the pace: the engines, or the harness when the writer
    /// waited for data more than [`HARNESS_BOUND_FRACTION`] of batch time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<Bound>,
    /// Per store totals.
    pub stores: BTreeMap<String, StoreSummary>,
    /// All stores together; absent in results written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<TotalSummary>,
}

/// The share of batch time the writer may wait for generated data before a
/// run counts as harness-bound.
pub const HARNESS_BOUND_FRACTION: f64 = 0.10;

/// What set an ingestion's pace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bound {
    /// The engines: the writer rarely waited for data.
    Engine,
    /// The harness: the writer waited for generated data more than
    /// [`HARNESS_BOUND_FRACTION`] of the time, so wall-time rates measure
    /// the generator, not the engine.
    Harness,
}

impl Bound {
    /// From the writer's wait and the batches' time, seconds.
    pub fn of(wait_secs: f64, batch_secs: f64) -> Self {
        if wait_secs > HARNESS_BOUND_FRACTION * batch_secs {
            Bound::Harness
        } else {
            Bound::Engine
        }
    }

    /// `engine-bound` or `harness-bound`.
    pub fn name(self) -> &'static str {
        match self {
            Bound::Engine => "engine-bound",
            Bound::Harness => "harness-bound",
        }
    }
}

/// Amplification over all stores, from each source that measured it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TotalSummary {
    /// Logical bytes written to all stores.
    pub logical_bytes: u64,
    /// Engine-reported bytes / logical bytes; absent unless every store's
    /// engine reports its bytes (LMDB has no counters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_amp_engine: Option<f64>,
    /// Private-device bytes written / logical bytes; absent without devices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_amp_device: Option<f64>,
    /// Process `write_bytes` (`/proc/self/io`) / logical bytes: the fallback
    /// without private devices. Misses writeback of mmap engines that the
    /// kernel did after the batch, and counts every file the process wrote.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_amp_process: Option<f64>,
    /// Allocated bytes of all stores / live logical bytes (as per store);
    /// absent when a store's live bytes were not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space_amp: Option<f64>,
    /// Time writes were stalled or slowed by the engines (RocksDB's
    /// `stall_micros`, summed over stores), seconds; absent for engines
    /// without the counter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_secs: Option<f64>,
}

/// Totals of one store.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoreSummary {
    /// Logical bytes written (key + value after app compression).
    pub logical_bytes: u64,
    /// Bytes before app compression.
    pub raw_bytes: u64,
    /// Seconds in batch commits.
    pub write_secs: f64,
    /// Seconds in flushes.
    pub flush_secs: f64,
    /// Seconds in manual compactions; absent when none ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compact_secs: Option<f64>,
    /// Manual compaction of the first and last batch, seconds: the growth the
    /// Stellar report saw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compact_first_last_secs: Option<(f64, f64)>,
    /// Allocated bytes at the end.
    pub disk_allocated_bytes: u64,
    /// Apparent bytes at the end.
    pub disk_apparent_bytes: u64,
    /// Engine-reported write amplification: engine bytes / logical bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_amp_engine: Option<f64>,
    /// Device write amplification: private-device bytes written / logical
    /// bytes; absent without a private device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_amp_device: Option<f64>,
    /// Space amplification: allocated bytes / live logical bytes. Live bytes
    /// are `live_bytes` when measured, else the bytes written where every
    /// key is written once (Stellar ingestion); absent otherwise (a soak,
    /// which ends without a full scan, or a replay whose scan failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space_amp: Option<f64>,
    /// Live key + value bytes, counted by a full scan after a workload that
    /// deletes or overwrites.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_bytes: Option<u64>,
    /// Entries in the store at the end, counted by the same scan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_entries: Option<u64>,
    /// SHA-256 (hex) of the store's content at the end, in key order, each
    /// key and value preceded by its length as a little-endian u32: equal on
    /// every engine that ran the same stream to the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_sha256: Option<String>,
    /// Latency of each operation kind on this store during ingestion.
    #[serde(default)]
    pub latency: OpLatency,
}

/// Latency per operation kind; a kind that never ran is absent.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OpLatency {
    /// One atomic batch commit (`commit_ledgers` ledgers' entries).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<Latency>,
    /// The flush after each ingestion batch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flush: Option<Latency>,
    /// The manual compaction after each ingestion batch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction: Option<Latency>,
    /// Point reads (replayed and generated workloads).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub get: Option<Latency>,
    /// Point reads of a paced run (`--op-rate`), timed from when each was
    /// due: a stall counts against every read scheduled behind it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub get_corrected: Option<Latency>,
    /// Range scans (replayed and generated workloads).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scan: Option<Latency>,
    /// Waiting for the writer's turn before a commit, when client threads
    /// share an engine that takes one writer at a time: the queueing, apart
    /// from the time in the engine (`commit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_wait: Option<Latency>,
}

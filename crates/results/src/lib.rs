//! The results schema: one serializable type per record, units in the docs.
//!
//! A run writes `batches.jsonl` (one [`BatchRecord`] per line, appended as
//! each batch finishes, so a killed run keeps what it did) and, at the end,
//! `results.json` (a [`RunResult`]). Reports are rendered from these alone:
//! this crate is what the driver writes and the report reads, so the report
//! never depends on the code that ran the benchmark. Point-read and crash
//! runs have their own `results.json` shapes ([`points`], [`crash`]).

use std::collections::BTreeMap;

use ledgerbench_core::{DiskUsage, EngineStats};
use serde::{Deserialize, Serialize};

pub mod capacity;
pub mod crash;
pub mod env;
pub mod fanout;
mod header;
mod memory;
pub mod micro;
mod month;
pub mod points;
mod reads;
mod replay;
mod summary;
pub mod trie;
pub mod workload;

pub use header::{Cell, RunHeader, Scheduled};
pub use memory::MemoryRecord;
pub use month::{LookupsAt, Resume};
pub use reads::{LookupReads, StoreReads};
pub use replay::{
    DRIFT_LIMIT, Drift, GivenState, OpsSummary, RecordStats, SegmentRecord, ThreadSummary, drift,
};
pub use summary::{Bound, OpLatency, StoreSummary, Summary, TotalSummary};

/// Settings a workload refuses; the message names the flag to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidConfig(pub String);

impl From<String> for InvalidConfig {
    fn from(why: String) -> Self {
        Self(why)
    }
}

impl From<&str> for InvalidConfig {
    fn from(why: &str) -> Self {
        Self(why.to_string())
    }
}

/// Version of this schema; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole invocation: one workload, one or more backend runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// Schema, version, workload, seed, time, command, machine, durability.
    #[serde(flatten)]
    pub header: RunHeader,
    /// Preset the config came from, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// The workload config, typed (see [`workload::WorkloadConfig`]).
    pub config: workload::WorkloadConfig,
    /// One entry per backend (or hybrid) run, in run order.
    pub runs: Vec<BackendRun>,
}

/// One backend configuration (or hybrid of several) through the workload.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BackendRun {
    /// Label: the backend name, or `store=backend,...` for a hybrid.
    pub label: String,
    /// Repeat number from 0 (`--repeat K`); runs of one label are repeats.
    #[serde(default)]
    pub repeat: u32,
    /// What the run measures without its memory limit (the backend, or a
    /// hybrid's `store=backend` list): a sweep's runs of one design share
    /// it. Absent in results from before it was kept, and in runs that are
    /// not part of a Stellar plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub design: Option<String>,
    /// Each store's backend and config.
    pub stores: Vec<StoreSetup>,
    /// Per-batch records, in order.
    pub batches: Vec<BatchRecord>,
    /// Totals over the run; absent when the run failed before a batch finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
    /// CPU time, peak RSS and faults of the process during this run
    /// (`getrusage`; peak RSS is the process's peak so far).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<ledgerbench_meter::rusage::Usage>,
    /// Where each store's device figures come from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_meter: Option<String>,
    /// Memory limit of the engine (its heap and the page cache), bytes:
    /// `--memory-limit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_limit_bytes: Option<u64>,
    /// Bytes added to the cgroup's limit for ledgerbench's own bounded heap
    /// (`--harness-budget`), so the harness does not eat the engine's
    /// share; the cgroup's limit is the sum. Absent when nothing was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_allowance_bytes: Option<u64>,
    /// Peak memory charged to that cgroup, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_peak_bytes: Option<u64>,
    /// Device reads per GET over the verification lookups, when they ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lookup_reads: Option<LookupReads>,
    /// Lookup phase after ingestion, when run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streaming: Option<StreamingResult>,
    /// One sample per second of ingestion: throughput and engine state, so
    /// write stalls show as dips.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ingest_samples: Vec<Sample>,
    /// Wall time, CPU and faults per phase (`ingest`, `verify`, `streaming`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseCost>,
    /// Replayed operations (trace and generator workloads), when that is
    /// what the run did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayResult>,
    /// A slowdown planted on purpose (`LEDGERBENCH_PLANT_SLOWDOWN_PCT`):
    /// every store call took this much longer, percent. Only for checking
    /// that `ledgerbench ab` catches a known regression; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planted_slowdown_pct: Option<f64>,
    /// A stall planted on purpose (`LEDGERBENCH_PLANT_STALL`): the store
    /// call named blocked forever. Only for testing the watchdog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planted_stall: Option<String>,
    /// Why the run ended early, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why ingestion stopped before its last batch without failing: a
    /// batch over `--max-batch-secs` (the engine fell off a cliff, which
    /// is a finding, not a failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<String>,
    /// Every stop and resume of a checkpointed run, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumes: Vec<Resume>,
}

/// What a replay of operations did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplayResult {
    /// One record per segment (the operations up to a mark), where the run
    /// was killed (read back from its file) or made by an older build;
    /// otherwise in `segments_file`.
    pub segments: Vec<SegmentRecord>,
    /// Totals; absent when no segment finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<OpsSummary>,
    /// Client threads that ran the stream at once; absent in results from
    /// before threads were recorded (one, or the accounts `workers`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u64>,
    /// How the stream was divided between threads: `partitioned` (each
    /// thread's own seeded stream) or `key-hash` (one stream split by key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<String>,
    /// Where the segments are when `segments` is empty: a replay's (a soak's
    /// hours of intervals, a 10x run's thousand segments) stay out of
    /// memory and out of this file, in the file of this name beside it, as
    /// the lines whose `label` is this run's. Reports read them from there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segments_file: Option<String>,
    /// Where the initial state came from when the run was given it
    /// (`--state-cache`); absent when the run loaded its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_state: Option<GivenState>,
}

/// A store's backend.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoreSetup {
    /// Store name.
    pub store: String,
    /// Backend name (`rocksdb-leveled`, ...).
    pub backend: String,
    /// Engine library version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<String>,
    /// The backend's typed config.
    pub config: serde_json::Value,
    /// The durability level the store's settings give (absent in results
    /// from before levels existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<ledgerbench_core::Durability>,
    /// Whether the config drops the oldest data by itself (FIFO), as the
    /// registry reported it; absent in results from before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evicts_oldest: Option<bool>,
    /// How the config's GETs reach the device (direct, buffered, mmap,
    /// memory), as the registry reported it; absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_path: Option<ledgerbench_core::ReadPath>,
    /// How the open store takes writers from several threads (one at a
    /// time, or together); absent in older results and where it never opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writers: Option<ledgerbench_core::WriterModel>,
    /// How the open store deletes a range (one tombstone, or a delete per
    /// key); absent in older results and where it never opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_delete: Option<ledgerbench_core::RangeDelete>,
}

impl StoreSetup {
    /// Whether the store drops its oldest data by itself. Results from
    /// before the registry recorded it are read by the one rule that held
    /// then: only a FIFO compaction style evicted.
    pub fn evicts_oldest(&self) -> bool {
        self.evicts_oldest
            .unwrap_or_else(|| self.config["compaction"]["style"] == "fifo")
    }
}

/// One batch of the ingestion protocol.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BatchRecord {
    /// Run label (repeated so JSON lines stand alone).
    pub label: String,
    /// Batch number, from 1.
    pub batch: u32,
    /// First ledger sequence in the batch.
    pub first_ledger: u32,
    /// Ledgers in the batch.
    pub ledgers: u32,
    /// Transactions in the batch.
    pub txs: u64,
    /// Generator time for the batch (worker threads, summed), seconds.
    pub generate_secs: f64,
    /// Compression time for the batch (worker threads, summed), seconds.
    pub compress_secs: f64,
    /// Time the writer waited for generated data, seconds: non-zero means
    /// the generators, not the engine, bounded this batch.
    pub writer_wait_secs: f64,
    /// Writer wall time of the batch: writes, flushes, compactions, seconds.
    pub total_secs: f64,
    /// Bytes the whole process caused to be written to storage during the
    /// batch (`/proc/self/io` write_bytes: misses mmap writeback).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process_write_bytes: Option<u64>,
    /// Whose memory the batch used; absent in results from before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryRecord>,
    /// Per store, in write order.
    pub stores: Vec<StoreBatch>,
    /// A checkpointed run's sync of every store after the batch, seconds:
    /// outside `total_secs`, so a resumable run's batches time as others do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_secs: Option<f64>,
    /// Lookups timed after this batch (`lookups_at`), outside `total_secs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lookups: Option<Box<LookupsAt>>,
}

/// One store's share of a batch.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoreBatch {
    /// Store name.
    pub store: String,
    /// Entries written.
    pub entries: u64,
    /// Key + value bytes handed to the engine (after app compression).
    pub logical_bytes: u64,
    /// Key + value bytes before app compression.
    pub raw_bytes: u64,
    /// Time in batch commits, seconds.
    pub write_secs: f64,
    /// Time flushing after the batch, seconds.
    pub flush_secs: f64,
    /// Time in the manual compaction after the batch, seconds; absent when
    /// the strategy or engine does none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compact_secs: Option<f64>,
    /// Engine-reported bytes flushed during the batch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flush_bytes: Option<u64>,
    /// Engine-reported compaction bytes read during the batch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compact_read_bytes: Option<u64>,
    /// Engine-reported compaction bytes written during the batch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compact_write_bytes: Option<u64>,
    /// Engine-reported bytes written to files during the batch (flush +
    /// compaction + WAL, or MDBX pages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine_write_bytes: Option<u64>,
    /// Bytes written to this store's private device during the batch, after
    /// `syncfs` (`/sys/block/<loop>/stat`); absent without a private device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_write_bytes: Option<u64>,
    /// Bytes read from this store's private device during the batch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_read_bytes: Option<u64>,
    /// Time spent in `syncfs` after the batch, seconds (not in the engine times).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync_secs: Option<f64>,
    /// Engine state after the batch.
    pub engine: EngineStats,
    /// Disk usage after the batch.
    pub disk: DiskUsage,
    /// Latency of this store's operations in this segment alone (soaks:
    /// one segment an interval); absent in other runs, whose latencies
    /// are the run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<crate::OpLatency>,
}

/// What one phase of a run cost the process.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PhaseCost {
    /// Phase name.
    pub phase: String,
    /// Wall time, seconds.
    pub wall_secs: f64,
    /// CPU, faults and peak RSS (`getrusage`; the peak is the process's so
    /// far, so a later phase never shows less than an earlier one).
    pub usage: ledgerbench_meter::rusage::Usage,
}

/// The lookup phase after ingestion.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StreamingResult {
    /// Ledgers appended during the phase.
    pub ledgers: u64,
    /// Target seconds between ledgers; absent when unthrottled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub close_interval_secs: Option<f64>,
    /// Wall time of the phase, seconds.
    pub wall_secs: f64,
    /// Lookup worker threads.
    pub lookup_workers: usize,
    /// Latency of one-step lookups (`txdata`); absent when none completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub one_step: Option<Latency>,
    /// Latency of two-step lookups (`txindex`, then `ledgers`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub two_step: Option<Latency>,
    /// Latency of one ledger's commit to all three stores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger_commit: Option<Latency>,
    /// Values read that differed from what was written (must be 0); absent
    /// when a store discards writes (`null`), whose reads cannot be checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mismatches: Option<u64>,
    /// Per-second samples.
    pub samples: Vec<Sample>,
    /// Open-loop lookups (`lookup_rate`), in place of the closed-loop ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoopResult>,
    /// One open-loop phase per rate of `lookup_rates`, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rate_sweep: Vec<OpenLoopResult>,
    /// The highest rate of the sweep whose corrected p99 stayed within the
    /// bound with nothing shed; absent when none did or no sweep ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_sustained_rate_per_sec: Option<f64>,
}

/// Lookups that arrived on a schedule while ledgers streamed in.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpenLoopResult {
    /// Requests per second scheduled (one-step and two-step alternate).
    pub rate_per_sec: f64,
    /// `fixed` or `poisson`.
    pub arrival: String,
    /// Requests queued for a lookup thread.
    pub issued: u64,
    /// Requests served.
    pub completed: u64,
    /// Requests dropped because the queue was full: the engine fell behind
    /// the schedule by more than the queue holds.
    pub shed: u64,
    /// Requests served per second of the phase.
    pub achieved_per_sec: f64,
    /// One-step latency from when each request was due (corrected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_step: Option<Latency>,
    /// One-step latency from when a thread started it (service time only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_step_uncorrected: Option<Latency>,
    /// Two-step latency from when each request was due (corrected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub two_step: Option<Latency>,
    /// Two-step latency from when a thread started it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub two_step_uncorrected: Option<Latency>,
    /// How late the schedule dispatched requests: the harness's own share
    /// of the corrected latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch_lateness: Option<Latency>,
    /// Whether the schedule's thread ran at raised priority (needs root);
    /// without it, dispatch waits for busy cores.
    #[serde(default)]
    pub schedule_priority_raised: bool,
    /// Values read that differed from what was written; absent when a
    /// store discards writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mismatches: Option<u64>,
    /// The corrected p99 bound a sustained rate must meet, microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_bound_us: Option<f64>,
    /// Whether both kinds' corrected p99 met the bound with nothing shed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sustained: Option<bool>,
}

/// Latency percentiles, microseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Latency {
    /// Operations measured.
    pub count: u64,
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// Maximum.
    pub max_us: f64,
    /// Mean.
    pub mean_us: f64,
}

impl Latency {
    /// Summarises an HDR histogram recorded in nanoseconds; `None` when it
    /// is empty, so no percentile is ever reported as 0 for want of samples.
    pub fn from_histogram(h: &hdrhistogram::Histogram<u64>) -> Option<Self> {
        if h.is_empty() {
            return None;
        }
        let us = |v: u64| v as f64 / 1000.0;
        Some(Self {
            count: h.len(),
            p50_us: us(h.value_at_quantile(0.5)),
            p90_us: us(h.value_at_quantile(0.9)),
            p99_us: us(h.value_at_quantile(0.99)),
            p999_us: us(h.value_at_quantile(0.999)),
            max_us: us(h.max()),
            mean_us: h.mean() / 1000.0,
        })
    }
}

/// One second of a phase (ingestion or lookups).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the phase began.
    pub t: f64,
    /// Lookups completed in this second.
    pub lookups: u64,
    /// Ledgers committed in this second; absent for workloads without ledgers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledgers: Option<u64>,
    /// Logical bytes committed in this second (all stores).
    #[serde(default)]
    pub bytes: u64,
    /// Whether any store's engine had writes stopped at the sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_stopped: Option<bool>,
    /// Compactions running at the sample (sum over stores that report it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running_compactions: Option<u64>,
    /// RocksDB stall microseconds so far (sum over stores that report it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall_micros: Option<u64>,
    /// Resident set size of the process at the sample (`/proc/self/statm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_bytes: Option<u64>,
    /// Live Rust heap (the harness's) at the sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_heap_bytes: Option<u64>,
    /// Compaction bytes still pending (sum over stores that report it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_compaction_bytes: Option<u64>,
}

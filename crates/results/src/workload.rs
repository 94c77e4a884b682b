//! The workload configs results record, typed: a Stellar ingestion's
//! settings, an operation stream's (a trace replayed or a generator), and
//! whatever an older or unknown file holds, kept as it is.

use ledgerbench_workloads::stellar::StellarProfile;
use serde::{Deserialize, Serialize};

use crate::InvalidConfig;

/// The workload config of a run's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WorkloadConfig {
    /// `ledgerbench run stellar`.
    Stellar(Box<StellarConfig>),
    /// A trace replayed or a generated operation stream.
    Ops(OpsConfig),
    /// A config of another shape: a file written before a field was removed
    /// (the typed forms refuse unknown fields), kept as written.
    Other(serde_json::Value),
}

impl WorkloadConfig {
    /// The Stellar settings, when it is a Stellar run's.
    pub fn stellar(&self) -> Option<&StellarConfig> {
        match self {
            WorkloadConfig::Stellar(c) => Some(c),
            _ => None,
        }
    }
}

/// An operation stream's settings: a generator's name and workers, or the
/// trace replayed, and what the operations describe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpsConfig {
    /// The generator (`ycsb`, `solana`, `blobs`, `accounts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    /// Concurrent generator streams (accounts' `--workers`, before
    /// `--threads` replaced it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<u64>,
    /// Client-thread counts the run swept (`--threads`); each run records
    /// its own in its replay result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<u64>,
    /// Operations per second of a paced stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op_rate: Option<f64>,
    /// A replay paced by the trace's recorded times, this many times faster
    /// (`--speed`); absent: closed loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<f64>,
    /// The trace file replayed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// Its size, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_bytes: Option<u64>,
    /// What the operations describe (workload, seed, stores, source).
    pub header: ledgerbench_trace::Header,
    /// A soak's window and how its drift is judged (`ledgerbench run soak`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soak: Option<Box<SoakConfig>>,
}

/// A soak's settings, as given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SoakConfig {
    /// How long each engine ran, seconds (`--duration`).
    pub duration_secs: f64,
    /// The least time a segment spans, seconds (`--interval`).
    pub interval_secs: f64,
    /// The warm-up set aside before judging: `auto` (the workload's own
    /// ramp: the first expiry, the start of retention, the load), a time
    /// (`30m`) or a share of the run (`25%`).
    pub warmup: String,
    /// A change smaller than this share of the level is not called drift
    /// or a step (`--drift-threshold`, 0.10).
    pub drift_threshold: f64,
}

/// How requests arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arrival {
    /// Evenly spaced, 1/rate apart.
    #[default]
    Fixed,
    /// A Poisson process: exponential gaps of mean 1/rate, as independent
    /// clients produce.
    Poisson,
}

impl Arrival {
    /// The name results use.
    pub fn name(self) -> &'static str {
        match self {
            Arrival::Fixed => "fixed",
            Arrival::Poisson => "poisson",
        }
    }
}

/// What happens after each batch is written and flushed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CompactionStrategy {
    /// Full-range manual compaction of every store after every batch (the report's protocol).
    Manual,
    /// Only the engine's own background compaction.
    Background,
    /// No compaction at all: auto-compaction is turned off in the engine config.
    None,
}

impl CompactionStrategy {
    /// Accepted names, for error messages.
    pub const NAMES: &'static str = "manual, background, none";
}

/// The lookup phase after ingestion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StreamingConfig {
    /// Ledgers to append one at a time; 0 skips the phase.
    pub ledgers: u64,
    /// Milliseconds between ledger closes; 0 runs as fast as possible.
    pub close_interval_ms: u64,
    /// Concurrent lookup threads.
    pub lookup_workers: usize,
    /// Open loop: lookups per second arriving on a schedule, served by the
    /// lookup threads, latency measured from when each was due; `None`:
    /// closed loop (each thread issues its next lookup when one returns).
    pub lookup_rate: Option<f64>,
    /// How open-loop requests arrive.
    pub arrival: Arrival,
    /// A rate sweep: the phase runs once per rate (open loop), each
    /// appending `ledgers` more, and reports the highest rate sustained.
    pub lookup_rates: Vec<f64>,
    /// The corrected p99 a sustained rate must stay within, microseconds.
    pub p99_bound_us: f64,
}

impl Default for StreamingConfig {
    fn default() -> Self {
        Self {
            ledgers: 120,
            close_interval_ms: 5000,
            lookup_workers: 2,
            lookup_rate: None,
            arrival: Arrival::Fixed,
            lookup_rates: Vec::new(),
            p99_bound_us: 10_000.0,
        }
    }
}

/// A Stellar ingestion run's settings. Defaults are the report's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StellarConfig {
    /// Seed of every generator.
    pub seed: u64,
    /// Ledgers to ingest (the report: one month, 468,038).
    pub ledgers: u64,
    /// Ledgers per batch (the report: 2,000).
    pub batch_ledgers: u32,
    /// Ledgers per write commit inside a batch; the harness holds a few
    /// commit chunks at a time, so this, not the batch, sets its memory.
    /// 0 picks the largest that fits `harness_budget`.
    pub commit_ledgers: u32,
    /// Most heap the harness may hold for generated data, bytes (see
    /// the driver's `budget::plan_chunks`); a commit size over it is refused.
    pub harness_budget: u64,
    /// What follows each batch.
    pub compaction: CompactionStrategy,
    /// Generator threads; 0 picks one less than the cores (at least one).
    pub workers: usize,
    /// Ends ingestion after the first batch that takes longer than this,
    /// seconds, and records where the engine fell off (verify and the
    /// lookup phase still run on what was ingested); `None`: no budget.
    pub max_batch_secs: Option<f64>,
    /// Random transactions read back through both lookup paths after
    /// ingestion, each checked against its regenerated value.
    pub verify_txs: u32,
    /// Shape of the data.
    pub profile: StellarProfile,
    /// Lookup phase after ingestion.
    pub streaming: StreamingConfig,
    /// Generate every ledger before the timed ingestion into a spool file
    /// in the run directory and stream it from there: the engines, not the
    /// generator, set the pace (needs disk for the logical bytes).
    pub pregenerate: bool,
    /// Sync every store after each batch and keep the stores between
    /// processes, so `run stellar --resume DIR` continues from the last
    /// complete batch after a kill, an OOM or a reboot.
    pub checkpoint: bool,
    /// Batches (from 1) after which lookups are timed, both ways, on
    /// `verify_txs` random transactions.
    pub lookups_at: Vec<u32>,
}

impl Default for StellarConfig {
    fn default() -> Self {
        Self {
            seed: 42,
            ledgers: 468_038,
            batch_ledgers: 2000,
            commit_ledgers: 0,
            harness_budget: 64 << 20,
            compaction: CompactionStrategy::Manual,
            workers: 0,
            max_batch_secs: None,
            verify_txs: 1000,
            profile: StellarProfile::default(),
            streaming: StreamingConfig::default(),
            pregenerate: false,
            checkpoint: false,
            lookups_at: Vec::new(),
        }
    }
}

impl StellarConfig {
    /// Checks the settings, naming any that is out of range by its flag
    /// (and run-file key) and the bound it must keep.
    pub fn validate(&self) -> Result<(), InvalidConfig> {
        let bad = |m: &str| Err(InvalidConfig(m.to_string()));
        if self.ledgers == 0 {
            return bad("--ledgers (ledgers) must be at least 1");
        }
        if self.batch_ledgers == 0 {
            return bad("--batch-ledgers (batch_ledgers) must be at least 1");
        }
        if self
            .max_batch_secs
            .is_some_and(|s| !s.is_finite() || s <= 0.0 || s > 86_400.0)
        {
            // Over a day is no bound a run will meet: refused, not ignored.
            return bad(
                "--max-batch-secs (max_batch_secs) must be a number of seconds above 0 and at most 86400 (a day)",
            );
        }
        // Ledger sequences are 32-bit (the `ledgers` store's keys are 4
        // bytes) and every streamed ledger (once per rate of a sweep)
        // follows the ingested ones. Checked, not summed: a sum of huge
        // flags would wrap and pass.
        let first = u64::from(self.profile.first_ledger);
        let room = u64::from(u32::MAX) - first;
        let rounds = self.streaming.lookup_rates.len().max(1) as u64;
        let total = self
            .streaming
            .ledgers
            .checked_mul(rounds)
            .and_then(|s| s.checked_add(self.ledgers));
        if total.is_none_or(|t| t > room) {
            return bad(&format!(
                "--ledgers ({}) plus --streaming-ledgers ({}{}) must fit in 32-bit ledger sequences: \
                 the generator starts at ledger {first}, so together they may be at most {room}",
                self.ledgers,
                self.streaming.ledgers,
                if rounds > 1 {
                    format!(" x {rounds} rates of --lookup-rates")
                } else {
                    String::new()
                }
            ));
        }
        if self.streaming.ledgers > 0 && self.streaming.lookup_workers == 0 {
            return bad(
                "--lookup-workers (streaming.lookup_workers) must be at least 1 when ledgers are streamed",
            );
        }
        let rates = self
            .streaming
            .lookup_rate
            .iter()
            .chain(&self.streaming.lookup_rates);
        for r in rates {
            if !(r.is_finite() && *r > 0.0 && *r <= 10_000_000.0) {
                return bad(&format!(
                    "lookup rate {r} (--lookup-rate, --lookup-rates) must be above 0 and at most 10,000,000 per second"
                ));
            }
        }
        // Poisson spacing shapes an open-loop schedule; without a rate the
        // lookups run closed loop and results would record an arrival that
        // never happened.
        if self.streaming.arrival != Arrival::Fixed
            && self.streaming.lookup_rate.is_none()
            && self.streaming.lookup_rates.is_empty()
        {
            return bad(
                "--arrival poisson shapes open-loop lookups: give --lookup-rate or --lookup-rates with it",
            );
        }
        if !self.streaming.p99_bound_us.is_finite() || self.streaming.p99_bound_us <= 0.0 {
            return bad("--p99-bound-ms (streaming.p99_bound_us) must be above 0");
        }
        self.validate_long_runs()?;
        self.profile
            .validate()
            .map_err(|e| InvalidConfig(e.to_string()))
    }

    /// The settings of long runs: checkpoints and lookups during ingestion.
    fn validate_long_runs(&self) -> Result<(), InvalidConfig> {
        let bad = |m: &str| Err(InvalidConfig(m.to_string()));
        if self.checkpoint && self.pregenerate {
            return bad(
                "--checkpoint resumes by generating from the next batch, which a --pregenerate run's spool cannot do: drop one of them",
            );
        }
        if let Some(b) = self
            .lookups_at
            .iter()
            .find(|b| **b == 0 || **b > self.batches())
        {
            return bad(&format!(
                "lookups_at batch {b} is not a batch of this run (1 to {})",
                self.batches()
            ));
        }
        Ok(())
    }

    /// Generator threads to use: `workers`, or one less than the cores.
    pub fn workers(&self) -> usize {
        if self.workers > 0 {
            return self.workers;
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        cores.saturating_sub(1).max(1)
    }

    /// Batches the ledgers make.
    pub fn batches(&self) -> u32 {
        self.ledgers.div_ceil(u64::from(self.batch_ledgers)) as u32
    }
}

//! Stellar full-history ingestion, batch by batch, as the RocksDB report
//! measured it: generate, compress, write the three stores, flush, compact.

use ledgerbench_core::KvStore;
use ledgerbench_meter::loopdev::Device;
use ledgerbench_meter::rusage::Usage;
use ledgerbench_workloads::stellar::{STORES, StellarGen, StellarProfile};
use serde::{Deserialize, Serialize};

use crate::DriverError;
use crate::results::{BatchRecord, PhaseCost, Sample, StreamingResult, Summary};
use crate::segment::OpHists;

pub mod budget;
mod ingest;
mod lookups;
mod openloop;
mod produce;
mod spool;

pub use openloop::Arrival;

use ingest::*;
use lookups::*;
pub use produce::StellarOps;
use produce::*;

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
    /// [`budget::plan_chunks`]); a commit size over it is refused.
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
        }
    }
}

impl StellarConfig {
    /// Checks the settings, naming any that is out of range by its flag
    /// (and run-file key) and the bound it must keep.
    pub fn validate(&self) -> Result<(), DriverError> {
        let bad = |m: &str| Err(DriverError::Config(m.to_string()));
        if self.ledgers == 0 {
            return bad("--ledgers (ledgers) must be at least 1");
        }
        if self.batch_ledgers == 0 {
            return bad("--batch-ledgers (batch_ledgers) must be at least 1");
        }
        if self
            .max_batch_secs
            .is_some_and(|s| !s.is_finite() || s <= 0.0)
        {
            return bad("--max-batch-secs (max_batch_secs) must be a number of seconds above 0");
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
        self.profile
            .validate()
            .map_err(|e| DriverError::Config(e.to_string()))
    }

    pub(super) fn workers(&self) -> usize {
        if self.workers > 0 {
            return self.workers;
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        cores.saturating_sub(1).max(1)
    }

    pub(super) fn batches(&self) -> u32 {
        self.ledgers.div_ceil(u64::from(self.batch_ledgers)) as u32
    }
}

pub use crate::observe::Observer;

/// What ingestion produced, including a partial run that ended in an error.
#[derive(Debug)]
pub struct Outcome {
    /// Batches completed.
    pub batches: Vec<BatchRecord>,
    /// Totals, when at least one batch completed.
    pub summary: Option<Summary>,
    /// Device reads per GET over the verification lookups, when they ran.
    pub lookup_reads: Option<crate::results::LookupReads>,
    /// Lookup phase, when it ran.
    pub streaming: Option<StreamingResult>,
    /// One sample per second of ingestion.
    pub ingest_samples: Vec<Sample>,
    /// Cost of each phase that ran.
    pub phases: Vec<PhaseCost>,
    /// The error that ended the run, if any.
    pub error: Option<DriverError>,
    /// Why ingestion stopped before its last batch (over the batch time
    /// budget), if it did.
    pub stopped: Option<String>,
}

/// The three stores, in [`STORES`] order.
pub type Stores<'a> = [&'a dyn KvStore; 3];

/// Each store's private device, when it has one, in [`STORES`] order.
pub type Devices<'a> = [Option<&'a Device>; 3];

pub(super) fn store_err(i: usize) -> impl Fn(ledgerbench_core::Error) -> DriverError {
    move |source| DriverError::Store {
        store: STORES[i].to_string(),
        source,
    }
}

/// Runs ingestion, then verification and the lookup phase, on three open
/// stores. A `pregenerate` config needs [`run_spooled`].
pub fn run(
    cfg: &StellarConfig,
    label: &str,
    stores: Stores<'_>,
    devices: Devices<'_>,
    observer: &mut dyn Observer,
) -> Outcome {
    run_spooled(cfg, label, stores, devices, observer, None)
}

/// Where `pregenerate` keeps its spool file (created and removed by the run).
pub struct SpoolAt<'a> {
    /// The directory (the run directory: never a store's device).
    pub dir: &'a std::path::Path,
    /// Drop the spool from the page cache behind the reader: set under a
    /// memory limit, so the spool does not take the engine's share.
    pub drop_behind: bool,
}

/// [`run`], with the place for a `pregenerate` config's spool.
pub fn run_spooled(
    cfg: &StellarConfig,
    label: &str,
    stores: Stores<'_>,
    devices: Devices<'_>,
    observer: &mut dyn Observer,
    spool_dir: Option<SpoolAt<'_>>,
) -> Outcome {
    let mut out = Outcome {
        batches: Vec::new(),
        summary: None,
        lookup_reads: None,
        streaming: None,
        ingest_samples: Vec::new(),
        phases: Vec::new(),
        error: None,
        stopped: None,
    };
    if let Err(e) = cfg.validate() {
        out.error = Some(e);
        return out;
    }
    let cfg = &match budget::resolved(cfg) {
        Ok(c) => c,
        Err(e) => {
            out.error = Some(e);
            return out;
        }
    };
    let gen_ = match StellarGen::new(cfg.seed, cfg.profile.clone()) {
        Ok(g) => g,
        Err(e) => {
            out.error = Some(DriverError::Config(e.to_string()));
            return out;
        }
    };
    let spool = match (cfg.pregenerate, spool_dir) {
        (false, _) => None,
        (true, None) => {
            out.error = Some(DriverError::Config(
                "pregenerate needs a directory for its spool file".into(),
            ));
            return out;
        }
        (true, Some(at)) => {
            observer.phase("pregenerate");
            let phase = Phase::start("pregenerate");
            let spooled = pregenerate(cfg, &gen_, &at, observer);
            out.phases.push(phase.end());
            match spooled {
                Ok(s) => Some(s),
                Err(e) => {
                    out.error = Some(e);
                    return out;
                }
            }
        }
    };
    let mut phase = Phase::start("ingest");
    let mut hists: [OpHists; 3] = Default::default();
    if let Err(e) = ingest(
        (cfg, &gen_),
        label,
        (stores, devices),
        observer,
        (&mut out, &mut hists),
        spool,
    ) {
        out.error = Some(e);
    }
    let wall = phase.started.elapsed().as_secs_f64();
    out.phases.push(phase.end());
    out.summary = summarize(&out.batches, &hists, wall);
    if out.error.is_some() {
        return out;
    }
    let ingested: u32 = out.batches.iter().map(|b| b.ledgers).sum();
    // A store that discards writes (`null`) has nothing to read back.
    let checkable = !stores.iter().any(|s| s.capabilities().discards_writes);
    if checkable {
        observer.phase("verify");
        phase = Phase::start("verify");
        let verified = verify_measured(&gen_, stores, devices, ingested, cfg.verify_txs);
        out.phases.push(phase.end());
        match verified {
            Ok(reads) => out.lookup_reads = Some(reads),
            Err(e) => {
                out.error = Some(e);
                return out;
            }
        }
    }
    if cfg.streaming.ledgers > 0 {
        observer.phase("streaming");
        phase = Phase::start("streaming");
        let streamed = streaming(cfg, &gen_, stores, ingested, checkable);
        out.phases.push(phase.end());
        match streamed {
            Ok(s) => out.streaming = Some(s),
            Err(e) => out.error = Some(e),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ledger_counts_that_wrap_or_pass_32_bits_are_refused_naming_the_flags() {
        // 18446744073700000000 + the 120 streamed ledgers wraps a u64 sum.
        for (ledgers, streaming, rates) in [
            (18_446_744_073_700_000_000, 120, 0),
            (u64::MAX, u64::MAX, 0),
            (u64::from(u32::MAX), 0, 0),
            (1000, u64::MAX / 2, 3),
        ] {
            let mut cfg = StellarConfig {
                ledgers,
                ..StellarConfig::default()
            };
            cfg.streaming.ledgers = streaming;
            cfg.streaming.lookup_rates = vec![100.0; rates];
            let e = cfg.validate().expect_err("refused").to_string();
            assert!(
                e.contains("--ledgers")
                    && e.contains("--streaming-ledgers")
                    && e.contains("at most"),
                "{e}"
            );
        }
        let mut fits = StellarConfig {
            ledgers: u64::from(u32::MAX) - 59_000_000 - 120,
            ..StellarConfig::default()
        };
        fits.validate().expect("the largest that fits");
        fits.ledgers += 1;
        assert!(fits.validate().is_err());
    }

    #[test]
    fn poisson_arrival_without_a_rate_is_refused() {
        let mut cfg = StellarConfig::default();
        cfg.streaming.arrival = Arrival::Poisson;
        let e = cfg.validate().expect_err("refused").to_string();
        assert!(e.contains("--lookup-rate"), "{e}");
        cfg.streaming.lookup_rate = Some(100.0);
        cfg.validate().expect("open loop with poisson arrivals");
    }

    #[test]
    pub(super) fn plan_covers_every_ledger_once_within_batches() {
        for (ledgers, batch, commit) in [
            (10, 4, 3),
            (8, 4, 4),
            (1, 2000, 100),
            (2001, 2000, 100),
            (7, 3, 10),
        ] {
            let p = Plan {
                ledgers,
                batch,
                commit,
            };
            let mut next = 0u64;
            for k in 0..p.total_chunks() {
                let (b, start, n) = p.chunk(k).expect("in plan");
                assert_eq!(start, next, "{ledgers}/{batch}/{commit} chunk {k}");
                assert_eq!(u64::from(b), start / batch);
                assert_eq!(
                    (start + u64::from(n) - 1) / batch,
                    u64::from(b),
                    "chunk crosses a batch"
                );
                next += u64::from(n);
            }
            assert_eq!(next, ledgers);
        }
    }
}

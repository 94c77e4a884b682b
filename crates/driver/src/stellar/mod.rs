//! Stellar full-history ingestion, batch by batch, as the RocksDB report
//! measured it: generate, compress, write the three stores, flush, compact.

use ledgerbench_core::KvStore;
use ledgerbench_meter::loopdev::Device;
use ledgerbench_meter::rusage::Usage;
use ledgerbench_workloads::stellar::{STORES, StellarGen};

use crate::DriverError;
use crate::results::{BatchRecord, PhaseCost, Sample, StreamingResult, Summary};
use crate::segment::OpHists;

pub mod budget;
mod ingest;
mod lookups;
mod openloop;
mod produce;
mod spool;
mod spool_cache;

pub use openloop::Arrival;

use ingest::*;
use lookups::*;
pub use produce::StellarOps;
use produce::*;

pub use ledgerbench_results::workload::{CompactionStrategy, StellarConfig, StreamingConfig};

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

/// Where `pregenerate` keeps its spool file (created and removed by the run,
/// unless kept in `cache`).
pub struct SpoolAt<'a> {
    /// The directory (the run directory: never a store's device).
    pub dir: &'a std::path::Path,
    /// A directory where spools are kept for later runs of the same
    /// settings by the same binary, and reused (never a store's device).
    pub cache: Option<&'a std::path::Path>,
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
    run_resumed(
        cfg,
        label,
        (stores, devices),
        observer,
        spool_dir,
        Vec::new(),
    )
}

/// [`run_spooled`], going on from the batches `done` (a checkpointed run's
/// records, whose writes the stores hold): ingestion starts at the next
/// batch, generated exactly as an uninterrupted run generates it.
///
/// Long because the Stellar protocol's phases in order (ingest, verify, stream), each recording into the same outcome.
pub fn run_resumed(
    cfg: &StellarConfig,
    label: &str,
    (stores, devices): (Stores<'_>, Devices<'_>),
    observer: &mut dyn Observer,
    spool_dir: Option<SpoolAt<'_>>,
    done: Vec<BatchRecord>,
) -> Outcome {
    let mut out = Outcome {
        batches: done,
        summary: None,
        lookup_reads: None,
        streaming: None,
        ingest_samples: Vec::new(),
        phases: Vec::new(),
        error: None,
        stopped: None,
    };
    if let Err(e) = cfg.validate() {
        out.error = Some(e.into());
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
    if !out.batches.is_empty() && !cfg.checkpoint {
        out.error = Some(DriverError::Config(
            "only a checkpointed run (--checkpoint) goes on from its last batch".into(),
        ));
        return out;
    }
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
            let spooled = match at.cache {
                Some(dir) => spool_cache::cached(cfg, &gen_, (&at, dir), observer),
                None => pregenerate(
                    cfg,
                    &gen_,
                    (&at.dir.join("stellar.spool"), at.drop_behind),
                    observer,
                ),
            };
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
    // A checkpointed run is a long one that may have been resumed: its
    // stores' content, digested, shows it ended where an unbroken run ends.
    if cfg.checkpoint && checkable && out.error.is_none() {
        let names: Vec<String> = STORES.iter().map(|s| s.to_string()).collect();
        match crate::ops::final_content(&stores, &names) {
            Ok(content) => {
                for (name, c) in names.iter().zip(&content) {
                    if let Some(s) = out.summary.as_mut().and_then(|s| s.stores.get_mut(name)) {
                        s.final_entries = Some(c.entries);
                        s.content_sha256 = Some(c.sha256.clone());
                    }
                }
            }
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

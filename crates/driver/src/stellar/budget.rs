//! The harness's memory budget: how many ledgers a commit chunk may hold so
//! that every chunk in flight (queued, being generated, being written) fits
//! in it, whatever the batch size. A batch of 2,000 ledgers is written as
//! many commit chunks, so only the chunk size, never the batch size, sets
//! what the harness holds.

use ledgerbench_core::Batch;
use ledgerbench_workloads::stellar::{Ledger, StellarGen};

use super::StellarConfig;
use super::produce::Packer;
use crate::DriverError;

/// Harness heap besides the chunks: histograms, the scratch ledger, the
/// meters, result records. Measured (counting allocator, one generator,
/// LMDB as the writer): the peak grows by ~1.5 MiB per commit ledger (3.3
/// chunks of ~0.45 MiB) from ~27 MiB; with 24 MiB here the outgrow-memory
/// runs (commits of 21 ledgers) peaked at 53-70 MiB, so 32 MiB.
const OVERHEAD: u64 = 32 << 20;
/// Ledgers generated to estimate a ledger's size in a chunk.
const SAMPLE: u32 = 8;

/// The commit size a run uses and what its chunks should hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkPlan {
    /// Ledgers per commit chunk.
    pub commit_ledgers: u32,
    /// Estimated heap of one chunk, bytes.
    pub chunk_bytes: u64,
    /// Chunks counted in memory at once: two per generator (one queued,
    /// one being made), the one being written, and one more for a chunk
    /// that outgrows its reservation while being made.
    pub in_flight: u64,
}

impl ChunkPlan {
    /// The estimated harness heap: chunks in flight plus the fixed overhead.
    pub fn heap_bytes(&self) -> u64 {
        self.in_flight * self.chunk_bytes + OVERHEAD
    }
}

/// Heap one ledger of this profile takes in a chunk (key and compressed
/// value bytes of the three stores, plus per-entry records): the mean of a
/// few generated ledgers plus 10%, as a chunk of many ledgers averages out
/// their spread.
pub fn bytes_per_ledger(cfg: &StellarConfig) -> Result<u64, DriverError> {
    let gen_ = StellarGen::new(cfg.seed, cfg.profile.clone())
        .map_err(|e| DriverError::Config(e.to_string()))?;
    let mut packer = Packer::new(cfg.profile.zstd_level)?;
    let mut ledger = Ledger::default();
    let mut total = 0u64;
    for i in 0..SAMPLE {
        let mut writes = [Batch::new(), Batch::new(), Batch::new()];
        gen_.ledger_into(cfg.profile.first_ledger + i, &mut ledger);
        packer.pack(&ledger, &mut writes, &mut [0; 3])?;
        let bytes: u64 = writes
            .iter()
            .map(|w| w.logical_bytes() + 32 * w.len() as u64)
            .sum();
        total += bytes;
    }
    Ok(total / u64::from(SAMPLE) * 11 / 10)
}

/// What a few ledgers spread over a run say of the whole run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampled {
    /// Key and value bytes per ledger of each store, in store order.
    pub store_bytes_per_ledger: [f64; 3],
    /// Generator and compressor time per ledger on one thread, seconds.
    pub secs_per_ledger: f64,
}

/// Generates 64 ledgers spread evenly over the run's ledgers and measures
/// them: what each store will hold at the end, and the generator's pace.
pub fn sample(cfg: &StellarConfig) -> Result<Sampled, DriverError> {
    const N: u64 = 64;
    let gen_ = StellarGen::new(cfg.seed, cfg.profile.clone())
        .map_err(|e| DriverError::Config(e.to_string()))?;
    let mut packer = Packer::new(cfg.profile.zstd_level)?;
    let mut ledger = Ledger::default();
    let mut bytes = [0f64; 3];
    let n = N.min(cfg.ledgers.max(1));
    let started = std::time::Instant::now();
    for i in 0..n {
        let offset = (i * cfg.ledgers / n) as u32;
        let mut writes = [Batch::new(), Batch::new(), Batch::new()];
        gen_.ledger_into(cfg.profile.first_ledger + offset, &mut ledger);
        packer.pack(&ledger, &mut writes, &mut [0; 3])?;
        for (b, w) in bytes.iter_mut().zip(&writes) {
            *b += w.logical_bytes() as f64;
        }
    }
    Ok(Sampled {
        store_bytes_per_ledger: bytes.map(|b| b / n as f64),
        secs_per_ledger: started.elapsed().as_secs_f64() / n as f64,
    })
}

/// The chunk plan of `cfg` under a harness budget of `budget` bytes:
/// `commit_ledgers = 0` picks the largest chunk that fits (at most a
/// batch); a given size that does not fit is refused, naming the largest
/// that does.
pub fn plan_chunks(cfg: &StellarConfig, budget: u64) -> Result<ChunkPlan, DriverError> {
    let per_ledger = bytes_per_ledger(cfg)?;
    let in_flight = 2 * cfg.workers() as u64 + 2;
    let room = budget.saturating_sub(OVERHEAD);
    let fits = (room / (in_flight * per_ledger.max(1))).min(u64::from(u32::MAX)) as u32;
    // A commit never spans batches: one larger than a batch is the batch.
    let commit_ledgers = match cfg.commit_ledgers.min(cfg.batch_ledgers) {
        // Not even one ledger fits: no --commit-ledgers helps, only a budget.
        _ if fits == 0 => {
            return Err(DriverError::Config(format!(
                "a harness budget of {} MiB cannot hold {in_flight} chunks of even one ledger (~{} KiB each) beside ledgerbench's fixed {} MiB: raise --harness-budget to at least {} MiB",
                budget >> 20,
                per_ledger >> 10,
                OVERHEAD >> 20,
                (OVERHEAD + in_flight * per_ledger).div_ceil(1 << 20)
            )));
        }
        0 => fits.min(cfg.batch_ledgers),
        n if n > fits => {
            return Err(DriverError::Config(format!(
                "commit chunks of {n} ledgers hold ~{} MiB each and up to {in_flight} are in memory at once (~{} MiB), over the harness budget of {} MiB: use --commit-ledgers {} or less (a batch is still flushed and compacted as one), or raise --harness-budget",
                (u64::from(n) * per_ledger) >> 20,
                (in_flight * u64::from(n) * per_ledger + OVERHEAD) >> 20,
                budget >> 20,
                fits.max(1)
            )));
        }
        n => n,
    };
    Ok(ChunkPlan {
        commit_ledgers,
        chunk_bytes: u64::from(commit_ledgers) * per_ledger,
        in_flight,
    })
}

/// `cfg` with its commit size settled: as given when it fits the harness
/// budget, the largest that fits when 0; an error when a given size does
/// not fit. Every path that writes Stellar batches goes through this.
pub fn resolved(cfg: &StellarConfig) -> Result<StellarConfig, DriverError> {
    let plan = plan_chunks(cfg, cfg.harness_budget)?;
    Ok(StellarConfig {
        commit_ledgers: plan.commit_ledgers,
        ..cfg.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(batch: u32, commit: u32) -> StellarConfig {
        StellarConfig {
            batch_ledgers: batch,
            commit_ledgers: commit,
            workers: 1,
            ..StellarConfig::default()
        }
    }

    #[test]
    fn auto_commit_fits_the_budget_for_any_batch_size() {
        for batch in [10, 400, 2000] {
            let p = plan_chunks(&cfg(batch, 0), 64 << 20).expect("fits");
            assert!(p.commit_ledgers >= 1 && p.commit_ledgers <= batch, "{p:?}");
            assert!(p.heap_bytes() <= 64 << 20, "{p:?}");
        }
    }

    #[test]
    fn a_budget_that_holds_no_ledger_asks_for_a_larger_budget_whatever_the_commit() {
        let cfg = StellarConfig {
            commit_ledgers: 1,
            ..StellarConfig::default()
        };
        let e = plan_chunks(&cfg, 1).expect_err("refused").to_string();
        assert!(e.contains("raise --harness-budget"), "{e}");
        assert!(!e.contains("--commit-ledgers 1 or less"), "{e}");
    }

    #[test]
    fn a_commit_too_large_for_the_budget_is_refused_with_the_largest_that_fits() {
        let fits = plan_chunks(&cfg(2000, 0), 64 << 20).expect("fits");
        let e = plan_chunks(&cfg(2000, 2000), 64 << 20)
            .expect_err("2,000-ledger commits do not fit in 64 MiB")
            .to_string();
        assert!(
            e.contains(&format!("--commit-ledgers {}", fits.commit_ledgers)),
            "{e}"
        );
        assert!(plan_chunks(&cfg(2000, fits.commit_ledgers), 64 << 20).is_ok());
    }
}

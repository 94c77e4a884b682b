//! A blob store with a time to live, after EigenDA's LittDB soak: write-once
//! 33-byte keys with large values, batches flushed, blobs expired by age,
//! reads checked byte for byte; bounded by batches or by wall time (soak).

use std::time::{Duration, Instant};

use crate::generated::GenError;

use ledgerbench_rng::{Rng, stream};
use ledgerbench_trace::queue::{OwnedOp, Refill};
use ledgerbench_trace::{Expect, Header};
use serde::{Deserialize, Serialize};

/// Settings of a blob-store run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BlobConfig {
    /// Batches written; with `duration_secs`, whichever ends first.
    pub batches: u64,
    /// Soak: stop after the batch that passes this many seconds (0: off).
    pub duration_secs: u64,
    /// Blobs per batch.
    pub blobs_per_batch: u32,
    /// Bytes per blob.
    pub value_bytes: u32,
    /// Batches a blob lives before it expires.
    pub ttl_batches: u64,
    /// Live blobs read back (byte for byte) per batch.
    pub reads_per_batch: u32,
}

impl Default for BlobConfig {
    fn default() -> Self {
        Self {
            batches: 200,
            duration_secs: 0,
            blobs_per_batch: 8,
            value_bytes: 1 << 20,
            ttl_batches: 50,
            reads_per_batch: 8,
        }
    }
}

impl BlobConfig {
    /// Bytes of the blobs alive at once after the first expire.
    pub fn live_bytes(&self) -> u64 {
        self.ttl_batches
            .saturating_mul(u64::from(self.blobs_per_batch))
            .saturating_mul(u64::from(self.value_bytes))
    }
}

/// The blob-store generator.
pub struct Blobs {
    cfg: BlobConfig,
    header: Header,
    seed: u64,
    batch: u64,
    started: Option<Instant>,
    rng: Rng,
}

impl Blobs {
    /// A generator.
    pub fn new(seed: u64, cfg: BlobConfig) -> Result<Self, GenError> {
        if cfg.blobs_per_batch == 0 || cfg.value_bytes == 0 || cfg.ttl_batches == 0 {
            return Err(GenError::config(
                "blobs",
                "blobs_per_batch, value_bytes and ttl_batches must be at least 1",
            ));
        }
        if cfg.batches == 0 && cfg.duration_secs == 0 {
            return Err(GenError::config(
                "blobs",
                "set batches, duration_secs or both",
            ));
        }
        Ok(Self {
            header: crate::generated::header("blobs", seed, &["blobs"], &cfg),
            seed,
            batch: 0,
            started: None,
            rng: Rng::new(stream(seed, 0x626c, 0)),
            cfg,
        })
    }

    /// Key of blob `j` of batch `b`: 33 bytes regenerated from the seed.
    pub fn key(seed: u64, b: u64, j: u32) -> Vec<u8> {
        let mut k = Vec::with_capacity(33);
        Rng::new(stream(seed, b, u64::from(j))).fill(&mut k, 33);
        k
    }

    fn value_seed(&self, b: u64, j: u32) -> u64 {
        stream(self.seed ^ 0x7661, b, u64::from(j))
    }
}

impl Refill for Blobs {
    fn header(&self) -> &Header {
        &self.header
    }

    /// Batches of a count-bounded run, else seconds of a time-bounded one.
    fn progress(&self) -> Option<(u64, u64)> {
        if self.cfg.batches > 0 {
            Some((self.batch, self.cfg.batches))
        } else if self.cfg.duration_secs > 0 {
            let secs = self.started.map_or(0, |s| s.elapsed().as_secs());
            Some((secs.min(self.cfg.duration_secs), self.cfg.duration_secs))
        } else {
            None
        }
    }

    fn refill(&mut self, out: &mut Vec<OwnedOp>) -> Result<bool, ledgerbench_trace::SourceError> {
        let started = *self.started.get_or_insert_with(Instant::now);
        let by_count = self.cfg.batches > 0 && self.batch >= self.cfg.batches;
        let by_time = self.cfg.duration_secs > 0
            && started.elapsed() >= Duration::from_secs(self.cfg.duration_secs);
        if by_count || by_time {
            return Ok(false);
        }
        let b = self.batch;
        let len = self.cfg.value_bytes;
        for j in 0..self.cfg.blobs_per_batch {
            out.push(OwnedOp::PutGenerated(
                0,
                Self::key(self.seed, b, j),
                len,
                self.value_seed(b, j),
            ));
        }
        out.push(OwnedOp::Commit(false));
        out.push(OwnedOp::Flush(None));
        if b >= self.cfg.ttl_batches {
            let old = b - self.cfg.ttl_batches;
            for j in 0..self.cfg.blobs_per_batch {
                out.push(OwnedOp::Delete(0, Self::key(self.seed, old, j)));
            }
            out.push(OwnedOp::Commit(false));
            out.push(OwnedOp::Get(
                0,
                Self::key(self.seed, old, 0),
                Expect::Absent,
            ));
        }
        // Reads of live blobs: batches (b - ttl, b].
        let live = self.cfg.ttl_batches.min(b + 1);
        for _ in 0..self.cfg.reads_per_batch {
            let rb = b - self.rng.below(live);
            let j = self.rng.below(u64::from(self.cfg.blobs_per_batch)) as u32;
            out.push(OwnedOp::Get(
                0,
                Self::key(self.seed, rb, j),
                Expect::Generated {
                    len,
                    seed: self.value_seed(rb, j),
                },
            ));
        }
        self.batch += 1;
        out.push(OwnedOp::Mark(format!("batch {}", self.batch)));
        Ok(true)
    }
}

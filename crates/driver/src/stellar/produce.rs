//! The generator side: ledgers made and compressed by worker threads, in
//! commit-sized chunks, and the same as an operation stream.

use std::time::{Duration, Instant};

use ledgerbench_core::Batch;
use ledgerbench_workloads::stellar::{Ledger, STORES, StellarGen};

use super::*;
use crate::DriverError;
use ledgerbench_trace::queue::{OwnedOp, Refill};

pub(super) struct Chunk {
    pub(super) batch: u32,
    pub(super) ledgers: u32,
    pub(super) txs: u64,
    pub(super) writes: [Batch; 3],
    pub(super) raw: [u64; 3],
    pub(super) generate: Duration,
    pub(super) compress: Duration,
}

/// Maps a global chunk number to (batch, first ledger offset, ledger count).
#[derive(Clone, Copy)]
pub(super) struct Plan {
    pub(super) ledgers: u64,
    pub(super) batch: u64,
    pub(super) commit: u64,
}

impl Plan {
    pub(super) fn chunks_per_batch(&self) -> u64 {
        self.batch.div_ceil(self.commit)
    }

    pub(super) fn chunk(&self, k: u64) -> Option<(u32, u64, u32)> {
        let cpb = self.chunks_per_batch();
        let (b, j) = (k / cpb, k % cpb);
        let batch_start = b * self.batch;
        let batch_end = (batch_start + self.batch).min(self.ledgers);
        let start = batch_start + j * self.commit;
        if start >= batch_end {
            return None;
        }
        let n = (batch_end - start).min(self.commit);
        Some((b as u32, start, n as u32))
    }

    pub(super) fn chunks_in_batch(&self, b: u64) -> u64 {
        let start = b * self.batch;
        let len = (start + self.batch).min(self.ledgers) - start;
        len.div_ceil(self.commit)
    }

    pub(super) fn total_chunks(&self) -> u64 {
        let nb = self.ledgers.div_ceil(self.batch);
        (nb - 1) * self.chunks_per_batch() + self.chunks_in_batch(nb - 1)
    }
}

/// Turns generated ledgers into the three stores' writes, compressing into
/// one reused buffer so the per-transaction path allocates nothing.
pub(super) struct Packer {
    pub(super) compressor: zstd::bulk::Compressor<'static>,
    pub(super) buf: Vec<u8>,
    /// Operations and bytes per ledger of each store in the last chunk, so
    /// the next chunk's batches are sized once instead of doubling (which
    /// would leave up to half of each buffer allocated and unused).
    per_ledger: [(f64, f64); 3],
}

impl Packer {
    pub(super) fn new(level: i32) -> Result<Self, DriverError> {
        Ok(Self {
            compressor: zstd::bulk::Compressor::new(level)
                .map_err(|e| DriverError::Generator(format!("zstd: {e}")))?,
            buf: Vec::new(),
            per_ledger: [(0.0, 0.0); 3],
        })
    }

    /// Empty batches with room for `n` ledgers like the last chunk's.
    fn batches_for(&self, n: u32) -> [Batch; 3] {
        // 5% headroom: ledgers vary in size around the profile's means.
        let room = |(ops, bytes): (f64, f64)| {
            Batch::with_capacity(
                (ops * f64::from(n) * 1.05) as usize,
                (bytes * f64::from(n) * 1.05) as usize,
            )
        };
        self.per_ledger.map(room)
    }

    pub(super) fn compress(&mut self, src: &[u8]) -> Result<&[u8], DriverError> {
        self.buf.clear();
        self.buf.reserve(zstd::zstd_safe::compress_bound(src.len()));
        self.compressor
            .compress_to_buffer(src, &mut self.buf)
            .map_err(|e| DriverError::Generator(format!("zstd: {e}")))?;
        Ok(&self.buf)
    }

    /// Appends ledger `l` to `writes` (ledgers, txdata, txindex) and its raw
    /// (pre-compression) key + value bytes to `raw`.
    pub(super) fn pack(
        &mut self,
        l: &Ledger,
        writes: &mut [Batch; 3],
        raw: &mut [u64; 3],
    ) -> Result<(), DriverError> {
        let key = l.seq.to_be_bytes();
        writes[0].put(&key, self.compress(&l.raw)?);
        raw[0] += (4 + l.raw.len()) as u64;
        for (h, rec) in l.tx_hashes.iter().zip(&l.tx_records) {
            writes[1].put(h, self.compress(rec)?);
            raw[1] += (32 + rec.len()) as u64;
            writes[2].put(h, &key);
            raw[2] += 36;
        }
        Ok(())
    }
}

pub(super) fn produce(
    gen_: &StellarGen,
    plan: Plan,
    k: u64,
    packer: &mut Packer,
    ledger: &mut Ledger,
) -> Result<Chunk, DriverError> {
    let (batch, offset, n) = plan
        .chunk(k)
        .ok_or_else(|| DriverError::Generator(format!("chunk {k} out of plan")))?;
    let first = gen_.profile().first_ledger + offset as u32;
    let mut writes = packer.batches_for(n);
    let mut raw = [0u64; 3];
    let (mut generate, mut compress) = (Duration::ZERO, Duration::ZERO);
    let mut txs = 0u64;
    for seq in first..first + n {
        let t = Instant::now();
        gen_.ledger_into(seq, ledger);
        generate += t.elapsed();
        let t = Instant::now();
        packer.pack(ledger, &mut writes, &mut raw)?;
        compress += t.elapsed();
        txs += ledger.tx_hashes.len() as u64;
    }
    for (hint, w) in packer.per_ledger.iter_mut().zip(&writes) {
        *hint = (
            w.len() as f64 / f64::from(n),
            w.logical_bytes() as f64 / f64::from(n),
        );
    }
    Ok(Chunk {
        batch,
        ledgers: n,
        txs,
        writes,
        raw,
        generate,
        compress,
    })
}

/// The Stellar ingestion protocol as a stream of key-value operations, in
/// the same order the batch driver writes them (for `ledgerbench record`): per
/// chunk the three stores' puts and a commit; per batch a flush, the manual
/// compaction when that is the strategy, and a mark. The lookup phase is not
/// part of it. Wrap it in [`ledgerbench_trace::queue::Queued`] for an `OpSource`.
pub struct StellarOps {
    cfg: StellarConfig,
    gen_: StellarGen,
    plan: Plan,
    packer: Packer,
    ledger: Ledger,
    header: ledgerbench_trace::Header,
    next_chunk: u64,
}

impl StellarOps {
    /// A stream for `cfg`.
    pub fn new(cfg: &StellarConfig) -> Result<Self, DriverError> {
        cfg.validate()?;
        let cfg = &super::budget::resolved(cfg)?;
        let gen_ = StellarGen::new(cfg.seed, cfg.profile.clone())
            .map_err(|e| DriverError::Config(e.to_string()))?;
        Ok(Self {
            plan: Plan {
                ledgers: cfg.ledgers,
                batch: u64::from(cfg.batch_ledgers),
                commit: u64::from(cfg.commit_ledgers),
            },
            packer: Packer::new(cfg.profile.zstd_level)?,
            ledger: Ledger::default(),
            header: ledgerbench_trace::Header {
                workload: "stellar".into(),
                seed: cfg.seed,
                stores: STORES.iter().map(|s| s.to_string()).collect(),
                source: serde_json::to_value(cfg).unwrap_or_default(),
            },
            cfg: cfg.clone(),
            gen_,
            next_chunk: 0,
        })
    }

    pub(super) fn next_chunk(&mut self, out: &mut Vec<OwnedOp>) -> Result<bool, DriverError> {
        if self.next_chunk >= self.plan.total_chunks() {
            return Ok(false);
        }
        let k = self.next_chunk;
        self.next_chunk += 1;
        let chunk = produce(&self.gen_, self.plan, k, &mut self.packer, &mut self.ledger)?;
        for (i, w) in chunk.writes.iter().enumerate() {
            for op in w.iter() {
                if let ledgerbench_core::BatchOp::Put(key, value) = op {
                    out.push(OwnedOp::Put(i as u8, key.to_vec(), value.to_vec()));
                }
            }
        }
        out.push(OwnedOp::Commit(false));
        // The last chunk of a batch ends it, as in the batch driver.
        let b = u64::from(chunk.batch);
        if k + 1 == b * self.plan.chunks_per_batch() + self.plan.chunks_in_batch(b) {
            out.push(OwnedOp::Flush(None));
            if self.cfg.compaction == CompactionStrategy::Manual {
                out.push(OwnedOp::Compact(None));
            }
            out.push(OwnedOp::Mark(format!("batch {}", b + 1)));
        }
        Ok(true)
    }
}

impl Refill for StellarOps {
    fn header(&self) -> &ledgerbench_trace::Header {
        &self.header
    }

    fn refill(&mut self, out: &mut Vec<OwnedOp>) -> Result<bool, ledgerbench_trace::SourceError> {
        self.next_chunk(out).map_err(Into::into)
    }
}

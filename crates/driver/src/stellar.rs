//! Stellar full-history ingestion, batch by batch, as the RocksDB report
//! measured it: generate, compress, write the three stores, flush, compact.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, bounded};
use hdrhistogram::Histogram;
use kvbench_core::{Batch, KvStore};
use kvbench_meter::loopdev::Device;
use kvbench_meter::rusage::Usage;
use kvbench_rng::{Rng, stream};
use kvbench_workload::stellar::{Ledger, STORES, StellarGen, StellarProfile, find_tx};
use serde::{Deserialize, Serialize};

use crate::DriverError;
use crate::results::{
    BatchRecord, Latency, PhaseCost, Sample, StoreBatch, StreamingResult, Summary,
};
use crate::segment::{
    Counters, OpHists, SegmentMeter, histogram, record, sample_every_second, summarize_stores,
};
use kvbench_trace::queue::{OwnedOp, Refill};

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
}

impl Default for StreamingConfig {
    fn default() -> Self {
        Self {
            ledgers: 120,
            close_interval_ms: 5000,
            lookup_workers: 2,
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
    /// Ledgers per write commit inside a batch; bounds the harness's memory.
    pub commit_ledgers: u32,
    /// What follows each batch.
    pub compaction: CompactionStrategy,
    /// Generator threads; 0 picks one less than the cores (at least one).
    pub workers: usize,
    /// Random transactions read back through both lookup paths after
    /// ingestion, each checked against its regenerated value.
    pub verify_txs: u32,
    /// Shape of the data.
    pub profile: StellarProfile,
    /// Lookup phase after ingestion.
    pub streaming: StreamingConfig,
}

impl Default for StellarConfig {
    fn default() -> Self {
        Self {
            seed: 42,
            ledgers: 468_038,
            batch_ledgers: 2000,
            commit_ledgers: 100,
            compaction: CompactionStrategy::Manual,
            workers: 0,
            verify_txs: 1000,
            profile: StellarProfile::default(),
            streaming: StreamingConfig::default(),
        }
    }
}

impl StellarConfig {
    /// Checks the settings, naming any that is out of range.
    pub fn validate(&self) -> Result<(), DriverError> {
        let bad = |m: &str| Err(DriverError::Config(m.to_string()));
        if self.ledgers == 0 {
            return bad("ledgers must be at least 1");
        }
        if self.batch_ledgers == 0 || self.commit_ledgers == 0 {
            return bad("batch_ledgers and commit_ledgers must be at least 1");
        }
        if u64::from(self.profile.first_ledger) + self.ledgers + self.streaming.ledgers
            > u64::from(u32::MAX)
        {
            return bad("first_ledger + ledgers overflows a 32-bit ledger sequence");
        }
        if self.streaming.ledgers > 0 && self.streaming.lookup_workers == 0 {
            return bad("streaming.lookup_workers must be at least 1 when streaming.ledgers > 0");
        }
        self.profile
            .validate()
            .map_err(|e| DriverError::Config(e.to_string()))
    }

    fn workers(&self) -> usize {
        if self.workers > 0 {
            return self.workers;
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        cores.saturating_sub(1).max(1)
    }

    fn batches(&self) -> u32 {
        self.ledgers.div_ceil(u64::from(self.batch_ledgers)) as u32
    }
}

/// Receives progress as the run goes.
pub trait Observer {
    /// A batch finished.
    fn batch_done(&mut self, _rec: &BatchRecord, _total_batches: u32) {}
    /// A phase started (`verify`, `streaming`, ...).
    fn phase(&mut self, _name: &str) {}
}

/// What ingestion produced, including a partial run that ended in an error.
#[derive(Debug)]
pub struct Outcome {
    /// Batches completed.
    pub batches: Vec<BatchRecord>,
    /// Totals, when at least one batch completed.
    pub summary: Option<Summary>,
    /// Lookup phase, when it ran.
    pub streaming: Option<StreamingResult>,
    /// One sample per second of ingestion.
    pub ingest_samples: Vec<Sample>,
    /// Cost of each phase that ran.
    pub phases: Vec<PhaseCost>,
    /// The error that ended the run, if any.
    pub error: Option<DriverError>,
}

/// The three stores, in [`STORES`] order.
pub type Stores<'a> = [&'a dyn KvStore; 3];

/// Each store's private device, when it has one, in [`STORES`] order.
pub type Devices<'a> = [Option<&'a Device>; 3];

struct Chunk {
    batch: u32,
    ledgers: u32,
    txs: u64,
    writes: [Batch; 3],
    raw: [u64; 3],
    generate: Duration,
    compress: Duration,
}

/// Maps a global chunk number to (batch, first ledger offset, ledger count).
#[derive(Clone, Copy)]
struct Plan {
    ledgers: u64,
    batch: u64,
    commit: u64,
}

impl Plan {
    fn chunks_per_batch(&self) -> u64 {
        self.batch.div_ceil(self.commit)
    }

    fn chunk(&self, k: u64) -> Option<(u32, u64, u32)> {
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

    fn chunks_in_batch(&self, b: u64) -> u64 {
        let start = b * self.batch;
        let len = (start + self.batch).min(self.ledgers) - start;
        len.div_ceil(self.commit)
    }

    fn total_chunks(&self) -> u64 {
        let nb = self.ledgers.div_ceil(self.batch);
        (nb - 1) * self.chunks_per_batch() + self.chunks_in_batch(nb - 1)
    }
}

/// Turns generated ledgers into the three stores' writes, compressing into
/// one reused buffer so the per-transaction path allocates nothing.
struct Packer {
    compressor: zstd::bulk::Compressor<'static>,
    buf: Vec<u8>,
}

impl Packer {
    fn new(level: i32) -> Result<Self, DriverError> {
        Ok(Self {
            compressor: zstd::bulk::Compressor::new(level)
                .map_err(|e| DriverError::Generator(format!("zstd: {e}")))?,
            buf: Vec::new(),
        })
    }

    fn compress(&mut self, src: &[u8]) -> Result<&[u8], DriverError> {
        self.buf.clear();
        self.buf.reserve(zstd::zstd_safe::compress_bound(src.len()));
        self.compressor
            .compress_to_buffer(src, &mut self.buf)
            .map_err(|e| DriverError::Generator(format!("zstd: {e}")))?;
        Ok(&self.buf)
    }

    /// Appends ledger `l` to `writes` (ledgers, txdata, txindex) and its raw
    /// (pre-compression) key + value bytes to `raw`.
    fn pack(
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

fn produce(
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
    let mut writes = [Batch::new(), Batch::new(), Batch::new()];
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
/// the same order the batch driver writes them (for `kvbench record`): per
/// chunk the three stores' puts and a commit; per batch a flush, the manual
/// compaction when that is the strategy, and a mark. The lookup phase is not
/// part of it. Wrap it in [`kvbench_trace::queue::Queued`] for an `OpSource`.
pub struct StellarOps {
    cfg: StellarConfig,
    gen_: StellarGen,
    plan: Plan,
    packer: Packer,
    ledger: Ledger,
    header: kvbench_trace::Header,
    next_chunk: u64,
}

impl StellarOps {
    /// A stream for `cfg`.
    pub fn new(cfg: &StellarConfig) -> Result<Self, DriverError> {
        cfg.validate()?;
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
            header: kvbench_trace::Header {
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

    fn next_chunk(&mut self, out: &mut Vec<OwnedOp>) -> Result<bool, DriverError> {
        if self.next_chunk >= self.plan.total_chunks() {
            return Ok(false);
        }
        let k = self.next_chunk;
        self.next_chunk += 1;
        let chunk = produce(&self.gen_, self.plan, k, &mut self.packer, &mut self.ledger)?;
        for (i, w) in chunk.writes.iter().enumerate() {
            for op in w.iter() {
                if let kvbench_core::BatchOp::Put(key, value) = op {
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
    fn header(&self) -> &kvbench_trace::Header {
        &self.header
    }

    fn refill(&mut self, out: &mut Vec<OwnedOp>) -> Result<bool, String> {
        self.next_chunk(out).map_err(|e| e.to_string())
    }
}

fn store_err(i: usize) -> impl Fn(kvbench_core::Error) -> DriverError {
    move |source| DriverError::Store {
        store: STORES[i].to_string(),
        source,
    }
}

/// Runs ingestion, then verification and the lookup phase, on three open stores.
pub fn run(
    cfg: &StellarConfig,
    label: &str,
    stores: Stores<'_>,
    devices: Devices<'_>,
    observer: &mut dyn Observer,
) -> Outcome {
    let mut out = Outcome {
        batches: Vec::new(),
        summary: None,
        streaming: None,
        ingest_samples: Vec::new(),
        phases: Vec::new(),
        error: None,
    };
    if let Err(e) = cfg.validate() {
        out.error = Some(e);
        return out;
    }
    let gen_ = match StellarGen::new(cfg.seed, cfg.profile.clone()) {
        Ok(g) => g,
        Err(e) => {
            out.error = Some(DriverError::Config(e.to_string()));
            return out;
        }
    };
    let mut phase = Phase::start("ingest");
    let mut hists: [OpHists; 3] = Default::default();
    if let Err(e) = ingest(
        cfg, &gen_, label, stores, devices, observer, &mut out, &mut hists,
    ) {
        out.error = Some(e);
    }
    let wall = phase.started.elapsed().as_secs_f64();
    out.phases.push(phase.end());
    out.summary = summarize(&out.batches, &hists, wall);
    if out.error.is_some() {
        return out;
    }
    let ingested = cfg.ledgers as u32;
    observer.phase("verify");
    phase = Phase::start("verify");
    let verified = verify(&gen_, stores, ingested, cfg.verify_txs);
    out.phases.push(phase.end());
    if let Err(e) = verified {
        out.error = Some(e);
        return out;
    }
    if cfg.streaming.ledgers > 0 {
        observer.phase("streaming");
        phase = Phase::start("streaming");
        let streamed = streaming(cfg, &gen_, stores, ingested);
        out.phases.push(phase.end());
        match streamed {
            Ok(s) => out.streaming = Some(s),
            Err(e) => out.error = Some(e),
        }
    }
    out
}

/// A phase being timed.
struct Phase {
    name: &'static str,
    started: Instant,
    usage: Usage,
}

impl Phase {
    fn start(name: &'static str) -> Self {
        Self {
            name,
            started: Instant::now(),
            usage: Usage::now(),
        }
    }

    fn end(&self) -> PhaseCost {
        PhaseCost {
            phase: self.name.to_string(),
            wall_secs: self.started.elapsed().as_secs_f64(),
            usage: Usage::now().since(&self.usage),
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn ingest(
    cfg: &StellarConfig,
    gen_: &StellarGen,
    label: &str,
    stores: Stores<'_>,
    devices: Devices<'_>,
    observer: &mut dyn Observer,
    out: &mut Outcome,
    hists: &mut [OpHists; 3],
) -> Result<(), DriverError> {
    let plan = Plan {
        ledgers: cfg.ledgers,
        batch: u64::from(cfg.batch_ledgers),
        commit: u64::from(cfg.commit_ledgers),
    };
    let workers = cfg.workers();
    let total_batches = cfg.batches();
    let stop = AtomicBool::new(false);
    let counters = Counters::for_ledgers();
    let started = Instant::now();
    std::thread::scope(|scope| {
        let sampler = scope.spawn(|| sample_every_second(&stores, &counters, &stop, started));
        let mut rxs: Vec<Receiver<Result<Chunk, DriverError>>> = Vec::with_capacity(workers);
        for w in 0..workers {
            // Two chunks ahead per worker: the engine never waits on a
            // healthy generator, and memory stays bounded.
            let (tx, rx) = bounded(2);
            rxs.push(rx);
            let stop = &stop;
            let level = cfg.profile.zstd_level;
            scope.spawn(move || {
                let mut packer = match Packer::new(level) {
                    Ok(p) => p,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                let mut ledger = Ledger::default();
                let mut k = w as u64;
                while k < plan.total_chunks() && !stop.load(Ordering::Relaxed) {
                    let chunk = produce(gen_, plan, k, &mut packer, &mut ledger);
                    if tx.send(chunk).is_err() {
                        return;
                    }
                    k += workers as u64;
                }
            });
        }
        let result = write_batches(
            cfg,
            label,
            Writer {
                stores,
                devices,
                counters: &counters,
                hists,
            },
            plan,
            &rxs,
            observer,
            &mut out.batches,
            total_batches,
        );
        stop.store(true, Ordering::Relaxed);
        drop(rxs);
        out.ingest_samples = sampler.join().unwrap_or_default();
        result
    })
}

/// What the ingestion writer writes to and records into.
struct Writer<'a> {
    stores: Stores<'a>,
    devices: Devices<'a>,
    counters: &'a Counters,
    hists: &'a mut [OpHists; 3],
}

#[allow(clippy::too_many_arguments)]
fn write_batches(
    cfg: &StellarConfig,
    label: &str,
    w: Writer<'_>,
    plan: Plan,
    rxs: &[Receiver<Result<Chunk, DriverError>>],
    observer: &mut dyn Observer,
    records: &mut Vec<BatchRecord>,
    total_batches: u32,
) -> Result<(), DriverError> {
    let Writer {
        stores,
        devices,
        counters,
        hists,
    } = w;
    let workers = rxs.len() as u64;
    let names: Vec<String> = STORES.iter().map(|s| s.to_string()).collect();
    let mut meter = SegmentMeter::new(&names, &stores, &devices)?;
    let mut k = 0u64;
    for b in 0..u64::from(total_batches) {
        let batch_start = Instant::now();
        let mut rec_stores = meter.fresh();
        let (mut gen_secs, mut comp_secs, mut wait_secs) = (0.0, 0.0, 0.0);
        let (mut ledgers, mut txs) = (0u32, 0u64);
        for _ in 0..plan.chunks_in_batch(b) {
            let t = Instant::now();
            let chunk = rxs[(k % workers) as usize]
                .recv()
                .map_err(|_| DriverError::Generator("generator thread exited early".into()))??;
            wait_secs += t.elapsed().as_secs_f64();
            debug_assert_eq!(u64::from(chunk.batch), b);
            k += 1;
            gen_secs += chunk.generate.as_secs_f64();
            comp_secs += chunk.compress.as_secs_f64();
            ledgers += chunk.ledgers;
            txs += chunk.txs;
            for (i, store) in stores.iter().enumerate() {
                let t = Instant::now();
                store.write(&chunk.writes[i]).map_err(store_err(i))?;
                let r = &mut rec_stores[i];
                r.write_secs += record(&mut hists[i].commit, t.elapsed());
                r.entries += chunk.writes[i].len() as u64;
                r.logical_bytes += chunk.writes[i].logical_bytes();
                r.raw_bytes += chunk.raw[i];
                counters
                    .bytes
                    .fetch_add(chunk.writes[i].logical_bytes(), Ordering::Relaxed);
            }
            counters
                .ledgers
                .fetch_add(u64::from(chunk.ledgers), Ordering::Relaxed);
        }
        for (i, store) in stores.iter().enumerate() {
            let t = Instant::now();
            store.flush().map_err(store_err(i))?;
            rec_stores[i].flush_secs = record(&mut hists[i].flush, t.elapsed());
        }
        if cfg.compaction == CompactionStrategy::Manual {
            for (i, store) in stores.iter().enumerate() {
                if store.capabilities().manual_compaction {
                    let t = Instant::now();
                    store.compact().map_err(store_err(i))?;
                    rec_stores[i].compact_secs =
                        Some(record(&mut hists[i].compaction, t.elapsed()));
                }
            }
        }
        let total_secs = batch_start.elapsed().as_secs_f64();
        let process_write_bytes = meter.close(&mut rec_stores)?;
        let rec = BatchRecord {
            label: label.to_string(),
            batch: b as u32 + 1,
            first_ledger: cfg.profile.first_ledger + (b * plan.batch) as u32,
            ledgers,
            txs,
            generate_secs: gen_secs,
            compress_secs: comp_secs,
            writer_wait_secs: wait_secs,
            total_secs,
            process_write_bytes,
            stores: rec_stores,
        };
        observer.batch_done(&rec, total_batches);
        records.push(rec);
    }
    Ok(())
}

fn summarize(batches: &[BatchRecord], hists: &[OpHists; 3], wall: f64) -> Option<Summary> {
    let names: Vec<String> = STORES.iter().map(|s| s.to_string()).collect();
    let segments: Vec<&[StoreBatch]> = batches.iter().map(|b| b.stores.as_slice()).collect();
    let process: Vec<Option<u64>> = batches.iter().map(|b| b.process_write_bytes).collect();
    let (stores, total) = summarize_stores(&names, &segments, &process, hists, None)?;
    let ledgers: u64 = batches.iter().map(|b| u64::from(b.ledgers)).sum();
    Some(Summary {
        total: Some(total),
        batches: batches.len() as u32,
        ledgers,
        txs: batches.iter().map(|b| b.txs).sum(),
        wall_secs: wall,
        ledgers_per_sec: ledgers as f64 / wall.max(1e-9),
        stores,
    })
}

/// Reads transactions back by hash, both ways. A lookup fetches and
/// decompresses, as an application would; checking the result against the
/// regenerated record is a separate step, so it stays out of the timings.
struct Lookup<'a> {
    gen_: &'a StellarGen,
    stores: Stores<'a>,
    buf: Vec<u8>,
    ledger: Vec<u8>,
    /// The record the last lookup found.
    value: Vec<u8>,
    expect: Vec<u8>,
}

impl<'a> Lookup<'a> {
    fn new(gen_: &'a StellarGen, stores: Stores<'a>) -> Self {
        Self {
            gen_,
            stores,
            buf: Vec::new(),
            ledger: Vec::new(),
            value: Vec::new(),
            expect: Vec::new(),
        }
    }

    fn pick(&self, r: &mut Rng, first: u32, last: u32) -> Option<(u32, u32)> {
        for _ in 0..16 {
            let seq = first + r.below(u64::from(last - first + 1)) as u32;
            let n = self.gen_.tx_count(seq);
            if n > 0 {
                return Some((seq, r.below(u64::from(n)) as u32));
            }
        }
        None
    }

    /// txdata[hash] -> record into `value`; false when absent or undecodable.
    fn one_step(&mut self, seq: u32, i: u32) -> Result<bool, DriverError> {
        let h = self.gen_.tx_hash(seq, i);
        if !self.stores[1]
            .get_into(&h, &mut self.buf)
            .map_err(store_err(1))?
        {
            return Ok(false);
        }
        self.value.clear();
        Ok(zstd::stream::copy_decode(&self.buf[..], &mut self.value).is_ok())
    }

    /// txindex[hash] -> seq, ledgers[seq] -> ledger, then the transaction's
    /// record in it into `value`; false when any step finds nothing.
    fn two_step(&mut self, seq: u32, i: u32) -> Result<bool, DriverError> {
        let h = self.gen_.tx_hash(seq, i);
        if !self.stores[2]
            .get_into(&h, &mut self.buf)
            .map_err(store_err(2))?
        {
            return Ok(false);
        }
        let Ok(found) = <[u8; 4]>::try_from(&self.buf[..]) else {
            return Ok(false);
        };
        if !self.stores[0]
            .get_into(&found, &mut self.buf)
            .map_err(store_err(0))?
        {
            return Ok(false);
        }
        self.ledger.clear();
        if zstd::stream::copy_decode(&self.buf[..], &mut self.ledger).is_err() {
            return Ok(false);
        }
        self.value.clear();
        match find_tx(&self.ledger, &h) {
            Some(rec) => {
                self.value.extend_from_slice(rec);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Whether the last lookup found transaction `i` of ledger `seq` as generated.
    fn found_expected(&mut self, seq: u32, i: u32) -> bool {
        self.expect.clear();
        self.gen_.tx_record(seq, i, &mut self.expect);
        self.value == self.expect
    }
}

fn verify(gen_: &StellarGen, stores: Stores<'_>, ledgers: u32, n: u32) -> Result<(), DriverError> {
    let first = gen_.profile().first_ledger;
    let last = first + ledgers - 1;
    let mut l = Lookup::new(gen_, stores);
    let mut r = Rng::new(stream(gen_.seed(), 0x7665_7269_6679, 0));
    for _ in 0..n {
        let Some((seq, i)) = l.pick(&mut r, first, last) else {
            continue;
        };
        let one = l.one_step(seq, i)? && l.found_expected(seq, i);
        if !(one && l.two_step(seq, i)? && l.found_expected(seq, i)) {
            return Err(DriverError::Verify(format!(
                "transaction {i} of ledger {seq} did not read back as written"
            )));
        }
    }
    // A hash that was never written must read as absent.
    if stores[1].get(&[0xa5; 32]).map_err(store_err(1))?.is_some() {
        return Err(DriverError::Verify(
            "a never-written hash was found in txdata".into(),
        ));
    }
    Ok(())
}

fn streaming(
    cfg: &StellarConfig,
    gen_: &StellarGen,
    stores: Stores<'_>,
    ingested: u32,
) -> Result<StreamingResult, DriverError> {
    let s = &cfg.streaming;
    let first = gen_.profile().first_ledger;
    let last = AtomicU32::new(first + ingested - 1);
    let done = AtomicBool::new(false);
    let counters = Counters::for_ledgers();
    let started = Instant::now();
    // Plain threads, not an async runtime: every task here is a blocking
    // engine call, and a thread per role keeps the writer's pacing exact.
    std::thread::scope(|scope| -> Result<StreamingResult, DriverError> {
        let mut workers = Vec::new();
        for w in 0..s.lookup_workers {
            let (last, done, counters) = (&last, &done, &counters);
            workers.push(scope.spawn(
                move || -> Result<(Histogram<u64>, Histogram<u64>, u64), DriverError> {
                    let mut l = Lookup::new(gen_, stores);
                    let mut r = Rng::new(stream(gen_.seed(), 0x6c6f_6f6b, w as u64));
                    let (mut one, mut two, mut bad) = (histogram(), histogram(), 0u64);
                    while !done.load(Ordering::Relaxed) {
                        let Some((seq, i)) = l.pick(&mut r, first, last.load(Ordering::Acquire))
                        else {
                            continue;
                        };
                        // Only the lookups are timed, not the checks.
                        let t = Instant::now();
                        let found1 = l.one_step(seq, i)?;
                        record(&mut one, t.elapsed());
                        let ok1 = found1 && l.found_expected(seq, i);
                        let t = Instant::now();
                        let found2 = l.two_step(seq, i)?;
                        record(&mut two, t.elapsed());
                        let ok2 = found2 && l.found_expected(seq, i);
                        bad += u64::from(!ok1) + u64::from(!ok2);
                        counters.lookups.fetch_add(2, Ordering::Relaxed);
                    }
                    Ok((one, two, bad))
                },
            ));
        }
        let sampler = scope.spawn(|| sample_every_second(&stores, &counters, &done, started));
        let writer = (|| -> Result<Histogram<u64>, DriverError> {
            let mut hist = histogram();
            let mut ledger = Ledger::default();
            let mut packer = Packer::new(cfg.profile.zstd_level)?;
            let mut w = [Batch::new(), Batch::new(), Batch::new()];
            let interval = Duration::from_millis(s.close_interval_ms);
            let mut next = Instant::now();
            for n in 0..s.ledgers {
                let seq = first + ingested + n as u32;
                gen_.ledger_into(seq, &mut ledger);
                w.iter_mut().for_each(Batch::clear);
                packer.pack(&ledger, &mut w, &mut [0; 3])?;
                if !interval.is_zero() {
                    next += interval;
                    if let Some(wait) = next.checked_duration_since(Instant::now()) {
                        std::thread::sleep(wait);
                    }
                }
                let t = Instant::now();
                for (i, store) in stores.iter().enumerate() {
                    store.write(&w[i]).map_err(store_err(i))?;
                }
                record(&mut hist, t.elapsed());
                last.store(seq, Ordering::Release);
                counters.ledgers.fetch_add(1, Ordering::Relaxed);
                counters.bytes.fetch_add(
                    w.iter().map(Batch::logical_bytes).sum::<u64>(),
                    Ordering::Relaxed,
                );
            }
            Ok(hist)
        })();
        done.store(true, Ordering::Relaxed);
        let commit_hist = writer?;
        let (mut one, mut two, mut bad) = (histogram(), histogram(), 0u64);
        for w in workers {
            let (a, b, m) = w
                .join()
                .map_err(|_| DriverError::Generator("lookup thread panicked".into()))??;
            let _ = one.add(&a);
            let _ = two.add(&b);
            bad += m;
        }
        let samples = sampler
            .join()
            .map_err(|_| DriverError::Generator("sampler thread panicked".into()))?;
        Ok(StreamingResult {
            ledgers: s.ledgers,
            close_interval_secs: (s.close_interval_ms > 0)
                .then(|| s.close_interval_ms as f64 / 1000.0),
            wall_secs: started.elapsed().as_secs_f64(),
            lookup_workers: s.lookup_workers,
            one_step: Latency::from_histogram(&one),
            two_step: Latency::from_histogram(&two),
            ledger_commit: Latency::from_histogram(&commit_hist),
            mismatches: bad,
            samples,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_covers_every_ledger_once_within_batches() {
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

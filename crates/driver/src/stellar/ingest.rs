//! Ingestion: chunks written to the three stores, flush and compaction per
//! batch, every meter read at batch ends.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crossbeam_channel::{Receiver, bounded};
use ledgerbench_workloads::stellar::{Ledger, STORES, StellarGen};

use super::spool::{SpoolReader, SpoolWriter};
use super::*;
use crate::DriverError;
use crate::results::{BatchRecord, PhaseCost, StoreBatch, Summary};
use crate::segment::{
    Counters, Live, OpHists, SegmentMeter, record, sample_every_second, summarize_stores,
};

/// A phase being timed.
pub(super) struct Phase {
    pub(super) name: &'static str,
    pub(super) started: Instant,
    pub(super) usage: Usage,
}

impl Phase {
    pub(super) fn start(name: &'static str) -> Self {
        Self {
            name,
            started: Instant::now(),
            usage: Usage::now(),
        }
    }

    pub(super) fn end(&self) -> PhaseCost {
        PhaseCost {
            phase: self.name.to_string(),
            wall_secs: self.started.elapsed().as_secs_f64(),
            usage: Usage::now().since(&self.usage),
        }
    }
}

/// The chunk plan of a config.
pub(super) fn plan_of(cfg: &StellarConfig) -> Plan {
    Plan {
        ledgers: cfg.ledgers,
        batch: u64::from(cfg.batch_ledgers),
        commit: u64::from(cfg.commit_ledgers),
    }
}

/// Starts `workers` generator threads in `scope` making the chunks from
/// `first` on, chunk `first + j` on worker j % workers; returns their
/// queues in worker order.
fn spawn_generators<'s, 'e: 's>(
    scope: &'s std::thread::Scope<'s, 'e>,
    (cfg, gen_): (&'e StellarConfig, &'e StellarGen),
    first: u64,
    stop: &'e AtomicBool,
) -> Vec<Receiver<Result<Chunk, DriverError>>> {
    let plan = plan_of(cfg);
    let workers = cfg.workers();
    let mut rxs = Vec::with_capacity(workers);
    for w in 0..workers {
        // One chunk queued and one being made per worker, and one being
        // written: the engine never waits on a healthy generator, and
        // the harness holds at most 2 x workers + 1 chunks
        // (budget::plan_chunks sizes them to fit).
        let (tx, rx) = bounded(1);
        rxs.push(rx);
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
            let mut k = first + w as u64;
            while k < plan.total_chunks() && !stop.load(Ordering::Relaxed) {
                let chunk = produce(gen_, plan, k, &mut packer, &mut ledger);
                if tx.send(chunk).is_err() {
                    return;
                }
                k += workers as u64;
            }
        });
    }
    rxs
}

/// Generates every chunk into the new spool file `path` before the timed ingestion
/// (`pregenerate`), with the same generator threads as the live path.
pub(super) fn pregenerate(
    cfg: &StellarConfig,
    gen_: &StellarGen,
    (path, drop_behind): (&Path, bool),
    observer: &mut dyn Observer,
) -> Result<SpoolReader, DriverError> {
    let plan = plan_of(cfg);
    let mut spool = SpoolWriter::create(path)?;
    let stop = AtomicBool::new(false);
    let total = plan.total_chunks();
    std::thread::scope(|scope| {
        let rxs = spawn_generators(scope, (cfg, gen_), 0, &stop);
        let result = (|| -> Result<(), DriverError> {
            for k in 0..total {
                let chunk = rxs[(k % rxs.len() as u64) as usize].recv().map_err(|_| {
                    DriverError::Generator("generator thread exited early".into())
                })??;
                spool.append(&chunk)?;
                if (k + 1) % (total / 10).max(1) == 0 {
                    observer.phase(&format!("pregenerate: {} of {total} chunks", k + 1));
                }
            }
            Ok(())
        })();
        stop.store(true, Ordering::Relaxed);
        drop(rxs);
        result
    })?;
    spool.finish(drop_behind)
}

/// Writes every batch of the workload (`cfg` and its generator) after those
/// already in `out` into the stores (and their devices), recording batches
/// and samples into `out` and latencies into `hists`; generated data comes
/// from generator threads, or from `spool` when it was generated ahead.
pub(super) fn ingest(
    (cfg, gen_): (&StellarConfig, &StellarGen),
    label: &str,
    (stores, devices): (Stores<'_>, Devices<'_>),
    observer: &mut dyn Observer,
    (out, hists): (&mut Outcome, &mut [OpHists; 3]),
    spool: Option<SpoolReader>,
) -> Result<(), DriverError> {
    let plan = plan_of(cfg);
    let first = out.batches.len() as u64 * plan.chunks_per_batch();
    if first > 0 && spool.is_some() {
        return Err(DriverError::Config(
            "a pregenerated spool is read from its start; it cannot go on from a batch".into(),
        ));
    }
    let stop = AtomicBool::new(false);
    let counters = Counters::for_ledgers();
    let started = Instant::now();
    std::thread::scope(|scope| {
        let _stops = crate::segment::SetOnDrop(&stop);
        let sampler = scope.spawn(|| sample_every_second(&stores, &counters, &stop, started));
        let rxs = match spool {
            // One reader thread streams the spool: reading a chunk costs a
            // copy, not a generation.
            Some(reader) => {
                let (tx, rx) = bounded(1);
                scope.spawn(move || reader.stream(plan.total_chunks(), &tx));
                vec![rx]
            }
            None => spawn_generators(scope, (cfg, gen_), first, &stop),
        };
        let result = write_batches(
            cfg,
            label,
            Writer {
                gen_,
                stores,
                devices,
                counters: &counters,
                hists,
            },
            plan,
            &rxs,
            observer,
            &mut out.batches,
        );
        stop.store(true, Ordering::Relaxed);
        drop(rxs);
        out.ingest_samples = sampler.join().unwrap_or_default();
        out.stopped = result?;
        Ok(())
    })
}

/// What the ingestion writer writes to and records into.
pub(super) struct Writer<'a> {
    pub(super) gen_: &'a StellarGen,
    pub(super) stores: Stores<'a>,
    pub(super) devices: Devices<'a>,
    pub(super) counters: &'a Counters,
    pub(super) hists: &'a mut [OpHists; 3],
}

/// Writes the batches of `plan` after those in `records` as chunks arrive
/// on `rxs`, a record per batch; stops early (and says why) when a batch is
/// over the workload's bound.
///
/// Long because the batch protocol's steps (write, flush, compact, meter, record) share the batch's meters and timings.
pub(super) fn write_batches(
    cfg: &StellarConfig,
    label: &str,
    w: Writer<'_>,
    plan: Plan,
    rxs: &[Receiver<Result<Chunk, DriverError>>],
    observer: &mut dyn Observer,
    records: &mut Vec<BatchRecord>,
) -> Result<Option<String>, DriverError> {
    let total_batches = cfg.batches();
    let Writer {
        gen_,
        stores,
        devices,
        counters,
        hists,
    } = w;
    let workers = rxs.len() as u64;
    let names: Vec<String> = STORES.iter().map(|s| s.to_string()).collect();
    let mut meter = SegmentMeter::new(&names, &stores, &devices)?;
    let mut k = 0u64;
    for b in records.len() as u64..u64::from(total_batches) {
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
            if u64::from(chunk.batch) != b {
                return Err(DriverError::Generator(format!(
                    "chunk of batch {} arrived for batch {}",
                    chunk.batch + 1,
                    b + 1
                )));
            }
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

        let mut rec = BatchRecord {
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
            memory: crate::segment::memory_now(),
            stores: rec_stores,
            checkpoint_secs: None,
            lookups: None,
        };
        after_batch(cfg, (gen_, stores, devices), &mut rec)?;
        observer.batch_done(&rec, total_batches);
        records.push(rec);
        if let Some(max) = cfg.max_batch_secs
            && total_secs > max
            && b + 1 < u64::from(total_batches)
        {
            return Ok(Some(format!(
                "batch {} of {total_batches} took {total_secs:.1} s, over --max-batch-secs {max}: ingestion stopped there ({} of {} ledgers)",
                b + 1,
                (b + 1) * plan.batch,
                plan.ledgers
            )));
        }
    }
    Ok(None)
}

/// What follows a batch outside its timing: lookups timed where the config
/// asks, then a checkpointed run's sync, which comes before the batch is
/// recorded, so a recorded batch is one the stores hold on disk.
fn after_batch(
    cfg: &StellarConfig,
    (gen_, stores, devices): (&StellarGen, Stores<'_>, Devices<'_>),
    rec: &mut BatchRecord,
) -> Result<(), DriverError> {
    let checkable = !stores.iter().any(|s| s.capabilities().discards_writes);
    if checkable && cfg.lookups_at.contains(&rec.batch) {
        let ledgers = rec.first_ledger + rec.ledgers - cfg.profile.first_ledger;
        rec.lookups = Some(Box::new(timed_lookups(
            gen_,
            (stores, devices),
            (rec.batch, ledgers),
            cfg.verify_txs,
        )?));
    }
    if cfg.checkpoint {
        let t = Instant::now();
        for (i, d) in devices.iter().enumerate() {
            if let Some(d) = d {
                d.sync().map_err(|source| DriverError::Meter {
                    store: STORES[i].to_string(),
                    source,
                })?;
            }
        }
        // The filesystems under the images (and the run directory) too:
        // after a reboot the batch is still there.
        // SAFETY: sync has no preconditions.
        unsafe { libc::sync() };
        rec.checkpoint_secs = Some(t.elapsed().as_secs_f64());
    }
    Ok(())
}

pub(super) fn summarize(
    batches: &[BatchRecord],
    hists: &[OpHists; 3],
    wall: f64,
) -> Option<Summary> {
    let names: Vec<String> = STORES.iter().map(|s| s.to_string()).collect();
    let segments: Vec<&[StoreBatch]> = batches.iter().map(|b| b.stores.as_slice()).collect();
    let process: Vec<Option<u64>> = batches.iter().map(|b| b.process_write_bytes).collect();
    let (stores, total) = summarize_stores(&names, &segments, &process, hists, Live::Written)?;
    let ledgers: u64 = batches.iter().map(|b| u64::from(b.ledgers)).sum();
    let batch_secs: f64 = batches.iter().map(|b| b.total_secs).sum();
    let wait: f64 = batches.iter().map(|b| b.writer_wait_secs).sum();
    let engine = (batch_secs - wait).max(0.0);
    Some(Summary {
        batch_secs: Some(batch_secs),
        engine_secs: Some(engine),
        engine_ledgers_per_sec: (engine > 0.0).then(|| ledgers as f64 / engine),
        writer_wait_secs: Some(wait),
        bound: Some(crate::results::Bound::of(wait, batch_secs)),
        total: Some(total),
        batches: batches.len() as u32,
        ledgers,
        txs: batches.iter().map(|b| b.txs).sum(),
        wall_secs: wall,
        ledgers_per_sec: ledgers as f64 / wall.max(1e-9),
        stores,
    })
}

//! Lookups: the spot check after ingestion and the streaming phase with
//! concurrent one-step and two-step lookups.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use ledgerbench_core::{Batch, EngineStats, counter_delta};
use ledgerbench_meter::blockdev::BlockStat;
use ledgerbench_rng::{Rng, stream};
use ledgerbench_workloads::stellar::{Ledger, StellarGen, find_tx};

use super::*;
use crate::DriverError;
use crate::results::{Latency, LookupReads, LookupsAt, StoreReads, StreamingResult};
use crate::segment::{Counters, histogram, record, sample_every_second};

/// Reads transactions back by hash, both ways. A lookup fetches and
/// decompresses, as an application would; checking the result against the
/// regenerated record is a separate step, so it stays out of the timings.
pub(super) struct Lookup<'a> {
    pub(super) gen_: &'a StellarGen,
    pub(super) stores: Stores<'a>,
    pub(super) buf: Vec<u8>,
    pub(super) ledger: Vec<u8>,
    /// The record the last lookup found.
    pub(super) value: Vec<u8>,
    pub(super) expect: Vec<u8>,
    /// GETs made on each store, in [`STORES`] order.
    pub(super) gets: [u64; 3],
}

impl<'a> Lookup<'a> {
    pub(super) fn new(gen_: &'a StellarGen, stores: Stores<'a>) -> Self {
        Self {
            gen_,
            stores,
            buf: Vec::new(),
            ledger: Vec::new(),
            value: Vec::new(),
            expect: Vec::new(),
            gets: [0; 3],
        }
    }

    pub(super) fn pick(&self, r: &mut Rng, first: u32, last: u32) -> Option<(u32, u32)> {
        for _ in 0..16 {
            let seq = first + r.below(u64::from(last - first + 1)) as u32;
            let n = self.gen_.tx_count(seq);
            if n > 0 {
                return Some((seq, r.below(u64::from(n)) as u32));
            }
        }
        None
    }

    /// GET of `key` from store `i` into `buf`, counted.
    fn get(&mut self, i: usize, key: &[u8]) -> Result<bool, DriverError> {
        self.gets[i] += 1;
        self.stores[i]
            .get_into(key, &mut self.buf)
            .map_err(store_err(i))
    }

    /// txdata[hash] -> record into `value`; false when absent or undecodable.
    pub(super) fn one_step(&mut self, seq: u32, i: u32) -> Result<bool, DriverError> {
        let h = self.gen_.tx_hash(seq, i);
        if !self.get(1, &h)? {
            return Ok(false);
        }
        self.value.clear();
        Ok(zstd::stream::copy_decode(&self.buf[..], &mut self.value).is_ok())
    }

    /// txindex[hash] -> seq, ledgers[seq] -> ledger, then the transaction's
    /// record in it into `value`; false when any step finds nothing.
    pub(super) fn two_step(&mut self, seq: u32, i: u32) -> Result<bool, DriverError> {
        let h = self.gen_.tx_hash(seq, i);
        if !self.get(2, &h)? {
            return Ok(false);
        }
        let Ok(found) = <[u8; 4]>::try_from(&self.buf[..]) else {
            return Ok(false);
        };
        if !self.get(0, &found)? {
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
    pub(super) fn found_expected(&mut self, seq: u32, i: u32) -> bool {
        self.expect.clear();
        self.gen_.tx_record(seq, i, &mut self.expect);
        self.value == self.expect
    }
}

/// Runs [`verify`] and measures what its lookups cost each store: device
/// read requests and bytes, block cache misses, and whether background
/// compaction read meanwhile.
pub(super) fn verify_measured(
    gen_: &StellarGen,
    stores: Stores<'_>,
    devices: Devices<'_>,
    ledgers: u32,
    n: u32,
) -> Result<LookupReads, DriverError> {
    measured(
        gen_,
        (stores, devices),
        (ledgers, n),
        &mut Checked::default(),
    )
}

/// Lookups timed after batch `batch` (with `ledgers` ingested): `n` random
/// transactions read both ways, each checked, with what they cost.
pub(super) fn timed_lookups(
    gen_: &StellarGen,
    (stores, devices): (Stores<'_>, Devices<'_>),
    (batch, ledgers): (u32, u32),
    n: u32,
) -> Result<LookupsAt, DriverError> {
    let mut c = Checked {
        stream: u64::from(batch),
        timed: Some((histogram(), histogram())),
    };
    let reads = measured(gen_, (stores, devices), (ledgers, n), &mut c)?;
    let (one, two) = c.timed.unwrap_or_else(|| (histogram(), histogram()));
    Ok(LookupsAt {
        batch,
        one_step: Latency::from_histogram(&one),
        two_step: Latency::from_histogram(&two),
        reads,
    })
}

/// How [`verify`] draws and times its lookups.
#[derive(Default)]
pub(super) struct Checked {
    /// The random stream of the transactions picked (0 after ingestion,
    /// the batch's number for lookups during it).
    stream: u64,
    /// One-step and two-step latencies, when timed.
    timed: Option<(Histogram<u64>, Histogram<u64>)>,
}

fn measured(
    gen_: &StellarGen,
    (stores, devices): (Stores<'_>, Devices<'_>),
    (ledgers, n): (u32, u32),
    c: &mut Checked,
) -> Result<LookupReads, DriverError> {
    let before = read_counters(stores, devices);
    let (txs, gets) = verify(gen_, stores, (ledgers, n), c)?;
    let after = read_counters(stores, devices);
    let stores = (0..3)
        .map(|i| {
            let (b, a) = (&before[i], &after[i]);
            let dev = a.0.zip(b.0).map(|(a, b)| a.since(&b));
            let engine = |f: fn(&EngineStats) -> Option<u64>| {
                let (a, b) = (a.1.as_ref()?, b.1.as_ref()?);
                counter_delta(f(a), f(b))
            };
            StoreReads {
                store: STORES[i].to_string(),
                gets: gets[i],
                device_reads: dev.map(|d| d.read_ios),
                device_read_bytes: dev.map(|d| d.read_bytes()),
                block_cache_misses: engine(|s| s.block_cache_misses),
                compaction_read_bytes: engine(|s| s.compaction_read_bytes),
            }
        })
        .collect();
    Ok(LookupReads { txs, stores })
}

/// Each store's device counters and engine counters now; absent where
/// they cannot be read.
fn read_counters(
    stores: Stores<'_>,
    devices: Devices<'_>,
) -> [(Option<BlockStat>, Option<EngineStats>); 3] {
    std::array::from_fn(|i| {
        (
            devices[i].and_then(|d| d.stat().ok()),
            stores[i].stats().ok(),
        )
    })
}

/// Looks up `n` random transactions both ways among the first `ledgers`
/// and checks each against the generator (timing each lookup when `c`
/// asks); returns the transactions looked up and the GETs per store.
pub(super) fn verify(
    gen_: &StellarGen,
    stores: Stores<'_>,
    (ledgers, n): (u32, u32),
    c: &mut Checked,
) -> Result<(u64, [u64; 3]), DriverError> {
    let first = gen_.profile().first_ledger;
    let last = first + ledgers - 1;
    let mut l = Lookup::new(gen_, stores);
    let mut r = Rng::new(stream(gen_.seed(), 0x7665_7269_6679, c.stream));
    let mut txs = 0;
    for _ in 0..n {
        let Some((seq, i)) = l.pick(&mut r, first, last) else {
            continue;
        };
        txs += 1;
        let t = Instant::now();
        let found = l.one_step(seq, i)?;
        if let Some((one, _)) = &mut c.timed {
            record(one, t.elapsed());
        }
        let one = found && l.found_expected(seq, i);
        let t = Instant::now();
        let found = one && l.two_step(seq, i)?;
        if let Some((_, two)) = c.timed.as_mut().filter(|_| one) {
            record(two, t.elapsed());
        }
        if !(found && l.found_expected(seq, i)) {
            return Err(DriverError::Verify(format!(
                "transaction {i} of ledger {seq} did not read back as written"
            )));
        }
    }
    // A hash that was never written must read as absent.
    if l.get(1, &[0xa5; 32])? {
        return Err(DriverError::Verify(
            "a never-written hash was found in txdata".into(),
        ));
    }
    Ok((txs, l.gets))
}

/// The lookup phase: closed loop, open loop at `lookup_rate`, or one open
/// loop phase per rate of `lookup_rates` (each appending `ledgers` more).
pub(super) fn streaming(
    cfg: &StellarConfig,
    gen_: &StellarGen,
    stores: Stores<'_>,
    ingested: u32,
    checkable: bool,
) -> Result<StreamingResult, DriverError> {
    let s = &cfg.streaming;
    if s.lookup_rates.is_empty() {
        return stream_phase(cfg, gen_, stores, ingested, checkable, s.lookup_rate);
    }
    let mut sweep = Vec::new();
    let mut out: Option<StreamingResult> = None;
    let mut at = ingested;
    for &rate in &s.lookup_rates {
        let r = stream_phase(cfg, gen_, stores, at, checkable, Some(rate))?;
        at += s.ledgers as u32;
        sweep.extend(r.open_loop.clone());
        out = Some(match out {
            None => r,
            Some(mut o) => {
                o.ledgers += r.ledgers;
                o.wall_secs += r.wall_secs;
                o.samples.extend(r.samples);
                o.ledger_commit = r.ledger_commit;
                o.mismatches = o.mismatches.zip(r.mismatches).map(|(a, b)| a + b);
                o
            }
        });
    }
    let mut out = out.expect("at least one rate");
    out.open_loop = None;
    out.max_sustained_rate_per_sec = sweep
        .iter()
        .filter(|p| p.sustained == Some(true))
        .map(|p| p.rate_per_sec)
        .reduce(f64::max);
    out.rate_sweep = sweep;
    Ok(out)
}

/// One closed-loop lookup worker: one-step then two-step lookups of random
/// transactions among ledgers `first..=last` until `done`; returns both
/// histograms and the lookups that found the wrong thing.
fn closed_loop(
    gen_: &StellarGen,
    stores: Stores<'_>,
    w: usize,
    (first, last): (u32, &AtomicU32),
    done: &AtomicBool,
    counters: &Counters,
) -> Result<(Histogram<u64>, Histogram<u64>, u64), DriverError> {
    let mut l = Lookup::new(gen_, stores);
    let mut r = Rng::new(stream(gen_.seed(), 0x6c6f_6f6b, w as u64));
    let (mut one, mut two, mut bad) = (histogram(), histogram(), 0u64);
    while !done.load(Ordering::Relaxed) {
        let Some((seq, i)) = l.pick(&mut r, first, last.load(Ordering::Acquire)) else {
            continue;
        };
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
}

/// The writer of the streaming phase: the ledgers after the `ingested`
/// ones, one commit per ledger at the close interval, publishing each as
/// the newest (`last`) once written; returns the commit latencies.
fn stream_ledgers(
    cfg: &StellarConfig,
    gen_: &StellarGen,
    stores: Stores<'_>,
    (first, ingested): (u32, u32),
    last: &AtomicU32,
    counters: &Counters,
) -> Result<Histogram<u64>, DriverError> {
    let s = &cfg.streaming;
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
}

/// One streaming phase: `s.ledgers` ledgers appended after `ingested`,
/// lookups closed loop, or open loop at `rate`.
///
/// Long because one thread scope: the writer, lookup workers and sampler borrow the scope's flags and counters.
fn stream_phase(
    cfg: &StellarConfig,
    gen_: &StellarGen,
    stores: Stores<'_>,
    ingested: u32,
    checkable: bool,
    rate: Option<f64>,
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
        let _stops = crate::segment::SetOnDrop(&done);
        let open = rate.map(|rate| {
            let (last, done) = (&last, &done);
            scope.spawn(move || {
                let o = super::openloop::OpenLoop {
                    rate,
                    arrival: s.arrival,
                    workers: s.lookup_workers,
                    first,
                    checkable,
                    p99_bound_us: Some(s.p99_bound_us),
                };
                super::openloop::run(gen_, stores, o, last, done)
            })
        });
        let mut workers = Vec::new();
        let closed = if open.is_some() { 0 } else { s.lookup_workers };
        for w in 0..closed {
            let (last, done, counters) = (&last, &done, &counters);
            workers.push(
                scope.spawn(move || closed_loop(gen_, stores, w, (first, last), done, counters)),
            );
        }
        let sampler = scope.spawn(|| sample_every_second(&stores, &counters, &done, started));
        let writer = stream_ledgers(cfg, gen_, stores, (first, ingested), &last, &counters);
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
        let open_loop = match open {
            Some(h) => Some(
                h.join()
                    .map_err(|_| DriverError::Generator("open-loop thread panicked".into()))??,
            ),
            None => None,
        };
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
            mismatches: match &open_loop {
                Some(o) => o.mismatches,
                None => checkable.then_some(bad),
            },
            samples,
            open_loop,
            rate_sweep: Vec::new(),
            max_sustained_rate_per_sec: None,
        })
    })
}

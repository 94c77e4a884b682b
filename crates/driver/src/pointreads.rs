//! Point reads on a data set of random 32-byte keys: device IO per GET before
//! and after a full compaction, the shape of the bench_kvdb study (32-byte
//! hashes, 110-byte values).

use std::time::Instant;

use hdrhistogram::Histogram;
use ledgerbench_core::{Batch, KvStore};
use ledgerbench_meter::blockdev::BlockStat;
use ledgerbench_meter::proc_io::ProcIo;
use ledgerbench_meter::rusage::Usage;
use ledgerbench_rng::{Rng, stream};

use crate::DriverError;
use crate::observe::Observer;
use crate::results::Latency;

pub use ledgerbench_results::points::{
    CacheState, GetCost, Measurement, PointReadConfig, PointResults, PointRun,
};

const TAG_MISS: u64 = 0x706d;
const TAG_PICK: u64 = 0x7070;
const TAG_THREAD: u64 = 0x7074;

/// Loads every key, telling `observer` after each batch; returns seconds taken.
pub fn load(
    cfg: &PointReadConfig,
    store: &dyn KvStore,
    observer: &mut dyn Observer,
) -> Result<f64, DriverError> {
    cfg.validate().map_err(|e| DriverError::Config(e.0))?;
    let t = Instant::now();
    let mut batch = Batch::with_capacity(
        cfg.load_batch as usize,
        (cfg.load_batch as usize) * (cfg.key_bytes + cfg.value_bytes),
    );
    let (mut k, mut v) = (Vec::new(), Vec::new());
    for i in 0..cfg.keys {
        cfg.key(i, &mut k);
        cfg.value(i, &mut v);
        batch.put(&k, &v);
        if batch.len() as u64 == cfg.load_batch || i + 1 == cfg.keys {
            store.write(&batch).map_err(err)?;
            batch.clear();
            observer.advanced(i + 1, cfg.keys);
        }
    }
    store.flush().map_err(err)?;
    Ok(t.elapsed().as_secs_f64())
}

/// Reads random existing and missing keys and measures what they cost.
/// `device` returns the private device's counters, when there is one;
/// `observer` hears of every 4,096 reads (outside the timed GETs).
/// `threads` client threads read the existing keys at once, each its share
/// from its own seeded stream (thread 0's is the one-thread stream); the
/// missing keys are read by one thread after them.
pub fn measure(
    cfg: &PointReadConfig,
    store: &dyn KvStore,
    device: &dyn Fn() -> Option<BlockStat>,
    (round, threads): (u64, u64),
    observer: &mut dyn Observer,
) -> Result<GetCost, DriverError> {
    let threads = threads.max(1);
    let engine0 = store.stats().map_err(err)?.block_cache_misses;
    let (dev0, io0, ru0) = (device(), ProcIo::now().ok(), Usage::now());
    let started = Instant::now();
    let share = |t: u64| cfg.reads / threads + u64::from(t < cfg.reads % threads);
    let (hist, mut mismatches) = std::thread::scope(|scope| {
        let others: Vec<_> = (1..threads)
            .map(|t| scope.spawn(move || read_share(cfg, store, (round, t), share(t), &mut ())))
            .collect();
        let mut mine = read_share(cfg, store, (round, 0), share(0), observer)?;
        for h in others {
            let (hist, bad) = h
                .join()
                .map_err(|_| DriverError::Generator("a GET thread panicked".into()))??;
            // Same bounds on both sides, so adding cannot fail.
            let _ = mine.0.add(&hist);
            mine.1 += bad;
        }
        Ok::<_, DriverError>(mine)
    })?;
    let wall = started.elapsed().as_secs_f64();
    let (dev1, io1, ru1) = (device(), ProcIo::now().ok(), Usage::now());
    let engine1 = store.stats().map_err(err)?.block_cache_misses;
    let n = cfg.reads as f64;
    let dev = dev0.zip(dev1).map(|(a, b)| b.since(&a));
    let mut miss_dev = None;
    if cfg.missing_reads > 0 {
        let (mut k, mut got) = (Vec::new(), Vec::new());
        let d0 = device();
        for j in 0..cfg.missing_reads {
            k.clear();
            Rng::new(stream(cfg.seed ^ TAG_MISS, round, j)).fill(&mut k, cfg.key_bytes);
            mismatches += u64::from(store.get_into(&k, &mut got).map_err(err)?);
        }
        miss_dev = d0
            .zip(device())
            .map(|(a, b)| b.since(&a).read_ios as f64 / cfg.missing_reads as f64);
    }
    Ok(GetCost {
        reads: cfg.reads,
        device_reads_per_get: dev.map(|d| d.read_ios as f64 / n),
        device_bytes_per_get: dev.map(|d| d.read_bytes() as f64 / n),
        process_bytes_per_get: io0.zip(io1).map(|(a, b)| b.since(&a).read_bytes as f64 / n),
        major_faults_per_get: ru1.since(&ru0).major_faults as f64 / n,
        engine_block_misses_per_get: engine0
            .zip(engine1)
            .map(|(a, b)| b.saturating_sub(a) as f64 / n),
        latency: Latency::from_histogram(&hist),
        missing_reads: cfg.missing_reads,
        device_reads_per_missing_get: miss_dev,
        mismatches,
        usage: ru1.since(&ru0),
        threads: Some(threads),
        gets_per_sec: (wall > 0.0).then(|| n / wall),
        device_reads_per_sec: dev.filter(|_| wall > 0.0).map(|d| d.read_ios as f64 / wall),
    })
}

/// The store's error as the driver reports it.
fn err(source: ledgerbench_core::Error) -> DriverError {
    DriverError::Store {
        store: "points".into(),
        source,
    }
}

/// Thread `t`'s `reads` GETs of existing keys, checked against the
/// regenerated values: their latency histogram and mismatches.
fn read_share(
    cfg: &PointReadConfig,
    store: &dyn KvStore,
    (round, t): (u64, u64),
    reads: u64,
    observer: &mut dyn Observer,
) -> Result<(Histogram<u64>, u64), DriverError> {
    // Thread 0 keeps the stream one thread always read.
    let seed = match t {
        0 => stream(cfg.seed, TAG_PICK, round),
        t => stream(stream(cfg.seed, TAG_PICK, round), TAG_THREAD, t),
    };
    let mut r = Rng::new(seed);
    let mut hist = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3)
        .expect("constant bounds are valid");
    let (mut k, mut want, mut got) = (Vec::new(), Vec::new(), Vec::new());
    let mut mismatches = 0u64;
    for n in 0..reads {
        if n % 4096 == 0 {
            observer.advanced(n, reads);
        }
        let i = r.below(cfg.keys);
        cfg.key(i, &mut k);
        let t = Instant::now();
        let found = store.get_into(&k, &mut got).map_err(err)?;
        let _ = hist.record(t.elapsed().as_nanos() as u64);
        cfg.value(i, &mut want);
        mismatches += u64::from(!found || got != want);
    }
    Ok((hist, mismatches))
}

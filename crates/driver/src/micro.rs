//! db_bench's staples with db_bench's meanings: keys are the key number
//! big-endian padded with `0`s to `key_size`, writes go one batch of
//! `batch_size` a commit, random keys are uniform over `0..num` (repeats
//! included, as db_bench draws them), reads count what they found.
//!
//! An operation's latency is db_bench's too: the time from the end of the
//! operation before to its own end, one clock read an operation, so it
//! includes making its key (and a write's values), tens of nanoseconds. A
//! second clock read before each call would cost about as much again, on
//! every operation of every thread, and lower the harness's ceiling.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use hdrhistogram::Histogram;
use ledgerbench_core::{Batch, KvStore};
use ledgerbench_rng::{Rng, stream};

use crate::DriverError;
use crate::results::Latency;

pub use ledgerbench_results::micro::{BENCHMARKS, MicroBench, MicroConfig, MicroResults, MicroRun};

const TAG_VALUE: u64 = 0x6d76;
const TAG_PICK: u64 = 0x6d70;

/// Whether benchmark `name` starts from an empty store (db_bench's fresh DB).
pub fn fresh(name: &str) -> bool {
    matches!(name, "fillseq" | "fillrandom")
}

/// Key number `k` as db_bench writes it.
pub fn key(cfg: &MicroConfig, k: u64, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&k.to_be_bytes());
    out.resize(cfg.key_size, b'0');
}

fn err(source: ledgerbench_core::Error) -> DriverError {
    DriverError::Store {
        store: "micro".into(),
        source,
    }
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("constant bounds are valid")
}

/// Records the time since `last` (an operation's, as db_bench times it)
/// and returns now, the next operation's start.
fn lap(hist: &mut Histogram<u64>, last: Instant) -> Instant {
    let now = Instant::now();
    let _ = hist.record(now.duration_since(last).as_nanos().max(1) as u64);
    // A benchmark reports no events until it ends: the watchdog hears
    // from it every 65,536 operations instead.
    if hist.len() & 0xffff == 0 {
        crate::heartbeat::beat(None);
    }
    now
}

/// What a thread did: operations, seconds, found, its latencies.
struct Done {
    ops: u64,
    secs: f64,
    found: u64,
    hist: Histogram<u64>,
}

/// Runs benchmark `name` (the `index`th of the run) on `store`.
pub fn run(
    cfg: &MicroConfig,
    name: &str,
    index: u64,
    store: &dyn KvStore,
) -> Result<MicroBench, DriverError> {
    let seed = stream(cfg.seed, TAG_PICK, index);
    let started = Instant::now();
    let mut background = None;
    let (done, threads, reads) = match name {
        "fillseq" => (vec![write(cfg, store, seed, Pick::Seq, false)?], 1, false),
        "fillrandom" | "overwrite" | "deleterandom" => {
            let delete = name == "deleterandom";
            let done = on_threads(cfg.threads, |t| {
                write(cfg, store, thread_seed(seed, t), Pick::Random, delete)
            })?;
            (done, cfg.threads, false)
        }
        "readseq" => (vec![read_seq(cfg, store)?], 1, true),
        "readrandom" | "seekrandom" => {
            let seek = name == "seekrandom";
            let done = on_threads(cfg.threads, |t| {
                read_random(cfg, store, stream(seed, 1, t), seek)
            })?;
            (done, cfg.threads, true)
        }
        "readwhilewriting" => {
            let (done, writes) = read_while_writing(cfg, store, seed)?;
            background = Some(writes);
            (done, cfg.threads, true)
        }
        other => {
            return Err(DriverError::Config(format!(
                "unknown benchmark `{other}`; accepted: {}",
                BENCHMARKS.join(",")
            )));
        }
    };
    let secs = started.elapsed().as_secs_f64();
    let ops: u64 = done.iter().map(|d| d.ops).sum();
    let found: u64 = done.iter().map(|d| d.found).sum();
    let thread_secs: f64 = done.iter().map(|d| d.secs).sum();
    let mut hist = histogram();
    for d in &done {
        let _ = hist.add(&d.hist);
    }
    let moved = if reads { found } else { ops } * (cfg.key_size + cfg.value_size) as u64;
    let deletes = name == "deleterandom";
    Ok(MicroBench {
        name: name.into(),
        ops,
        threads,
        secs,
        ops_per_sec: if secs > 0.0 { ops as f64 / secs } else { 0.0 },
        micros_per_op: if ops > 0 {
            thread_secs * 1e6 / ops as f64
        } else {
            0.0
        },
        mb_per_sec: (!deletes && secs > 0.0 && name != "seekrandom")
            .then(|| moved as f64 / secs / (1 << 20) as f64),
        found: reads.then_some(found),
        background_writes: background,
        latency: Latency::from_histogram(&hist),
        engine: None,
    })
}

/// readwhilewriting: `cfg.threads` readers beside one writer that writes
/// until they end; what the readers did, and the writes it made.
fn read_while_writing(
    cfg: &MicroConfig,
    store: &dyn KvStore,
    seed: u64,
) -> Result<(Vec<Done>, u64), DriverError> {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let writer = client(s, cfg.threads, || {
            background_writer(cfg, store, seed, &stop)
        })?;
        // The writer stops whatever became of the readers: a reader that
        // did not start must not leave it writing forever.
        let readers = (0..cfg.threads)
            .map(|t| {
                client(s, t, move || {
                    read_random(cfg, store, stream(seed, 1, t), false)
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .and_then(|hs| hs.into_iter().map(join).collect::<Result<Vec<_>, _>>());
        stop.store(true, Ordering::Relaxed);
        let writes = join(writer)?;
        Ok((readers?, writes))
    })
}

/// `f(t)` on threads `0..n` at once; what each did, in order.
fn on_threads<F>(n: u64, f: F) -> Result<Vec<Done>, DriverError>
where
    F: Fn(u64) -> Result<Done, DriverError> + Sync,
{
    std::thread::scope(|s| {
        let f = &f;
        let hs = (0..n)
            .map(|t| client(s, t, move || f(t)))
            .collect::<Result<Vec<_>, _>>()?;
        hs.into_iter().map(join).collect()
    })
}

/// Starts benchmark thread `t`, named `lb-client-T`: a profile or
/// `scripts/schedstat.py` then tells the threads that call the engine from
/// the harness's own (its main thread, the supervisor).
fn client<'s, T: Send + 's>(
    s: &'s std::thread::Scope<'s, '_>,
    t: u64,
    f: impl FnOnce() -> T + Send + 's,
) -> Result<std::thread::ScopedJoinHandle<'s, T>, DriverError> {
    std::thread::Builder::new()
        .name(format!("lb-client-{t}"))
        .spawn_scoped(s, f)
        .map_err(|e| DriverError::Generator(format!("benchmark thread {t} did not start: {e}")))
}

/// Writer `t`'s seed: the benchmark's own for the first, so a one-thread
/// run writes what it wrote before writes took threads.
fn thread_seed(seed: u64, t: u64) -> u64 {
    if t == 0 { seed } else { stream(seed, 3, t) }
}

fn join<T>(h: std::thread::ScopedJoinHandle<'_, Result<T, DriverError>>) -> Result<T, DriverError> {
    h.join()
        .map_err(|_| DriverError::Generator("a benchmark thread panicked".into()))?
}

enum Pick {
    Seq,
    Random,
}

/// `num` puts (or deletes) in commits of `batch_size` (one writer's share:
/// db_bench's writers write `num` each).
fn write(
    cfg: &MicroConfig,
    store: &dyn KvStore,
    seed: u64,
    pick: Pick,
    delete: bool,
) -> Result<Done, DriverError> {
    let mut r = Rng::new(seed);
    let mut hist = histogram();
    let mut batch = Batch::new();
    let (mut k, mut v) = (Vec::new(), Vec::new());
    let t0 = Instant::now();
    let mut last = t0;
    let mut i = 0;
    while i < cfg.num {
        batch.clear();
        let n = cfg.batch_size.min(cfg.num - i);
        for j in i..i + n {
            let kn = match pick {
                Pick::Seq => j,
                Pick::Random => r.below(cfg.num),
            };
            key(cfg, kn, &mut k);
            if delete {
                batch.delete(&k);
            } else {
                v.clear();
                Rng::new(stream(seed ^ TAG_VALUE, j, 0)).fill(&mut v, cfg.value_size);
                batch.put(&k, &v);
            }
        }
        store.write(&batch).map_err(err)?;
        last = lap(&mut hist, last);
        i += n;
    }
    Ok(Done {
        ops: cfg.num,
        secs: last.duration_since(t0).as_secs_f64(),
        found: 0,
        hist,
    })
}

/// `reads` GETs (or seeks to the first key at or after) of random keys.
/// Never inlined: `scripts/dbbench-instructions.sh` (`LOOP=readrandom`)
/// counts a GET's instructions by this function's name.
#[inline(never)]
fn read_random(
    cfg: &MicroConfig,
    store: &dyn KvStore,
    seed: u64,
    seek: bool,
) -> Result<Done, DriverError> {
    let mut r = Rng::new(seed);
    let mut hist = histogram();
    let (mut k, mut got) = (Vec::new(), Vec::new());
    let mut found = 0;
    let t0 = Instant::now();
    let mut last = t0;
    for _ in 0..cfg.reads {
        key(cfg, r.below(cfg.num), &mut k);
        let hit = if seek {
            let mut any = false;
            store
                .scan(&k, &mut |_, _| {
                    any = true;
                    false
                })
                .map_err(err)?;
            any
        } else {
            store.get_into(&k, &mut got).map_err(err)?
        };
        last = lap(&mut hist, last);
        found += u64::from(hit);
    }
    Ok(Done {
        ops: cfg.reads,
        secs: last.duration_since(t0).as_secs_f64(),
        found,
        hist,
    })
}

/// Every entry in key order, at most `reads` (db_bench's readseq).
fn read_seq(cfg: &MicroConfig, store: &dyn KvStore) -> Result<Done, DriverError> {
    let mut hist = histogram();
    let mut n = 0u64;
    let t0 = Instant::now();
    let mut last = t0;
    store
        .scan(&[], &mut |_, _| {
            last = lap(&mut hist, last);
            n += 1;
            n < cfg.reads
        })
        .map_err(err)?;
    Ok(Done {
        ops: n,
        secs: t0.elapsed().as_secs_f64(),
        found: n,
        hist,
    })
}

/// Random puts, one a commit, until `stop` and at least one, so the
/// readers always read beside a write (readwhilewriting's writer); how many.
fn background_writer(
    cfg: &MicroConfig,
    store: &dyn KvStore,
    seed: u64,
    stop: &AtomicBool,
) -> Result<u64, DriverError> {
    let mut r = Rng::new(stream(seed, 2, 0));
    let mut batch = Batch::new();
    let (mut k, mut v) = (Vec::new(), Vec::new());
    let mut j = 0u64;
    loop {
        batch.clear();
        key(cfg, r.below(cfg.num), &mut k);
        v.clear();
        Rng::new(stream(seed ^ TAG_VALUE, j, 1)).fill(&mut v, cfg.value_size);
        batch.put(&k, &v);
        store.write(&batch).map_err(err)?;
        j += 1;
        if stop.load(Ordering::Relaxed) {
            return Ok(j);
        }
    }
}

#[cfg(test)]
mod tests;

//! Several client threads running operation streams on the same stores at
//! once: each thread applies its own stream, every mark is a barrier where
//! the calling thread closes the segment's meters for all of them, and
//! latencies are kept per thread and merged.
//!
//! Plain scoped threads, not an async runtime: every operation is a
//! blocking engine call, and a thread per client is what a node's RPC
//! workers and ingesters are.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use ledgerbench_core::KvStore;
use ledgerbench_meter::loopdev::Device;
use ledgerbench_meter::rusage::Usage;
use ledgerbench_rng::{Rng, stream};

use super::apply::{Applier, CLOCK_MARK, Counts};
use super::{OpsOutcome, Pace, Pacing, finish};
use crate::DriverError;
use crate::observe::Observer;
use crate::results::{Latency, SegmentRecord, StoreBatch, ThreadSummary};
use crate::schedule::{Arrival, Schedule};
use crate::segment::{Counters, OpHists, SegmentMeter, sample_every_second};

use ledgerbench_trace::Op;
pub use ledgerbench_trace::OpSource;

/// A thread's share of a segment, handed over at a mark or at its end.
struct Part {
    thread: usize,
    /// The mark's label; `None` at the end of the thread's stream.
    label: Option<String>,
    recs: Vec<StoreBatch>,
    ops: u64,
    gets: u64,
    source_secs: f64,
    progress: Option<(u64, u64)>,
}

/// What a client thread ends with: its histograms per store and counts.
type ClientOut = Result<(Vec<OpHists>, Counts), DriverError>;

/// What a thread sends the coordinator.
enum Msg {
    At(Part),
    Done(usize, ClientOut),
}

/// The stores a run writes: the workload's names for them, the open stores
/// and their private devices.
type Targets<'a> = (
    &'a [String],
    &'a [&'a dyn KvStore],
    &'a [Option<&'a Device>],
);

/// Runs one stream per client thread against the same stores at once.
/// Marks are barriers: each thread waits at a mark until every thread still
/// running has reached it, and the segment (metered once, for all) takes
/// the label of the lowest-numbered thread's mark; a thread whose stream
/// has ended no longer takes part. A paced run (`pace`) gives each thread
/// `1/threads` of the rate, their schedules a gap apart, and times every
/// get from when it was due. Engines whose writers take turns
/// ([`ledgerbench_core::WriterModel::serialises_writes`]) get the turn from
/// the harness, which times the wait (`commit_wait`) apart from the commit.
///
/// Long because one thread scope: the clients, the sampler and the coordinator borrow the stores, meter, turns and counters it owns.
pub fn replay_threads(
    mut sources: Vec<Box<dyn OpSource + Send>>,
    (stores, devices): (&[&dyn KvStore], &[Option<&Device>]),
    observer: &mut dyn Observer,
    pacing: Pacing,
) -> OpsOutcome {
    let pace = pacing.rate;
    let mut out = OpsOutcome::default();
    if pacing.window.is_some() {
        // Every thread would have to agree on which marks end an interval.
        out.error = Some(DriverError::Config(
            "a soak runs one client thread for now: give --threads 1".into(),
        ));
        return out;
    }
    let Some(first) = sources.first() else {
        out.error = Some(DriverError::Config("no client threads".into()));
        return out;
    };
    let names = first.header().stores.clone();
    if names.len() != stores.len() {
        out.error = Some(DriverError::Config(format!(
            "the workload has {} stores, {} were opened",
            names.len(),
            stores.len()
        )));
        return out;
    }
    let n = sources.len();
    let turns: Vec<Option<Mutex<()>>> = stores
        .iter()
        .map(|s| {
            let takes_turns = s
                .capabilities()
                .writers
                .is_some_and(|w| w.serialises_writes());
            (n > 1 && takes_turns).then(|| Mutex::new(()))
        })
        .collect();
    let started = Instant::now();
    let usage0 = Usage::now();
    let done = AtomicBool::new(false);
    let abort = AtomicBool::new(false);
    let counters = Counters::default();
    let mut hists: Vec<OpHists> = names.iter().map(|_| OpHists::default()).collect();
    let mut counts = Counts::default();
    let mut per_thread: Vec<ThreadSummary> = Vec::new();
    let result = (|| -> Result<(), DriverError> {
        let mut meter = SegmentMeter::new(&names, stores, devices)?;
        let shared = Shared {
            targets: (&names, stores, devices),
            counters: &counters,
            turns: &turns,
            abort: &abort,
            pace: pace.map(|p| (p, n)),
            clock: pacing.speed.map(|s| (Instant::now(), s)),
        };
        let (tx, rx) = mpsc::channel::<Msg>();
        let (joined, samples) = std::thread::scope(|scope| {
            let _stops = crate::segment::SetOnDrop(&done);
            let sampler = scope.spawn(|| sample_every_second(stores, &counters, &done, started));
            let mut gos = Vec::new();
            for (t, src) in sources.iter_mut().enumerate() {
                let (go_tx, go_rx) = mpsc::sync_channel::<bool>(1);
                gos.push(go_tx);
                let (tx, fresh, shared) = (tx.clone(), meter.fresh(), &shared);
                scope.spawn(move || {
                    // A panic still reports, so the barrier never waits
                    // for a thread that is gone.
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        client(t, &mut **src, shared, fresh, (&tx, &go_rx))
                    }))
                    .unwrap_or_else(|_| {
                        Err(DriverError::Generator(format!(
                            "client thread {t} panicked"
                        )))
                    });
                    if r.is_err() {
                        shared.abort.store(true, Ordering::Relaxed);
                    }
                    let _ = tx.send(Msg::Done(t, r));
                });
            }
            drop(tx);
            let joined = coordinate(&rx, &gos, &mut meter, observer, &mut out.segments, &abort);
            done.store(true, Ordering::Relaxed);
            (joined, sampler.join().unwrap_or_default())
        });
        let (joined, mut error) = joined;
        out.samples = samples;
        let mut mine = Vec::new();
        for (t, r) in joined.into_iter().enumerate() {
            match r {
                Some(Ok(x)) => mine.push((t, x)),
                Some(Err(e)) => {
                    error.get_or_insert(e);
                }
                None => {
                    error.get_or_insert(DriverError::Generator(format!(
                        "client thread {t} ended without a result (it panicked)"
                    )));
                }
            }
        }
        for (t, (h, c)) in &mine {
            per_thread.push(thread_summary(*t, h, c));
            for (m, theirs) in hists.iter_mut().zip(h) {
                m.add(theirs);
            }
            counts.add(c);
        }
        error.map_or(Ok(()), Err)
    })();
    // Threaded replays are never soaks (refused above): always scanned.
    finish(
        &mut out,
        (result, true),
        (&names, stores),
        (&hists, &counts),
        (started, usage0),
    );
    if let Some(s) = &mut out.summary {
        s.threads = per_thread;
    }
    out
}

/// What every client thread shares.
struct Shared<'a> {
    targets: Targets<'a>,
    counters: &'a Counters,
    turns: &'a [Option<Mutex<()>>],
    abort: &'a AtomicBool,
    /// The run's pace and the number of threads sharing it.
    pace: Option<(Pace, usize)>,
    /// Pacing by recorded times: one start for every thread, the speed-up.
    clock: Option<(Instant, f64)>,
}

/// Thread `t`'s schedule: its share of the rate, starting `t` gaps late.
fn schedule(t: usize, (p, n): (Pace, usize)) -> Schedule {
    let gap = 1.0 / p.ops_per_sec;
    Schedule::new(
        p.ops_per_sec / n as f64,
        Arrival::Fixed,
        Rng::new(stream(0, 0x7061, t as u64)),
    )
    .offset(Duration::from_secs_f64(gap * t as f64))
}

/// One client thread: applies its stream, handing each segment's share to
/// the coordinator at a mark and waiting there for the word to go on.
fn client(
    t: usize,
    src: &mut dyn OpSource,
    shared: &Shared<'_>,
    recs: Vec<StoreBatch>,
    (tx, go): (&mpsc::Sender<Msg>, &mpsc::Receiver<bool>),
) -> ClientOut {
    let (names, stores, _) = shared.targets;
    let blank = recs.clone();
    let mut a = Applier::new(stores, names, shared.counters, recs);
    a.turns = shared.turns;
    a.clock = shared.clock;
    let mut paced = shared
        .pace
        .and_then(|(p, n)| p.after_mark.is_none().then(|| schedule(t, (p, n))));
    loop {
        // Told to stop (another thread or the meter failed): a clean end
        // with what it did, so the failure that stopped it is the one
        // reported, not this thread's stop.
        if shared.abort.load(Ordering::Relaxed) {
            return Ok((a.hists, a.counts));
        }
        let label = match a.pull(src)? {
            None => None,
            Some(op) => {
                a.due = match (&mut paced, &op) {
                    (
                        Some(s),
                        Op::Put { .. }
                        | Op::Delete { .. }
                        | Op::DeleteRange { .. }
                        | Op::Get { .. }
                        | Op::Scan { .. },
                    ) => Some(s.wait()),
                    _ => None,
                };
                match a.apply(op)? {
                    None => continue,
                    Some(label) => Some(label),
                }
            }
        };
        if a.uncommitted() {
            return Err(DriverError::Config(format!(
                "client thread {t}'s stream left writes uncommitted at `{}`",
                label.as_deref().unwrap_or("its end")
            )));
        }
        let at_end = label.is_none();
        if let Some((p, n)) = shared.pace
            && label.is_some()
            && p.after_mark == label.as_deref()
        {
            paced = Some(schedule(t, (p, n)));
        }
        let after_load = label.as_deref() == Some(CLOCK_MARK);
        let part = Part {
            thread: t,
            label,
            recs: std::mem::replace(&mut a.recs, blank.clone()),
            ops: std::mem::take(&mut a.seg_ops),
            gets: std::mem::take(&mut a.seg_gets),
            source_secs: std::mem::take(&mut a.seg_source),
            progress: src.progress(),
        };
        let held = Instant::now();
        if tx.send(Msg::At(part)).is_err() || at_end || !go.recv().unwrap_or(false) {
            return Ok((a.hists, a.counts));
        }
        // The barrier and the meter held this thread: not the engine's time.
        if let Some(s) = &mut paced {
            s.postpone(held.elapsed());
        }
        if after_load {
            a.restart_clock();
        }
    }
}

/// The barrier at every mark: waits for each running thread's share, meters
/// the segment, tells the threads to go on. Returns each thread's result
/// (`None` for a thread that never reported one) and the meter's failure.
fn coordinate(
    rx: &mpsc::Receiver<Msg>,
    gos: &[mpsc::SyncSender<bool>],
    meter: &mut SegmentMeter<'_>,
    observer: &mut dyn Observer,
    segments: &mut super::Kept,
    abort: &AtomicBool,
) -> (Vec<Option<ClientOut>>, Option<DriverError>) {
    let n = gos.len();
    let mut results: Vec<Option<_>> = (0..n).map(|_| None).collect();
    let mut running = vec![true; n];
    let mut arrived: Vec<Part> = Vec::new();
    let mut failed: Option<DriverError> = None;
    let mut seg_start = Instant::now();
    while let Ok(msg) = rx.recv() {
        match msg {
            Msg::At(part) => arrived.push(part),
            // A thread waiting at a mark cannot be done, so only its end
            // part (if any) is among those arrived.
            Msg::Done(t, r) => {
                running[t] = false;
                results[t] = Some(r);
            }
        }
        let waiting = running
            .iter()
            .enumerate()
            .filter(|(t, r)| **r && !arrived.iter().any(|p| p.thread == *t))
            .count();
        if waiting > 0 || arrived.is_empty() {
            continue;
        }
        arrived.sort_by_key(|p| p.thread);
        let ok = !abort.load(Ordering::Relaxed) && failed.is_none();
        if ok && let Err(e) = close_segment(&mut arrived, seg_start, meter, observer, segments) {
            abort.store(true, Ordering::Relaxed);
            failed = Some(e);
        }
        seg_start = Instant::now();
        let go = !abort.load(Ordering::Relaxed) && failed.is_none();
        for p in arrived.drain(..) {
            if p.label.is_some() {
                let _ = gos[p.thread].send(go);
            } else {
                running[p.thread] = false;
            }
        }
    }
    (results, failed)
}

/// Sums the threads' shares of a segment and meters it once.
fn close_segment(
    parts: &mut [Part],
    started: Instant,
    meter: &mut SegmentMeter<'_>,
    observer: &mut dyn Observer,
    segments: &mut super::Kept,
) -> Result<(), DriverError> {
    let mut recs = meter.fresh();
    let (mut ops, mut gets, mut source) = (0, 0, 0.0);
    for p in parts.iter() {
        for (m, t) in recs.iter_mut().zip(&p.recs) {
            add_work(m, t);
        }
        (ops, gets, source) = (ops + p.ops, gets + p.gets, source + p.source_secs);
    }
    let label = parts.iter().find_map(|p| p.label.clone());
    let at_end = label.is_none();
    // A trailing segment with nothing in it is not a segment.
    if at_end && ops == 0 && recs.iter().all(|r| r.flush_secs == 0.0) {
        return Ok(());
    }
    let process_write_bytes = meter.close(&mut recs)?;
    let rec = SegmentRecord {
        segment: segments.count() + 1,
        mark: label.unwrap_or_else(|| "end".into()),
        ops,
        gets,
        source_secs: Some(source),
        total_secs: started.elapsed().as_secs_f64(),
        process_write_bytes,
        memory: crate::segment::memory_now(),
        stores: recs,
    };
    observer.segment_done(&rec, parts.first().and_then(|p| p.progress));
    segments.keep(rec);
    Ok(())
}

/// Adds a thread's work on a store (entries, bytes, seconds) to `m`.
fn add_work(m: &mut StoreBatch, t: &StoreBatch) {
    m.entries += t.entries;
    m.logical_bytes += t.logical_bytes;
    m.raw_bytes += t.raw_bytes;
    m.write_secs += t.write_secs;
    m.flush_secs += t.flush_secs;
    if let Some(c) = t.compact_secs {
        *m.compact_secs.get_or_insert(0.0) += c;
    }
}

/// Thread `t`'s counts and its histograms merged over the stores.
fn thread_summary(t: usize, hists: &[OpHists], c: &Counts) -> ThreadSummary {
    let mut all = OpHists::default();
    for h in hists {
        all.add(h);
    }
    ThreadSummary {
        thread: t as u32,
        ops: c.puts + c.deletes + c.range_deletes + c.gets + c.scans,
        gets: c.gets,
        commits: c.commits,
        get: Latency::from_histogram(&all.get),
        commit: Latency::from_histogram(&all.commit),
        commit_wait: Latency::from_histogram(&all.commit_wait),
    }
}

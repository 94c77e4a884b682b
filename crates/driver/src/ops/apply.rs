//! Applying operations to stores: batching puts and deletes per store,
//! timing every commit, flush, compaction, get and scan, checking reads.

use std::sync::atomic::Ordering;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use ledgerbench_core::{Batch, KvStore};
use ledgerbench_meter::loopdev::Device;
use ledgerbench_trace::{Expect, Op, ValueRef, expand};

use crate::DriverError;
use crate::results::{SegmentRecord, StoreBatch};
use crate::schedule::{Arrival, Schedule};
use crate::segment::{Counters, OpHists, SegmentMeter, record};
use ledgerbench_rng::Rng;

pub use ledgerbench_trace::OpSource;

use super::*;

#[derive(Default)]
pub(super) struct Counts {
    pub(super) puts: u64,
    pub(super) deletes: u64,
    pub(super) range_deletes: u64,
    pub(super) gets: u64,
    pub(super) found: u64,
    /// Wrapping sum of the hashes of the values found by gets the trace
    /// does not check: equal between two runs whose gets returned the same
    /// values, in any order.
    pub(super) found_digest: u64,
    /// Values hashed into `found_digest`.
    pub(super) digested: u64,
    pub(super) scanned: u64,
    pub(super) mismatches: u64,
    pub(super) commits: u64,
    pub(super) scans: u64,
}

impl Counts {
    pub(super) fn add(&mut self, o: &Counts) {
        self.puts += o.puts;
        self.deletes += o.deletes;
        self.range_deletes += o.range_deletes;
        self.gets += o.gets;
        self.found += o.found;
        self.found_digest = self.found_digest.wrapping_add(o.found_digest);
        self.digested += o.digested;
        self.scanned += o.scanned;
        self.mismatches += o.mismatches;
        self.commits += o.commits;
        self.scans += o.scans;
    }
}

/// One thread's execution of operations: its pending batches, timings and counts.
pub(super) struct Applier<'a> {
    pub(super) stores: &'a [&'a dyn KvStore],
    pub(super) names: &'a [String],
    pub(super) counters: &'a Counters,
    pub(super) pending: Vec<Batch>,
    pub(super) hists: Vec<OpHists>,
    pub(super) counts: Counts,
    pub(super) recs: Vec<StoreBatch>,
    pub(super) seg_ops: u64,
    pub(super) seg_gets: u64,
    /// Seconds spent producing operations (reading the trace or running
    /// the generator, regenerating values) in the current segment.
    pub(super) seg_source: f64,
    pub(super) scratch: Vec<u8>,
    pub(super) got: Vec<u8>,
    /// When the operation being applied was due (paced runs).
    pub(super) due: Option<Instant>,
    /// Pacing by recorded times: when the replay started and the speed-up.
    pub(super) clock: Option<(Instant, f64)>,
    /// When the last recorded time said the operations after it were due.
    pub(super) recorded_due: Option<Instant>,
    /// Per store, the writer's turn when threads share an engine that takes
    /// one writer at a time (empty with one thread): taking it here, not
    /// inside the engine, is what lets the wait be timed apart.
    pub(super) turns: &'a [Option<Mutex<()>>],
}

/// The mark after which a stream's recorded times ([`Op::At`]) count: a
/// generator's load phase (`run synth`'s initial state) takes what it
/// takes, and its timed phase starts when it ends.
pub(super) const CLOCK_MARK: &str = "load";

impl<'a> Applier<'a> {
    /// Counts recorded times from now (at [`CLOCK_MARK`]).
    pub(super) fn restart_clock(&mut self) {
        if let Some((_, speed)) = self.clock {
            self.clock = Some((Instant::now(), speed));
        }
    }

    pub(super) fn new(
        stores: &'a [&'a dyn KvStore],
        names: &'a [String],
        counters: &'a Counters,
        recs: Vec<StoreBatch>,
    ) -> Self {
        Self {
            stores,
            names,
            counters,
            pending: names.iter().map(|_| Batch::new()).collect(),
            hists: names.iter().map(|_| OpHists::default()).collect(),
            counts: Counts::default(),
            recs,
            seg_ops: 0,
            seg_gets: 0,
            seg_source: 0.0,
            scratch: Vec::new(),
            got: Vec::new(),
            due: None,
            clock: None,
            recorded_due: None,
            turns: &[],
        }
    }

    /// The error of store `i`; builds its name only when there is an error,
    /// so the per-operation path allocates nothing.
    pub(super) fn err(
        &self,
        i: usize,
    ) -> impl Fn(ledgerbench_core::Error) -> DriverError + use<'a> {
        let names = self.names;
        move |source| DriverError::Store {
            store: names.get(i).cloned().unwrap_or_default(),
            source,
        }
    }

    /// The next operation of `src`, timing how long producing it took.
    pub(super) fn pull<'s>(
        &mut self,
        src: &'s mut dyn OpSource,
    ) -> Result<Option<Op<'s>>, DriverError> {
        let t = Instant::now();
        let op = src
            .next_op()
            .map_err(|e| DriverError::Config(e.to_string()));
        self.seg_source += t.elapsed().as_secs_f64();
        op
    }

    pub(super) fn uncommitted(&self) -> bool {
        self.pending.iter().any(|b| !b.is_empty())
    }

    /// Applies one operation; returns the label at a mark.
    ///
    /// Long because one arm per kind of operation.
    pub(super) fn apply(&mut self, op: Op<'_>) -> Result<Option<String>, DriverError> {
        let stores = self.stores;
        match op {
            Op::Put { store, key, value } => {
                let v = if matches!(value, ValueRef::Generated { .. }) {
                    let t = Instant::now();
                    let v = expand(value, &mut self.scratch);
                    self.seg_source += t.elapsed().as_secs_f64();
                    v
                } else {
                    expand(value, &mut self.scratch)
                };
                self.pending[store as usize].put(key, v);
                self.counts.puts += 1;
                self.seg_ops += 1;
            }
            Op::Delete { store, key } => {
                self.pending[store as usize].delete(key);
                self.counts.deletes += 1;
                self.seg_ops += 1;
            }
            Op::DeleteRange { store, start, end } => {
                self.pending[store as usize].delete_range(start, end);
                self.counts.range_deletes += 1;
                self.seg_ops += 1;
            }
            Op::Get { store, key, expect } => {
                let i = store as usize;
                let t = Instant::now();
                let found = stores[i]
                    .get_into(key, &mut self.got)
                    .map_err(self.err(i))?;
                let end = Instant::now();
                record(&mut self.hists[i].get, end.duration_since(t));
                if let Some(due) = self.due.or(self.recorded_due) {
                    record(&mut self.hists[i].get_corrected, end.duration_since(due));
                }
                self.counts.found += u64::from(found);
                // A value the trace does not check is hashed into the digest
                // engines are compared by; a checked one was compared already,
                // and hashing it again would cost every get of those traces.
                if found && expect == Expect::Unchecked {
                    let h = ledgerbench_trace::value_hash(&self.got);
                    self.counts.found_digest = self.counts.found_digest.wrapping_add(h);
                    self.counts.digested += 1;
                }
                if !expect.check(found.then_some(self.got.as_slice()), &mut self.scratch) {
                    self.counts.mismatches += 1;
                }
                self.counts.gets += 1;
                self.seg_ops += 1;
                self.seg_gets += 1;
                self.counters.lookups.fetch_add(1, Ordering::Relaxed);
            }
            Op::Scan {
                store,
                start,
                end,
                limit,
            } => {
                let i = store as usize;
                let t = Instant::now();
                let mut left = limit;
                let mut seen = 0u64;
                stores[i]
                    .scan(start, &mut |k, _| {
                        if !end.is_empty() && k >= end {
                            return false;
                        }
                        seen += 1;
                        left = left.saturating_sub(1);
                        left > 0
                    })
                    .map_err(self.err(i))?;
                self.counts.scanned += seen;
                record(&mut self.hists[i].scan, t.elapsed());
                self.counts.scans += 1;
                self.seg_ops += 1;
            }
            // A trace's sync flag is not obeyed: the run's durability level,
            // the same for every engine, decides what a commit syncs.
            Op::Commit { .. } => {
                for (i, store) in stores.iter().enumerate() {
                    let b = &self.pending[i];
                    if b.is_empty() {
                        continue;
                    }
                    let _turn = match self.turns.get(i) {
                        Some(Some(turn)) => {
                            let t = Instant::now();
                            let held = turn.lock().unwrap_or_else(PoisonError::into_inner);
                            record(&mut self.hists[i].commit_wait, t.elapsed());
                            Some(held)
                        }
                        _ => None,
                    };
                    let t = Instant::now();
                    store.write(b).map_err(self.err(i))?;
                    let (n, bytes) = (b.len() as u64, b.logical_bytes());
                    let r = &mut self.recs[i];
                    r.write_secs += record(&mut self.hists[i].commit, t.elapsed());
                    r.entries += n;
                    r.logical_bytes += bytes;
                    r.raw_bytes += bytes;
                    self.counters.bytes.fetch_add(bytes, Ordering::Relaxed);
                    self.pending[i].clear();
                }
                self.counts.commits += 1;
            }
            Op::Flush { store } => {
                for i in selected(store, stores.len()) {
                    let t = Instant::now();
                    stores[i].flush().map_err(self.err(i))?;
                    self.recs[i].flush_secs += record(&mut self.hists[i].flush, t.elapsed());
                }
            }
            Op::Compact { store } => {
                for i in selected(store, stores.len()) {
                    if !stores[i].capabilities().manual_compaction {
                        continue;
                    }
                    let t = Instant::now();
                    stores[i].compact().map_err(self.err(i))?;
                    let s = record(&mut self.hists[i].compaction, t.elapsed());
                    *self.recs[i].compact_secs.get_or_insert(0.0) += s;
                }
            }
            Op::Mark { label } => return Ok(Some(label.to_string())),
            // Paced by the recording: wait until the record's time, scaled;
            // a closed-loop replay ignores it.
            Op::At { micros } => {
                if let Some((start, speed)) = self.clock {
                    let due =
                        start + std::time::Duration::from_secs_f64(micros as f64 / 1e6 / speed);
                    let now = Instant::now();
                    if due > now {
                        std::thread::sleep(due - now);
                    }
                    self.recorded_due = Some(due);
                }
            }
        }
        // A segment may be long (a load of millions of keys before its
        // first mark, over ten minutes on a B-tree past memory): every
        // 4,096 operations applied, whatever their kind, tell the watchdog
        // the run moves (the heartbeat writes at most every half second).
        if self.seg_ops > 0 && self.seg_ops.is_multiple_of(4096) {
            crate::heartbeat::beat(None);
        }
        Ok(None)
    }
}

/// The stores a replay writes: the workload's names for them, the open
/// stores and their private devices.
pub(super) type Targets<'a> = (
    &'a [String],
    &'a [&'a dyn KvStore],
    &'a [Option<&'a Device>],
);

/// Applies `src`'s operations to the stores, a segment per mark (a soak's:
/// per interval, [`super::Window`]), tallying latencies per store and
/// counts; paced open loop at a fixed rate or by the recorded times when
/// `pacing` says so.
///
/// Long because one loop in the order it runs: pull, pace, apply, and at
/// each mark the segment's meters.
pub(super) fn run_ops(
    src: &mut dyn OpSource,
    (names, stores, devices): Targets<'_>,
    observer: &mut dyn Observer,
    segments: &mut super::Kept,
    (hists, counts): (&mut Vec<OpHists>, &mut Counts),
    counters: &Counters,
    pacing: super::Pacing,
) -> Result<(), DriverError> {
    let mut meter = SegmentMeter::new(names, stores, devices)?;
    let mut a = Applier::new(stores, names, counters, meter.fresh());
    a.clock = pacing.speed.map(|s| (Instant::now(), s));
    let mut seg_start = Instant::now();
    let run_start = seg_start;
    let mut closed = segments.count();
    // A soak's run totals, its segments' latencies added in as each closes.
    let mut totals: Option<Vec<OpHists>> = pacing
        .window
        .map(|_| names.iter().map(|_| OpHists::default()).collect());
    let fixed = |p: super::Pace| Schedule::new(p.ops_per_sec, Arrival::Fixed, Rng::new(0));
    let mut schedule = pacing
        .rate
        .and_then(|p| p.after_mark.is_none().then(|| fixed(p)));
    let result = loop {
        let mark = match a.pull(src) {
            Err(e) => break Err(e),
            Ok(None) => "end".to_string(),
            Ok(Some(op)) => {
                a.due = match (&mut schedule, &op) {
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
                let applied = a.apply(op);
                match applied {
                    Err(e) => break Err(e),
                    Ok(None) => continue,
                    Ok(Some(label)) => label,
                }
            }
        };
        let mut at_end = mark == "end";
        if mark == CLOCK_MARK {
            a.restart_clock();
        }
        if let Some(p) = pacing.rate
            && p.after_mark == Some(mark.as_str())
        {
            schedule = Some(fixed(p));
        }
        if a.uncommitted() {
            break Err(DriverError::Config(format!(
                "the workload left writes uncommitted at `{mark}`: a trace must commit before each mark and at its end"
            )));
        }
        if let Some(w) = pacing.window
            && !at_end
        {
            // Whole intervals only: the run ends with the first interval
            // that closes past its duration.
            if seg_start.elapsed() < w.interval {
                continue;
            }
            at_end = w.duration.is_some_and(|d| run_start.elapsed() >= d);
        }
        // From here to the next segment's start the harness holds the
        // stream (meters, writes the record): not the engine's time.
        let held = Instant::now();
        if let Some(t) = &mut totals {
            for (i, h) in a.hists.iter_mut().enumerate() {
                a.recs[i].latency = Some(h.latency());
                t[i].add(h);
                h.reset();
            }
        }
        // A trailing segment with nothing in it is not a segment.
        if !(at_end && a.seg_ops == 0 && a.recs.iter().all(|r| r.flush_secs == 0.0)) {
            let total_secs = seg_start.elapsed().as_secs_f64();
            let process_write_bytes = match meter.close(&mut a.recs) {
                Ok(p) => p,
                Err(e) => break Err(e),
            };
            closed += 1;
            let rec = SegmentRecord {
                segment: closed,
                mark,
                ops: a.seg_ops,
                gets: a.seg_gets,
                source_secs: Some(a.seg_source),
                total_secs,
                process_write_bytes,
                memory: crate::segment::memory_now(),
                stores: std::mem::replace(&mut a.recs, meter.fresh()),
            };
            // A soak's progress is its time, not its endless stream's.
            let progress = match pacing.window.and_then(|w| w.duration) {
                Some(d) => Some((run_start.elapsed().min(d).as_secs(), d.as_secs().max(1))),
                None => src.progress(),
            };
            observer.segment_done(&rec, progress);
            let stop = totals.as_ref().and_then(|_| observer.stop());
            segments.keep(rec);
            if let Some(why) = stop {
                break Err(DriverError::Stopped(why));
            }
        }
        if at_end {
            break Ok(());
        }
        (a.seg_ops, a.seg_gets, a.seg_source) = (0, 0, 0.0);
        if let Some(s) = &mut schedule {
            s.postpone(held.elapsed());
        }
        seg_start = Instant::now();
    };
    *hists = totals.unwrap_or(a.hists);
    counts.add(&a.counts);
    result
}

pub(super) fn selected(store: Option<u8>, n: usize) -> std::ops::Range<usize> {
    match store {
        Some(s) => s as usize..s as usize + 1,
        None => 0..n,
    }
}

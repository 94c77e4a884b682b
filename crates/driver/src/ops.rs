//! Replays a stream of key-value operations (a trace, or a generator
//! speaking the trace's language) on open stores, with the same meters as
//! every workload: per-segment engine, device and process bytes, latency per
//! operation kind, per-second samples and cost per phase.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use kvbench_core::{Batch, KvStore};
use kvbench_meter::loopdev::Device;
use kvbench_meter::rusage::Usage;
use kvbench_trace::{Op, ValueRef, expand};
use serde::{Deserialize, Serialize};

use crate::DriverError;
use crate::results::{PhaseCost, Sample, StoreBatch, StoreSummary, TotalSummary};
use crate::segment::{
    Counters, OpHists, SegmentMeter, record, sample_every_second, summarize_stores,
};

pub use kvbench_trace::OpSource;

/// One segment of a replay: the operations up to a mark.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SegmentRecord {
    /// Segment number, from 1.
    pub segment: u32,
    /// The mark's label (`batch 3`, ...), or `end` for the tail after the last mark.
    pub mark: String,
    /// Operations in the segment.
    pub ops: u64,
    /// Gets in the segment.
    pub gets: u64,
    /// Seconds of the segment spent producing the operations (reading the
    /// trace, running the generator, regenerating values), inside
    /// `total_secs`: subtract it for the engines' share. Summed over
    /// threads when workers run in parallel. Absent in results written
    /// before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_secs: Option<f64>,
    /// Wall time of the segment, seconds (excluding the meters' `syncfs`).
    pub total_secs: f64,
    /// Process `write_bytes` during the segment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process_write_bytes: Option<u64>,
    /// Per store, in header order.
    pub stores: Vec<StoreBatch>,
}

/// Totals of a replay.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpsSummary {
    /// Segments completed.
    pub segments: u32,
    /// Puts, deletes, gets and commits executed.
    pub puts: u64,
    /// Deletes.
    pub deletes: u64,
    /// Gets.
    pub gets: u64,
    /// Scans.
    #[serde(default)]
    pub scans: u64,
    /// Gets whose result differed from the trace's expectation (must be 0).
    pub mismatches: u64,
    /// Commits.
    pub commits: u64,
    /// Wall time, seconds.
    pub wall_secs: f64,
    /// Operations (puts, deletes, gets, scans) per second of wall time.
    pub ops_per_sec: f64,
    /// Seconds spent producing the operations (see [`SegmentRecord::source_secs`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_secs: Option<f64>,
    /// Per store totals.
    pub stores: std::collections::BTreeMap<String, StoreSummary>,
    /// All stores together.
    pub total: TotalSummary,
    /// Whether time per segment and memory grew from the first quarter of
    /// the run to the last (soaks); absent with fewer than 8 segments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<Drift>,
}

/// First quarter against last quarter of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Drift {
    /// Median segment seconds, first quarter of segments.
    pub segment_secs_first: f64,
    /// Median segment seconds, last quarter.
    pub segment_secs_last: f64,
    /// Last / first.
    pub segment_secs_ratio: f64,
    /// Median RSS of the first quarter of samples, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rss_first: Option<u64>,
    /// Median RSS of the last quarter of samples, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rss_last: Option<u64>,
    /// True when either ratio exceeds [`DRIFT_LIMIT`].
    pub drifted: bool,
}

/// Growth from the first quarter to the last that counts as drift.
pub const DRIFT_LIMIT: f64 = 1.25;

fn median_of(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

/// Compares the first and last quarters of segments and samples.
pub fn drift(segments: &[SegmentRecord], samples: &[crate::results::Sample]) -> Option<Drift> {
    let n = segments.len();
    if n < 8 {
        return None;
    }
    let q = n / 4;
    let first = median_of(segments[..q].iter().map(|s| s.total_secs).collect())?;
    let last = median_of(segments[n - q..].iter().map(|s| s.total_secs).collect())?;
    let rss: Vec<f64> = samples
        .iter()
        .filter_map(|s| s.rss_bytes)
        .map(|b| b as f64)
        .collect();
    let (rss_first, rss_last) = if rss.len() >= 8 {
        let k = rss.len() / 4;
        (
            median_of(rss[..k].to_vec()).map(|x| x as u64),
            median_of(rss[rss.len() - k..].to_vec()).map(|x| x as u64),
        )
    } else {
        (None, None)
    };
    let ratio = last / first.max(1e-9);
    let rss_ratio = rss_first
        .zip(rss_last)
        .map(|(a, b)| b as f64 / a.max(1) as f64);
    Some(Drift {
        segment_secs_first: first,
        segment_secs_last: last,
        segment_secs_ratio: ratio,
        rss_first,
        rss_last,
        drifted: ratio > DRIFT_LIMIT || rss_ratio.is_some_and(|r| r > DRIFT_LIMIT),
    })
}

/// What a replay produced, including a partial one that ended in an error.
#[derive(Debug, Default)]
pub struct OpsOutcome {
    /// Segments completed.
    pub segments: Vec<SegmentRecord>,
    /// Totals, when a segment completed.
    pub summary: Option<OpsSummary>,
    /// One sample per second.
    pub samples: Vec<Sample>,
    /// Cost of the replay phase.
    pub phases: Vec<PhaseCost>,
    /// The error that ended it, if any.
    pub error: Option<DriverError>,
}

/// Receives progress.
pub trait OpsObserver {
    /// A segment finished.
    fn segment_done(&mut self, _rec: &SegmentRecord) {}
}

impl OpsObserver for () {}

#[derive(Default)]
struct Counts {
    puts: u64,
    deletes: u64,
    gets: u64,
    mismatches: u64,
    commits: u64,
    scans: u64,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.puts += o.puts;
        self.deletes += o.deletes;
        self.gets += o.gets;
        self.mismatches += o.mismatches;
        self.commits += o.commits;
        self.scans += o.scans;
    }
}

/// Replays `src` on `stores` (in the header's store order).
pub fn replay(
    src: &mut dyn OpSource,
    stores: &[&dyn KvStore],
    devices: &[Option<&Device>],
    observer: &mut dyn OpsObserver,
) -> OpsOutcome {
    let mut out = OpsOutcome::default();
    let names = src.header().stores.clone();
    if names.len() != stores.len() {
        out.error = Some(DriverError::Config(format!(
            "the workload has {} stores ({}), {} were opened",
            names.len(),
            names.join(", "),
            stores.len()
        )));
        return out;
    }
    let started = Instant::now();
    let usage0 = Usage::now();
    let mut hists: Vec<OpHists> = names.iter().map(|_| OpHists::default()).collect();
    let mut counts = Counts::default();
    let done = AtomicBool::new(false);
    let counters = Counters::default();
    let result = std::thread::scope(|scope| {
        let sampler = scope.spawn(|| sample_every_second(stores, &counters, &done, started));
        let r = run_ops(
            src,
            &names,
            stores,
            devices,
            observer,
            &mut out.segments,
            &mut hists,
            &mut counts,
            &counters,
        );
        done.store(true, Ordering::Relaxed);
        out.samples = sampler.join().unwrap_or_default();
        r
    });
    finish(
        &mut out, result, &names, stores, &hists, &counts, started, usage0,
    );
    out
}

/// Records the phase cost, counts live bytes and builds the summary.
#[allow(clippy::too_many_arguments)]
fn finish(
    out: &mut OpsOutcome,
    result: Result<(), DriverError>,
    names: &[String],
    stores: &[&dyn KvStore],
    hists: &[OpHists],
    counts: &Counts,
    started: Instant,
    usage0: Usage,
) {
    let wall = started.elapsed().as_secs_f64();
    out.phases.push(PhaseCost {
        phase: "replay".into(),
        wall_secs: wall,
        usage: Usage::now().since(&usage0),
    });
    // Deletes and overwrites make bytes written a poor base for space
    // amplification: count the live bytes with a full scan, outside the timings.
    let mut live = None;
    match result {
        Err(e) => out.error = Some(e),
        Ok(()) => match live_bytes(stores, names) {
            Ok(l) => live = Some(l),
            Err(e) => out.error = Some(e),
        },
    }
    let segs: Vec<&[StoreBatch]> = out.segments.iter().map(|s| s.stores.as_slice()).collect();
    let process: Vec<Option<u64>> = out.segments.iter().map(|s| s.process_write_bytes).collect();
    if let Some((stores, total)) = summarize_stores(names, &segs, &process, hists, live.as_deref())
    {
        let ops = counts.puts + counts.deletes + counts.gets + counts.scans;
        out.summary = Some(OpsSummary {
            segments: out.segments.len() as u32,
            puts: counts.puts,
            deletes: counts.deletes,
            gets: counts.gets,
            scans: counts.scans,
            mismatches: counts.mismatches,
            commits: counts.commits,
            wall_secs: wall,
            ops_per_sec: ops as f64 / wall.max(1e-9),
            source_secs: out.segments.iter().map(|g| g.source_secs).sum(),
            stores,
            total,
            drift: drift(&out.segments, &out.samples),
        });
    }
}

/// One thread's execution of operations: its pending batches, timings and counts.
struct Applier<'a> {
    stores: &'a [&'a dyn KvStore],
    names: &'a [String],
    counters: &'a Counters,
    pending: Vec<Batch>,
    hists: Vec<OpHists>,
    counts: Counts,
    recs: Vec<StoreBatch>,
    seg_ops: u64,
    seg_gets: u64,
    /// Seconds spent producing operations (reading the trace or running
    /// the generator, regenerating values) in the current segment.
    seg_source: f64,
    scratch: Vec<u8>,
    got: Vec<u8>,
}

impl<'a> Applier<'a> {
    fn new(
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
        }
    }

    /// The error of store `i`; builds its name only when there is an error,
    /// so the per-operation path allocates nothing.
    fn err(&self, i: usize) -> impl Fn(kvbench_core::Error) -> DriverError + use<'a> {
        let names = self.names;
        move |source| DriverError::Store {
            store: names.get(i).cloned().unwrap_or_default(),
            source,
        }
    }

    /// The next operation of `src`, timing how long producing it took.
    fn pull<'s>(&mut self, src: &'s mut dyn OpSource) -> Result<Option<Op<'s>>, DriverError> {
        let t = Instant::now();
        let op = src
            .next_op()
            .map_err(|e| DriverError::Config(e.to_string()));
        self.seg_source += t.elapsed().as_secs_f64();
        op
    }

    fn uncommitted(&self) -> bool {
        self.pending.iter().any(|b| !b.is_empty())
    }

    /// Applies one operation; returns the label at a mark.
    fn apply(&mut self, op: Op<'_>) -> Result<Option<String>, DriverError> {
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
            Op::Get { store, key, expect } => {
                let i = store as usize;
                let t = Instant::now();
                let found = stores[i]
                    .get_into(key, &mut self.got)
                    .map_err(self.err(i))?;
                record(&mut self.hists[i].get, t.elapsed());
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
                limit,
            } => {
                let i = store as usize;
                let t = Instant::now();
                let mut left = limit;
                stores[i]
                    .scan(start, &mut |_, _| {
                        left = left.saturating_sub(1);
                        left > 0
                    })
                    .map_err(self.err(i))?;
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
        }
        Ok(None)
    }
}

#[allow(clippy::too_many_arguments)]
fn run_ops(
    src: &mut dyn OpSource,
    names: &[String],
    stores: &[&dyn KvStore],
    devices: &[Option<&Device>],
    observer: &mut dyn OpsObserver,
    segments: &mut Vec<SegmentRecord>,
    hists: &mut Vec<OpHists>,
    counts: &mut Counts,
    counters: &Counters,
) -> Result<(), DriverError> {
    let mut meter = SegmentMeter::new(names, stores, devices)?;
    let mut a = Applier::new(stores, names, counters, meter.fresh());
    let mut seg_start = Instant::now();
    let result = loop {
        let mark = match a.pull(src) {
            Err(e) => break Err(e),
            Ok(None) => "end".to_string(),
            Ok(Some(op)) => match a.apply(op) {
                Err(e) => break Err(e),
                Ok(None) => continue,
                Ok(Some(label)) => label,
            },
        };
        let at_end = mark == "end";
        if a.uncommitted() {
            break Err(DriverError::Config(format!(
                "the workload left writes uncommitted at `{mark}`: a trace must commit before each mark and at its end"
            )));
        }
        // A trailing segment with nothing in it is not a segment.
        if !(at_end && a.seg_ops == 0 && a.recs.iter().all(|r| r.flush_secs == 0.0)) {
            let total_secs = seg_start.elapsed().as_secs_f64();
            let process_write_bytes = match meter.close(&mut a.recs) {
                Ok(p) => p,
                Err(e) => break Err(e),
            };
            let rec = SegmentRecord {
                segment: segments.len() as u32 + 1,
                mark,
                ops: a.seg_ops,
                gets: a.seg_gets,
                source_secs: Some(a.seg_source),
                total_secs,
                process_write_bytes,
                stores: std::mem::replace(&mut a.recs, meter.fresh()),
            };
            observer.segment_done(&rec);
            segments.push(rec);
        }
        if at_end {
            break Ok(());
        }
        (a.seg_ops, a.seg_gets, a.seg_source) = (0, 0, 0.0);
        seg_start = Instant::now();
    };
    *hists = a.hists;
    counts.add(&a.counts);
    result
}

/// What one worker thread of [`replay_parallel`] hands back.
type WorkerOut = (Vec<OpHists>, Counts, Vec<StoreBatch>, u64, f64);

/// Runs one stream per worker thread against the same stores at once (the
/// account-state workload's concurrent workers). Marks do not split the run:
/// it is one segment, metered at the end; latencies come from every worker;
/// write and flush seconds are summed over workers.
pub fn replay_parallel(
    mut sources: Vec<Box<dyn OpSource + Send>>,
    stores: &[&dyn KvStore],
    devices: &[Option<&Device>],
) -> OpsOutcome {
    let mut out = OpsOutcome::default();
    let Some(first) = sources.first() else {
        out.error = Some(DriverError::Config("no worker streams".into()));
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
    let started = Instant::now();
    let usage0 = Usage::now();
    let done = AtomicBool::new(false);
    let counters = Counters::default();
    let mut hists: Vec<OpHists> = names.iter().map(|_| OpHists::default()).collect();
    let mut counts = Counts::default();
    let workers = sources.len();
    let result = (|| -> Result<(), DriverError> {
        let mut meter = SegmentMeter::new(&names, stores, devices)?;
        let mut recs = meter.fresh();
        let fresh: Vec<Vec<StoreBatch>> = sources.iter().map(|_| meter.fresh()).collect();
        let (names, counters, done) = (&names, &counters, &done);
        let (joined, samples) = std::thread::scope(|scope| {
            let sampler = scope.spawn(|| sample_every_second(stores, counters, done, started));
            let handles: Vec<_> = sources
                .iter_mut()
                .zip(fresh)
                .map(|(src, r)| {
                    scope.spawn(move || -> Result<WorkerOut, DriverError> {
                        let mut a = Applier::new(stores, names, counters, r);
                        while let Some(op) = a.pull(&mut **src)? {
                            a.apply(op)?;
                        }
                        if a.uncommitted() {
                            return Err(DriverError::Config(
                                "a worker's stream ended with writes uncommitted".into(),
                            ));
                        }
                        Ok((a.hists, a.counts, a.recs, a.seg_ops, a.seg_source))
                    })
                })
                .collect();
            let joined: Vec<Result<WorkerOut, DriverError>> = handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .map_err(|_| DriverError::Generator("worker thread panicked".into()))?
                })
                .collect();
            done.store(true, Ordering::Relaxed);
            (joined, sampler.join().unwrap_or_default())
        });
        out.samples = samples;
        let (mut ops, mut source_secs) = (0, 0.0);
        for j in joined {
            let (h, c, r, n, src_secs) = j?;
            source_secs += src_secs;
            for (mine, theirs) in hists.iter_mut().zip(&h) {
                // Same bounds on both sides, so adding cannot fail.
                let _ = mine.commit.add(&theirs.commit);
                let _ = mine.flush.add(&theirs.flush);
                let _ = mine.compaction.add(&theirs.compaction);
                let _ = mine.get.add(&theirs.get);
                let _ = mine.scan.add(&theirs.scan);
            }
            counts.add(&c);
            for (m, t) in recs.iter_mut().zip(&r) {
                m.entries += t.entries;
                m.logical_bytes += t.logical_bytes;
                m.raw_bytes += t.raw_bytes;
                m.write_secs += t.write_secs;
                m.flush_secs += t.flush_secs;
                if let Some(c) = t.compact_secs {
                    *m.compact_secs.get_or_insert(0.0) += c;
                }
            }
            ops += n;
        }
        let total_secs = started.elapsed().as_secs_f64();
        let process_write_bytes = meter.close(&mut recs)?;
        out.segments.push(SegmentRecord {
            segment: 1,
            mark: format!("{workers} workers"),
            ops,
            gets: counts.gets,
            source_secs: Some(source_secs),
            total_secs,
            process_write_bytes,
            stores: recs,
        });
        Ok(())
    })();
    finish(
        &mut out, result, &names, stores, &hists, &counts, started, usage0,
    );
    out
}

/// Key + value bytes of every entry of each store.
fn live_bytes(stores: &[&dyn KvStore], names: &[String]) -> Result<Vec<u64>, DriverError> {
    stores
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut n = 0u64;
            s.scan(b"", &mut |k, v| {
                n += (k.len() + v.len()) as u64;
                true
            })
            .map_err(|source| DriverError::Store {
                store: names.get(i).cloned().unwrap_or_default(),
                source,
            })?;
            Ok(n)
        })
        .collect()
}

fn selected(store: Option<u8>, n: usize) -> std::ops::Range<usize> {
    match store {
        Some(s) => s as usize..s as usize + 1,
        None => 0..n,
    }
}

/// What `record` wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordStats {
    /// Operations written.
    pub ops: u64,
    /// Puts among them.
    pub puts: u64,
    /// Key + value bytes of the puts.
    pub logical_bytes: u64,
}

/// Writes every operation of `src` to a new trace at `path`.
pub fn record_trace(
    src: &mut dyn OpSource,
    path: &std::path::Path,
) -> Result<RecordStats, DriverError> {
    let mut w = kvbench_trace::TraceWriter::create(path, src.header())
        .map_err(|e| DriverError::Config(e.to_string()))?;
    let mut st = RecordStats::default();
    while let Some(op) = src
        .next_op()
        .map_err(|e| DriverError::Config(e.to_string()))?
    {
        if let Op::Put { key, value, .. } = op {
            st.puts += 1;
            st.logical_bytes += key.len() as u64
                + match value {
                    kvbench_trace::ValueRef::Bytes(b) => b.len() as u64,
                    kvbench_trace::ValueRef::Generated { len, .. } => u64::from(len),
                };
        }
        w.write(&op)
            .map_err(|e| DriverError::Config(e.to_string()))?;
        st.ops += 1;
    }
    w.finish().map_err(|e| DriverError::Config(e.to_string()))?;
    Ok(st)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Sample;

    fn seg(i: u32, secs: f64) -> SegmentRecord {
        SegmentRecord {
            segment: i,
            mark: String::new(),
            ops: 1,
            gets: 0,
            source_secs: Some(0.0),
            total_secs: secs,
            process_write_bytes: None,
            stores: Vec::new(),
        }
    }

    fn sample(rss: u64) -> Sample {
        Sample {
            t: 0.0,
            lookups: 0,
            ledgers: None,
            bytes: 0,
            write_stopped: None,
            running_compactions: None,
            stall_micros: None,
            rss_bytes: Some(rss),
            pending_compaction_bytes: None,
        }
    }

    #[test]
    fn drift_needs_growth_past_the_limit_in_time_or_memory() {
        let flat: Vec<SegmentRecord> = (0..12).map(|i| seg(i, 1.0)).collect();
        let steady: Vec<Sample> = (0..12).map(|_| sample(100 << 20)).collect();
        let d = drift(&flat, &steady).expect("enough segments");
        assert!(!d.drifted && (d.segment_secs_ratio - 1.0).abs() < 1e-9);
        let slower: Vec<SegmentRecord> =
            (0..12).map(|i| seg(i, 1.0 + f64::from(i) * 0.2)).collect();
        assert!(drift(&slower, &steady).expect("drift").drifted);
        let leaking: Vec<Sample> = (0..12u64).map(|i| sample((100 + 20 * i) << 20)).collect();
        assert!(drift(&flat, &leaking).expect("drift").drifted);
        assert!(drift(&flat[..7], &steady).is_none(), "too few segments");
    }
}

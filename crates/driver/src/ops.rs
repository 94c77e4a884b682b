//! Replays a stream of key-value operations (a trace, or a generator
//! speaking the trace's language) on open stores, with the same meters as
//! every workload: per-segment engine, device and process bytes, latency per
//! operation kind, per-second samples and cost per phase.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use kvbench_core::{Batch, Durability, KvStore};
use kvbench_meter::loopdev::LoopFs;
use kvbench_meter::rusage::Usage;
use kvbench_trace::{Op, TraceError, expand};
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
    /// Operations (puts, deletes, gets) per second of wall time.
    pub ops_per_sec: f64,
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

/// Replays `src` on `stores` (in the header's store order).
pub fn replay(
    src: &mut dyn OpSource,
    stores: &[&dyn KvStore],
    devices: &[Option<&LoopFs>],
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
        Ok(()) => match live_bytes(stores) {
            Ok(l) => live = Some(l),
            Err(e) => out.error = Some(e),
        },
    }
    let segs: Vec<&[StoreBatch]> = out.segments.iter().map(|s| s.stores.as_slice()).collect();
    let process: Vec<Option<u64>> = out.segments.iter().map(|s| s.process_write_bytes).collect();
    if let Some((stores, total)) =
        summarize_stores(&names, &segs, &process, &hists, live.as_deref())
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
            stores,
            total,
            drift: drift(&out.segments, &out.samples),
        });
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn run_ops(
    src: &mut dyn OpSource,
    names: &[String],
    stores: &[&dyn KvStore],
    devices: &[Option<&LoopFs>],
    observer: &mut dyn OpsObserver,
    segments: &mut Vec<SegmentRecord>,
    hists: &mut [OpHists],
    counts: &mut Counts,
    counters: &Counters,
) -> Result<(), DriverError> {
    let mut meter = SegmentMeter::new(names, stores, devices)?;
    let mut pending: Vec<Batch> = names.iter().map(|_| Batch::new()).collect();
    let mut recs = meter.fresh();
    let (mut seg_ops, mut seg_gets) = (0u64, 0u64);
    let mut seg_start = Instant::now();
    let mut scratch = Vec::new();
    let mut got = Vec::new();
    let trace_err = |e: TraceError| DriverError::Config(e.to_string());
    loop {
        let op = src.next_op().map_err(trace_err)?;
        let mark = match op {
            None => "end".to_string(),
            Some(Op::Put { store, key, value }) => {
                let v = expand(value, &mut scratch);
                pending[store as usize].put(key, v);
                counts.puts += 1;
                seg_ops += 1;
                continue;
            }
            Some(Op::Delete { store, key }) => {
                pending[store as usize].delete(key);
                counts.deletes += 1;
                seg_ops += 1;
                continue;
            }
            Some(Op::Get { store, key, expect }) => {
                let i = store as usize;
                let t = Instant::now();
                let found = stores[i]
                    .get_into(key, &mut got)
                    .map_err(meter.store_err(i))?;
                record(&mut hists[i].get, t.elapsed());
                if !expect.check(found.then_some(got.as_slice()), &mut scratch) {
                    counts.mismatches += 1;
                }
                counts.gets += 1;
                seg_ops += 1;
                seg_gets += 1;
                counters.lookups.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            Some(Op::Scan {
                store,
                start,
                limit,
            }) => {
                let i = store as usize;
                let t = Instant::now();
                let mut left = limit;
                stores[i]
                    .scan(start, &mut |_, _| {
                        left = left.saturating_sub(1);
                        left > 0
                    })
                    .map_err(meter.store_err(i))?;
                record(&mut hists[i].scan, t.elapsed());
                counts.scans += 1;
                seg_ops += 1;
                continue;
            }
            Some(Op::Commit { sync }) => {
                let d = if sync {
                    Durability::Sync
                } else {
                    Durability::NoSync
                };
                for (i, b) in pending.iter_mut().enumerate() {
                    if b.is_empty() {
                        continue;
                    }
                    let t = Instant::now();
                    stores[i].write(b, d).map_err(meter.store_err(i))?;
                    let r = &mut recs[i];
                    r.write_secs += record(&mut hists[i].commit, t.elapsed());
                    r.entries += b.len() as u64;
                    r.logical_bytes += b.logical_bytes();
                    r.raw_bytes += b.logical_bytes();
                    counters
                        .bytes
                        .fetch_add(b.logical_bytes(), Ordering::Relaxed);
                    b.clear();
                }
                counts.commits += 1;
                continue;
            }
            Some(Op::Flush { store }) => {
                for i in selected(store, stores.len()) {
                    let t = Instant::now();
                    stores[i].flush().map_err(meter.store_err(i))?;
                    recs[i].flush_secs += record(&mut hists[i].flush, t.elapsed());
                }
                continue;
            }
            Some(Op::Compact { store }) => {
                for i in selected(store, stores.len()) {
                    if !stores[i].capabilities().manual_compaction {
                        continue;
                    }
                    let t = Instant::now();
                    stores[i].compact().map_err(meter.store_err(i))?;
                    let s = record(&mut hists[i].compaction, t.elapsed());
                    *recs[i].compact_secs.get_or_insert(0.0) += s;
                }
                continue;
            }
            Some(Op::Mark { label }) => label.to_string(),
        };
        let at_end = mark == "end";
        if pending.iter().any(|b| !b.is_empty()) {
            return Err(DriverError::Config(format!(
                "the workload left writes uncommitted at `{mark}`: a trace must commit before each mark and at its end"
            )));
        }
        // A trailing segment with nothing in it is not a segment.
        if !(at_end && seg_ops == 0 && recs.iter().all(|r| r.flush_secs == 0.0)) {
            let total_secs = seg_start.elapsed().as_secs_f64();
            let process_write_bytes = meter.close(&mut recs)?;
            let rec = SegmentRecord {
                segment: segments.len() as u32 + 1,
                mark,
                ops: seg_ops,
                gets: seg_gets,
                total_secs,
                process_write_bytes,
                stores: std::mem::replace(&mut recs, meter.fresh()),
            };
            observer.segment_done(&rec);
            segments.push(rec);
        }
        if at_end {
            return Ok(());
        }
        (seg_ops, seg_gets) = (0, 0);
        seg_start = Instant::now();
    }
}

/// Key + value bytes of every entry of each store.
fn live_bytes(stores: &[&dyn KvStore]) -> Result<Vec<u64>, DriverError> {
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
                store: format!("store {i}"),
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
            total_secs: secs,
            process_write_bytes: None,
            stores: Vec::new(),
        }
    }

    fn sample(rss: u64) -> Sample {
        Sample {
            t: 0.0,
            lookups: 0,
            ledgers: 0,
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

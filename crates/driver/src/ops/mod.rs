//! Replays a stream of key-value operations (a trace, or a generator
//! speaking the trace's language) on open stores, with the same meters as
//! every workload: per-segment engine, device and process bytes, latency per
//! operation kind, per-second samples and cost per phase.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use ledgerbench_core::KvStore;
use ledgerbench_meter::loopdev::Device;
use ledgerbench_meter::rusage::Usage;
use ledgerbench_trace::Op;

use crate::DriverError;
use crate::results::{OpsSummary, PhaseCost, RecordStats, Sample, StoreBatch, drift};
use crate::segment::{Counters, Live, OpHists, sample_every_second, summarize_stores};

pub use ledgerbench_trace::OpSource;

mod apply;
mod fold;
mod threads;

use apply::{Counts, run_ops};
pub use fold::Kept;
pub use threads::replay_threads;

/// What a replay produced, including a partial one that ended in an error.
#[derive(Debug, Default)]
pub struct OpsOutcome {
    /// What is kept of the segments completed: each went to the observer
    /// as it closed (a run writes them to `segments.jsonl`), and is kept
    /// here as a fold and its time, not as a list that grows with the run.
    pub segments: Kept,
    /// Totals, when a segment completed.
    pub summary: Option<OpsSummary>,
    /// One sample per second.
    pub samples: Vec<Sample>,
    /// Cost of the replay phase.
    pub phases: Vec<PhaseCost>,
    /// The error that ended it, if any.
    pub error: Option<DriverError>,
}

pub use crate::observe::Observer;

/// Replays `src` on `stores` (in the header's store order).
pub fn replay(
    src: &mut dyn OpSource,
    stores: &[&dyn KvStore],
    devices: &[Option<&Device>],
    observer: &mut dyn Observer,
) -> OpsOutcome {
    replay_with(src, (stores, devices), observer, Pacing::default())
}

/// Paces an op stream: operations after the mark that ends its load phase
/// (YCSB's `load`, accounts' `genesis`), or from the start when it has
/// none, are issued on a fixed schedule of `ops_per_sec`, and gets are also
/// timed from when each was due.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    /// Operations (puts, deletes, gets, scans) per second.
    pub ops_per_sec: f64,
    /// The mark pacing starts after; `None` paces from the first operation.
    pub after_mark: Option<&'static str>,
}

/// How a replay is paced: at a fixed rate (`rate`), by the trace's
/// recorded times (`speed`: 1 is the recorded pace, 10 ten times faster),
/// or neither (closed loop, as fast as the engine goes).
#[derive(Debug, Clone, Copy, Default)]
pub struct Pacing {
    /// A fixed schedule of operations per second.
    pub rate: Option<Pace>,
    /// The recorded times ([`ledgerbench_trace::Op::At`]) divided by this.
    pub speed: Option<f64>,
    /// A soak's segments: one an interval, the run bounded by time.
    pub window: Option<Window>,
}

/// How a soak cuts and bounds its run: marks end a segment only once
/// `interval` has passed since the last one ended (so each segment is one
/// interval, give or take a batch), each segment keeps its own latencies,
/// and the first interval to close after `duration` ends the run. As
/// every replay's, the segments go to the observer as they close and are
/// kept only as a fold ([`OpsOutcome::segments`]).
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// The least time a segment spans.
    pub interval: std::time::Duration,
    /// The run ends with the first interval that closes after this;
    /// `None`: at the stream's end.
    pub duration: Option<std::time::Duration>,
}

/// [`replay`] paced as `pacing` says: at a fixed rate, by the trace's
/// recorded times (gets then also timed from when their record was due),
/// or closed loop.
pub fn replay_with(
    src: &mut dyn OpSource,
    (stores, devices): (&[&dyn KvStore], &[Option<&Device>]),
    observer: &mut dyn Observer,
    pacing: Pacing,
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
        let _stops = crate::segment::SetOnDrop(&done);
        // A soak samples at its segments, and keeps no list that grows.
        let sampler = pacing
            .window
            .is_none()
            .then(|| scope.spawn(|| sample_every_second(stores, &counters, &done, started)));
        let r = run_ops(
            src,
            (&names, stores, devices),
            observer,
            &mut out.segments,
            (&mut hists, &mut counts),
            &counters,
            pacing,
        );
        done.store(true, Ordering::Relaxed);
        out.samples = sampler
            .map(|s| s.join().unwrap_or_default())
            .unwrap_or_default();
        r
    });
    // A soak ends without the full scan: after hours of load it is a
    // different workload with its own memory (RocksDB's iterator holds a
    // block of every L0 file: FIFO's 2,025 files of 1 MiB blobs outgrew a
    // 2 GiB limit), and the last interval already has the footprint.
    let scan = pacing.window.is_none();
    finish(
        &mut out,
        (result, scan),
        (&names, stores),
        (&hists, &counts),
        (started, usage0),
    );
    out
}

/// Records the phase cost, counts live bytes and the drift column (when
/// `scan`: not a soak) and builds the summary, from the stores (their
/// names and the open stores), what was tallied (latency histograms and
/// counts) and when the replay started (wall clock, usage).
fn finish(
    out: &mut OpsOutcome,
    (result, scan): (Result<(), DriverError>, bool),
    (names, stores): (&[String], &[&dyn KvStore]),
    (hists, counts): (&[OpHists], &Counts),
    (started, usage0): (Instant, Usage),
) {
    let wall = started.elapsed().as_secs_f64();
    out.phases.push(PhaseCost {
        phase: "replay".into(),
        wall_secs: wall,
        usage: Usage::now().since(&usage0),
    });
    // Deletes and overwrites make bytes written a poor base for space
    // amplification: count the live bytes with a full scan, outside the timings.
    let mut content = None;
    match result {
        Err(e) => out.error = Some(e),
        Ok(()) if !scan => {}
        Ok(()) => match final_content(stores, names) {
            Ok(c) => content = Some(c),
            Err(e) => out.error = Some(e),
        },
    }
    let live: Option<Vec<u64>> = content
        .as_ref()
        .map(|c| c.iter().map(|c| c.bytes).collect());
    // The fold's sums are the list's: summarized as a run of one segment,
    // but for what a sum loses (the first and last compaction).
    let fold = out.segments.fold.as_ref();
    let segs: Vec<&[StoreBatch]> = fold.iter().map(|s| s.stores.as_slice()).collect();
    let process: Vec<Option<u64>> = fold.iter().map(|s| s.process_write_bytes).collect();
    let live = live.as_deref().map_or(Live::Unknown, Live::Counted);
    if let Some((mut stores, total)) = summarize_stores(names, &segs, &process, hists, live) {
        for (i, name) in names.iter().enumerate() {
            if let Some(s) = stores.get_mut(name) {
                s.compact_first_last_secs = out.segments.compact_first_last(i);
            }
        }
        for (name, c) in names.iter().zip(content.iter().flatten()) {
            if let Some(s) = stores.get_mut(name) {
                s.final_entries = Some(c.entries);
                s.content_sha256 = Some(c.sha256.clone());
            }
        }
        let ops = counts.puts + counts.deletes + counts.range_deletes + counts.gets + counts.scans;
        out.summary = Some(OpsSummary {
            // Numbered from 1 in order.
            segments: fold.map_or(0, |s| s.segment),
            puts: counts.puts,
            deletes: counts.deletes,
            range_deletes: counts.range_deletes,
            gets: counts.gets,
            gets_found: Some(counts.found),
            // No digest where the trace checked every get it found.
            gets_digest: (counts.digested > 0).then(|| format!("{:016x}", counts.found_digest)),
            scanned: Some(counts.scanned),
            scans: counts.scans,
            mismatches: counts.mismatches,
            commits: counts.commits,
            wall_secs: wall,
            ops_per_sec: ops as f64 / wall.max(1e-9),
            source_secs: fold.and_then(|g| g.source_secs),
            stores,
            total,
            // A soak's (unscanned) segments are each one interval long,
            // so their times cannot drift; its own verdict judges it.
            drift: scan
                .then(|| drift(&out.segments.secs, &out.samples))
                .flatten(),
            threads: Vec::new(),
        });
    }
}

/// A store's content at the end of a run.
pub(crate) struct Content {
    pub(crate) bytes: u64,
    pub(crate) entries: u64,
    pub(crate) sha256: String,
}

/// Key + value bytes, entries and a digest of each store's content, by one
/// full scan after the run (outside the timings).
pub(crate) fn final_content(
    stores: &[&dyn KvStore],
    names: &[String],
) -> Result<Vec<Content>, DriverError> {
    use sha2::Digest;
    stores
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let (mut bytes, mut entries) = (0u64, 0u64);
            let mut h = sha2::Sha256::new();
            s.scan(b"", &mut |k, v| {
                bytes += (k.len() + v.len()) as u64;
                entries += 1;
                // A store of millions of keys takes a while to read whole.
                if entries.is_multiple_of(65_536) {
                    crate::heartbeat::beat(None);
                }
                for part in [k, v] {
                    h.update((part.len() as u32).to_le_bytes());
                    h.update(part);
                }
                true
            })
            .map_err(|source| DriverError::Store {
                store: names.get(i).cloned().unwrap_or_default(),
                source,
            })?;
            let sha256 = ledgerbench_core::hex(&h.finalize());
            Ok(Content {
                bytes,
                entries,
                sha256,
            })
        })
        .collect()
}

/// Writes every operation of `src` to a new trace at `path`.
pub fn record_trace(
    src: &mut dyn OpSource,
    path: &std::path::Path,
) -> Result<RecordStats, DriverError> {
    let mut w = ledgerbench_trace::TraceWriter::create(path, src.header())
        .map_err(|e| DriverError::Config(e.to_string()))?;
    let mut st = RecordStats::default();
    while let Some(op) = src
        .next_op()
        .map_err(|e| DriverError::Config(e.to_string()))?
    {
        st.times += u64::from(matches!(op, Op::At { .. }));
        if let Op::Put { key, value, .. } = op {
            st.puts += 1;
            st.logical_bytes += key.len() as u64
                + match value {
                    ledgerbench_trace::ValueRef::Bytes(b) => b.len() as u64,
                    ledgerbench_trace::ValueRef::Generated { len, .. } => u64::from(len),
                };
        }
        w.write(&op)
            .map_err(|e| DriverError::Config(e.to_string()))?;
        st.ops += 1;
        if let Some(sig) = crate::interrupt::requested() {
            // `w` drops unfinished: its partial file goes with it.
            return Err(DriverError::Config(format!(
                "interrupted by {sig} after {} operations; the partial trace was removed, nothing was kept",
                st.ops
            )));
        }
    }
    w.finish().map_err(|e| DriverError::Config(e.to_string()))?;
    Ok(st)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Sample;

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
            harness_heap_bytes: None,
            pending_compaction_bytes: None,
        }
    }

    #[test]
    fn drift_needs_growth_past_the_limit_in_time_or_memory() {
        let flat = [1.0; 12];
        let steady: Vec<Sample> = (0..12).map(|_| sample(100 << 20)).collect();
        let d = drift(&flat, &steady).expect("enough segments");
        assert!(!d.drifted && (d.segment_secs_ratio - 1.0).abs() < 1e-9);
        let slower: Vec<f64> = (0..12).map(|i| 1.0 + f64::from(i) * 0.2).collect();
        assert!(drift(&slower, &steady).expect("drift").drifted);
        let leaking: Vec<Sample> = (0..12u64).map(|i| sample((100 + 20 * i) << 20)).collect();
        assert!(drift(&flat, &leaking).expect("drift").drifted);
        assert!(drift(&flat[..7], &steady).is_none(), "too few segments");
    }
}

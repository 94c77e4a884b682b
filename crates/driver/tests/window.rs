//! A soak's window: segments of at least an interval, each with its own
//! latencies that add up to the run's, and the run ended by time at a mark.

use std::time::Duration;

use ledgerbench_core::{KvBackend, KvStore};
use ledgerbench_driver::ops::{self, Observer, Window};
use ledgerbench_driver::results::SegmentRecord;
use ledgerbench_mem::{Mem, MemConfig, MemLog};

fn blobs(batches: u64) -> Box<dyn ops::OpSource> {
    let params = serde_json::json!({
        "batches": batches, "blobs_per_batch": 4, "value_bytes": 4096,
        "ttl_batches": 5, "reads_per_batch": 4,
    });
    ledgerbench_workloads::by_name("blobs", 7, params).expect("blobs")
}

/// The segments as the observer saw them close.
#[derive(Default)]
struct Seen(Vec<SegmentRecord>);

impl Observer for Seen {
    fn segment_done(&mut self, rec: &SegmentRecord, _progress: Option<(u64, u64)>) {
        self.0.push(rec.clone());
    }
}

fn run(
    src: &mut dyn ops::OpSource,
    window: Option<Window>,
) -> (ops::OpsOutcome, Vec<SegmentRecord>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = MemConfig {
        persist: false,
        log: MemLog::Off,
        ..MemConfig::default()
    };
    let store = Mem::open(&dir.path().join("blobs"), &cfg).expect("open");
    let stores: [&dyn KvStore; 1] = [&store];
    let pacing = ops::Pacing {
        window,
        ..ops::Pacing::default()
    };
    let mut seen = Seen::default();
    let out = ops::replay_with(src, (&stores, &[None]), &mut seen, pacing);
    (out, seen.0)
}

#[test]
fn each_interval_is_a_segment_with_its_own_latencies() {
    // Without a window, a segment per batch, and no per-segment latencies.
    let (plain, seen) = run(&mut *blobs(30), None);
    assert!(plain.error.is_none(), "{:?}", plain.error);
    assert_eq!(seen.len(), 30);
    assert_eq!(plain.segments.count(), 30);
    assert!(seen[0].stores[0].latency.is_none());
    // An interval no batch fills: every mark ends one, as before, but each
    // segment now carries its own latencies, which add up to the run's.
    let (every, segments) = run(
        &mut *blobs(30),
        Some(Window {
            interval: Duration::ZERO,
            duration: None,
        }),
    );
    assert_eq!(segments.len(), 30);
    let gets: u64 = segments
        .iter()
        .map(|s| {
            s.stores[0]
                .latency
                .as_ref()
                .and_then(|l| l.get.as_ref())
                .map_or(0, |g| g.count)
        })
        .sum();
    // Kept in memory: one record, their fold, whose sums are the run's.
    assert_eq!(every.segments.count(), 30);
    let fold = every.segments.fold.as_ref().expect("fold");
    assert_eq!(fold.segment, 30);
    assert_eq!(fold.ops, segments.iter().map(|s| s.ops).sum::<u64>());
    let logical: u64 = segments.iter().map(|s| s.stores[0].logical_bytes).sum();
    assert_eq!(fold.stores[0].logical_bytes, logical);
    assert_eq!(fold.stores[0].disk, segments[29].stores[0].disk);
    let sum = every.summary.expect("summary");
    assert_eq!(sum.segments, 30);
    // Nor a list of per-second samples: the segments are its samples.
    assert!(every.samples.is_empty());
    assert_eq!(sum.stores["blobs"].logical_bytes, logical);
    assert_eq!(gets, sum.gets);
    assert_eq!(
        sum.stores["blobs"]
            .latency
            .get
            .as_ref()
            .expect("gets")
            .count,
        gets
    );
    // An interval longer than the run: the marks pass, one segment at the end.
    let (one, _) = run(
        &mut *blobs(30),
        Some(Window {
            interval: Duration::from_secs(3600),
            duration: None,
        }),
    );
    assert_eq!(one.segments.count(), 1);
    assert_eq!(one.segments.fold.expect("fold").mark, "end");
    assert_eq!(one.summary.expect("summary").puts, 30 * 4);
}

#[test]
fn the_run_ends_at_the_first_mark_after_its_duration() {
    // A stream far longer than the run: it ends at the first mark past zero
    // seconds, that is after the first batch, its writes committed.
    let (out, _) = run(
        &mut *blobs(1_000_000),
        Some(Window {
            interval: Duration::ZERO,
            duration: Some(Duration::ZERO),
        }),
    );
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(out.segments.count(), 1);
    assert_eq!(out.segments.fold.expect("fold").mark, "batch 1");
    assert_eq!(out.summary.expect("summary").puts, 4);
}

#[test]
fn a_run_keeps_its_segments_fold_and_sums_them_as_the_list_would() {
    use ledgerbench_driver::results::drift;
    use ledgerbench_driver::segment::{Live, OpHists, summarize_stores};
    let (out, seen) = run(&mut *blobs(40), None);
    assert!(out.error.is_none(), "{:?}", out.error);
    // What the harness keeps does not grow with the run: one record, and
    // each segment's seconds for the drift column.
    assert_eq!(out.segments.count(), 40);
    assert_eq!(out.segments.secs.len(), seen.len());
    let sum = out.summary.expect("summary");
    // The summary a list of every segment gives, but for the latency
    // (the run's histograms, not the segments').
    let names = ["blobs".to_string()];
    let segs: Vec<&[_]> = seen.iter().map(|s| s.stores.as_slice()).collect();
    let process: Vec<_> = seen.iter().map(|s| s.process_write_bytes).collect();
    let live = [sum.stores["blobs"].live_bytes.expect("scanned")];
    let (mut stores, total) = summarize_stores(
        &names,
        &segs,
        &process,
        &[OpHists::default()],
        Live::Counted(&live),
    )
    .expect("list summary");
    let mut kept = sum.stores["blobs"].clone();
    let listed = stores.get_mut("blobs").expect("blobs");
    (kept.latency, listed.latency) = (Default::default(), Default::default());
    (kept.final_entries, kept.content_sha256) = (None, None);
    assert_eq!(json(&kept), json(listed));
    assert_eq!(json(&sum.total), json(&total));
    assert_eq!(sum.segments, seen.len() as u32);
    let secs: Vec<f64> = seen.iter().map(|s| s.total_secs).collect();
    assert_eq!(json(&sum.drift), json(&drift(&secs, &out.samples)));
    assert!(sum.drift.is_some(), "40 segments give a drift column");
}

/// A record as its JSON, as a results file holds it.
fn json<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).expect("serialises")
}

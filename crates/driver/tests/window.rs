//! A soak's window: segments of at least an interval, each with its own
//! latencies that add up to the run's, and the run ended by time at a mark.

use std::time::Duration;

use ledgerbench_core::{KvBackend, KvStore};
use ledgerbench_driver::ops::{self, Window};
use ledgerbench_mem::{Mem, MemConfig, MemLog};

fn blobs(batches: u64) -> Box<dyn ops::OpSource> {
    let params = serde_json::json!({
        "batches": batches, "blobs_per_batch": 4, "value_bytes": 4096,
        "ttl_batches": 5, "reads_per_batch": 4,
    });
    ledgerbench_workloads::by_name("blobs", 7, params).expect("blobs")
}

fn run(src: &mut dyn ops::OpSource, window: Option<Window>) -> ops::OpsOutcome {
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
    ops::replay_with(src, (&stores, &[None]), &mut (), pacing)
}

#[test]
fn each_interval_is_a_segment_with_its_own_latencies() {
    // Without a window, a segment per batch, and no per-segment latencies.
    let plain = run(&mut *blobs(30), None);
    assert!(plain.error.is_none(), "{:?}", plain.error);
    assert_eq!(plain.segments.len(), 30);
    assert!(plain.segments[0].stores[0].latency.is_none());
    // An interval no batch fills: every mark ends one, as before, but each
    // segment now carries its own latencies, which add up to the run's.
    let every = run(
        &mut *blobs(30),
        Some(Window {
            interval: Duration::ZERO,
            duration: None,
        }),
    );
    assert_eq!(every.segments.len(), 30);
    let gets: u64 = every
        .segments
        .iter()
        .map(|s| {
            s.stores[0]
                .latency
                .as_ref()
                .and_then(|l| l.get.as_ref())
                .map_or(0, |g| g.count)
        })
        .sum();
    let sum = every.summary.expect("summary");
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
    let one = run(
        &mut *blobs(30),
        Some(Window {
            interval: Duration::from_secs(3600),
            duration: None,
        }),
    );
    assert_eq!(one.segments.len(), 1);
    assert_eq!(one.segments[0].mark, "end");
    assert_eq!(one.summary.expect("summary").puts, 30 * 4);
}

#[test]
fn the_run_ends_at_the_first_mark_after_its_duration() {
    // A stream far longer than the run: it ends at the first mark past zero
    // seconds, that is after the first batch, its writes committed.
    let out = run(
        &mut *blobs(1_000_000),
        Some(Window {
            interval: Duration::ZERO,
            duration: Some(Duration::ZERO),
        }),
    );
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(out.segments.len(), 1);
    assert_eq!(out.segments[0].mark, "batch 1");
    assert_eq!(out.summary.expect("summary").puts, 4);
}

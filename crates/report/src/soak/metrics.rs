//! The metrics a soak samples once an interval, in LittDB's panel order,
//! and the samples a percentile of one interval needs.

use ledgerbench_results::{Latency, SegmentRecord, StoreBatch};

pub(super) type PerStore = fn(&SegmentRecord, &StoreBatch) -> Option<f64>;

/// The latency of one kind of operation in an interval.
type OfKind = fn(&StoreBatch) -> Option<&Latency>;

/// A latency's figure at one quantile, microseconds.
type Figure = fn(&Latency) -> f64;

/// The percentile metrics: their quantile, the latency they are of and
/// its figure at that quantile.
const PERCENTILES: &[(&str, f64, OfKind, Figure)] = &[
    (
        "commit p99",
        0.99,
        |b| b.latency.as_ref()?.commit.as_ref(),
        |l| l.p99_us,
    ),
    (
        "get p50",
        0.5,
        |b| b.latency.as_ref()?.get.as_ref(),
        |l| l.p50_us,
    ),
    (
        "get p99",
        0.99,
        |b| b.latency.as_ref()?.get.as_ref(),
        |l| l.p99_us,
    ),
    (
        "get p99.9",
        0.999,
        |b| b.latency.as_ref()?.get.as_ref(),
        |l| l.p999_us,
    ),
];

/// Percentile metric `name` of an interval, in milliseconds, when the
/// interval held the samples it needs.
fn percentile(b: &StoreBatch, name: &str) -> Option<f64> {
    let &(_, q, of, us) = PERCENTILES.iter().find(|p| p.0 == name)?;
    let l = of(b)?;
    quantile(l, q, us(l))
}

/// The percentile metrics of store `i` that some judged interval held too
/// few samples for, in words.
pub(super) fn thin(judged: &[SegmentRecord], i: usize, store: &str) -> Vec<String> {
    let mut out = Vec::new();
    for &(metric, q, latency, _) in PERCENTILES {
        let counts: Vec<u64> = judged
            .iter()
            .filter_map(|s| latency(s.stores.get(i)?).map(|l| l.count))
            .collect();
        let (Some(lo), Some(hi)) = (counts.iter().min(), counts.iter().max()) else {
            continue;
        };
        if *lo < needed(q) {
            out.push(format!(
                "{store}: {metric} (needs {} samples an interval; they held {lo} to {hi})",
                needed(q)
            ));
        }
    }
    out
}
pub(super) type PerRun = fn(&SegmentRecord) -> Option<f64>;

fn rate(bytes: Option<u64>, s: &SegmentRecord) -> Option<f64> {
    bytes.map(|b| b as f64 / 1e6 / s.total_secs.max(1e-9))
}

/// Per-store metrics in LittDB's panel order: the footprint and the live
/// keys (where the engine counts them), what was written and how fast,
/// what was read and how fast, then the engine's shape and backlog.
pub(super) const STORE_METRICS: &[(&str, &str, PerStore)] = &[
    ("disk footprint", "MiB", |_, b| {
        Some(b.disk.allocated_bytes as f64 / 1_048_576.0)
    }),
    ("entries", "keys", |_, b| b.engine.entries.map(|e| e as f64)),
    ("write throughput", "MB/s", |s, b| {
        rate(Some(b.logical_bytes), s)
    }),
    ("device writes", "MB/s", |s, b| {
        rate(b.device_write_bytes, s)
    }),
    ("commit p99", "ms", |_, b| percentile(b, "commit p99")),
    ("device reads", "MB/s", |s, b| rate(b.device_read_bytes, s)),
    ("get p50", "ms", |_, b| percentile(b, "get p50")),
    ("get p99", "ms", |_, b| percentile(b, "get p99")),
    ("get p99.9", "ms", |_, b| percentile(b, "get p99.9")),
    ("L0 files", "files", |_, b| {
        b.engine
            .files_per_level
            .as_ref()
            .and_then(|l| l.first())
            .map(|&f| f as f64)
    }),
    ("tree depth", "levels", |_, b| {
        b.engine.tree_depth.map(f64::from)
    }),
    ("pending compaction", "MiB", |_, b| {
        b.engine
            .pending_compaction_bytes
            .map(|p| p as f64 / 1_048_576.0)
    }),
];

/// The process's metrics: operations, memory by kind, the harness's own.
pub(super) const RUN_METRICS: &[(&str, &str, PerRun)] = &[
    ("operations", "ops/s", |s| {
        Some(s.ops as f64 / s.total_secs.max(1e-9))
    }),
    ("RSS anonymous", "MiB", |s| {
        s.memory.as_ref()?.rss_anon_bytes.map(mib)
    }),
    ("RSS file-backed", "MiB", |s| {
        s.memory.as_ref()?.rss_file_bytes.map(mib)
    }),
    ("page cache (cgroup)", "MiB", |s| {
        s.memory.as_ref()?.cgroup_page_cache_bytes.map(mib)
    }),
    ("harness heap", "MiB", |s| {
        s.memory.as_ref()?.harness_heap_bytes.map(mib)
    }),
];

/// Samples beyond a quantile an interval must hold for its value to be
/// kept: with fewer, a p99 is the interval's largest few and moves with
/// the count, not the engine.
pub const BEYOND: u64 = 10;

/// Samples an interval needs for quantile `q`: [`BEYOND`] past it.
pub fn needed(q: f64) -> u64 {
    (BEYOND as f64 / (1.0 - q)).round() as u64
}

/// Quantile `q` of an interval (`us` microseconds of `l`) in
/// milliseconds, when the interval held [`needed`] samples.
fn quantile(l: &Latency, q: f64, us: f64) -> Option<f64> {
    (l.count >= needed(q)).then_some(us / 1e3)
}

fn mib(b: u64) -> f64 {
    b as f64 / 1_048_576.0
}

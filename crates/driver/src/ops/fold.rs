//! A soak keeps no list of its segments: each is written out as it closes
//! (the run's `segments.jsonl`) and folded here into one running record,
//! so the harness's memory does not grow with the run's length, and the
//! run's totals come from that record as from a list.

use crate::results::{SegmentRecord, StoreBatch};

/// Adds `rec` into `acc`: counts, times and bytes summed; the state after
/// it (engine counters, disk, memory, mark, number) taken from `rec`; no
/// latency (the run's histograms hold the totals).
pub(super) fn fold(acc: &mut Option<SegmentRecord>, rec: SegmentRecord) {
    let Some(a) = acc else {
        let mut rec = rec;
        for s in &mut rec.stores {
            s.latency = None;
        }
        *acc = Some(rec);
        return;
    };
    a.segment = rec.segment;
    a.mark = rec.mark;
    a.ops += rec.ops;
    a.gets += rec.gets;
    a.source_secs = add_f(a.source_secs, rec.source_secs);
    a.total_secs += rec.total_secs;
    a.process_write_bytes = add(a.process_write_bytes, rec.process_write_bytes);
    a.memory = rec.memory;
    for (s, r) in a.stores.iter_mut().zip(rec.stores) {
        add_store(s, r);
    }
}

fn add_store(s: &mut StoreBatch, r: StoreBatch) {
    s.entries += r.entries;
    s.logical_bytes += r.logical_bytes;
    s.raw_bytes += r.raw_bytes;
    s.write_secs += r.write_secs;
    s.flush_secs += r.flush_secs;
    s.compact_secs = add_some(s.compact_secs, r.compact_secs);
    s.flush_bytes = add(s.flush_bytes, r.flush_bytes);
    s.compact_read_bytes = add(s.compact_read_bytes, r.compact_read_bytes);
    s.compact_write_bytes = add(s.compact_write_bytes, r.compact_write_bytes);
    s.engine_write_bytes = add(s.engine_write_bytes, r.engine_write_bytes);
    s.device_write_bytes = add(s.device_write_bytes, r.device_write_bytes);
    s.device_read_bytes = add(s.device_read_bytes, r.device_read_bytes);
    s.sync_secs = add_f(s.sync_secs, r.sync_secs);
    s.engine = r.engine;
    s.disk = r.disk;
}

/// A sum of counters, absent once any segment lacked it, as the totals
/// of a list of segments are: a meter that failed once has no total.
fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    a.zip(b).map(|(a, b)| a + b)
}

/// The same for times.
fn add_f(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    a.zip(b).map(|(a, b)| a + b)
}

/// Compaction time: the sum of the segments that compacted, as the list's
/// totals take it.
fn add_some(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    }
}

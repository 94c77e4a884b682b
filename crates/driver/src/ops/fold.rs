//! A replay keeps no list of its segments: each goes to the observer as it
//! closes (a run's `segments.jsonl`) and is folded here into one running
//! record, so the harness's memory does not grow with the run's length
//! (a record is about 3 KB, a 10x mixgraph run closes a thousand), and the
//! run's totals come from that record as from a list.

use crate::results::{SegmentRecord, StoreBatch};

/// What a replay keeps of its segments once each has gone to the observer.
#[derive(Debug, Default)]
pub struct Kept {
    /// Their fold: counts, times and bytes summed, the state (engine
    /// counters, disk, memory, mark, number) after the last; no latency
    /// (the run's histograms hold it). `None` before the first closes.
    pub fold: Option<SegmentRecord>,
    /// Each segment's seconds, in order: the drift column compares the
    /// first quarter's with the last's (8 bytes a segment).
    pub secs: Vec<f64>,
    /// Each store's first and last compaction seconds, as the summary
    /// reports them, which a sum cannot give back.
    compactions: Vec<Option<(f64, f64)>>,
}

impl Kept {
    /// Segments kept so far: the number the next one closes after.
    pub fn count(&self) -> u32 {
        self.secs.len() as u32
    }

    /// Folds in `rec`, which the observer has seen.
    pub(super) fn keep(&mut self, rec: SegmentRecord) {
        self.secs.push(rec.total_secs);
        self.compactions.resize(rec.stores.len(), None);
        for (c, s) in self.compactions.iter_mut().zip(&rec.stores) {
            if let Some(t) = s.compact_secs {
                *c = Some(c.map_or((t, t), |(first, _)| (first, t)));
            }
        }
        fold(&mut self.fold, rec);
    }

    /// Store `i`'s first and last compaction seconds; `None` when none ran.
    pub fn compact_first_last(&self, i: usize) -> Option<(f64, f64)> {
        self.compactions.get(i).copied().flatten()
    }
}

/// Adds `rec` into `acc`: counts, times and bytes summed; the state after
/// it (engine counters, disk, memory, mark, number) taken from `rec`; no
/// latency (the run's histograms hold the totals).
fn fold(acc: &mut Option<SegmentRecord>, rec: SegmentRecord) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use ledgerbench_core::EngineStats;

    fn seg(n: u32, compact: Option<f64>) -> SegmentRecord {
        SegmentRecord {
            segment: n,
            mark: format!("m{n}"),
            ops: 10,
            gets: 4,
            source_secs: Some(0.5),
            total_secs: f64::from(n),
            process_write_bytes: Some(100),
            memory: None,
            stores: vec![StoreBatch {
                store: "s".into(),
                entries: 6,
                logical_bytes: 60,
                raw_bytes: 60,
                write_secs: 0.25,
                flush_secs: 0.0,
                compact_secs: compact,
                flush_bytes: None,
                compact_read_bytes: None,
                compact_write_bytes: None,
                engine_write_bytes: Some(70),
                device_write_bytes: (n != 2).then_some(80),
                device_read_bytes: None,
                sync_secs: None,
                engine: EngineStats::default(),
                disk: Default::default(),
                latency: None,
            }],
        }
    }

    #[test]
    fn kept_sums_the_segments_and_remembers_what_a_sum_loses() {
        let mut k = Kept::default();
        assert_eq!((k.count(), k.compact_first_last(0)), (0, None));
        for (n, c) in [(1, None), (2, Some(2.0)), (3, None), (4, Some(5.0))] {
            k.keep(seg(n, c));
        }
        assert_eq!(k.count(), 4);
        assert_eq!(k.secs, [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(k.compact_first_last(0), Some((2.0, 5.0)));
        let f = k.fold.expect("fold");
        assert_eq!(
            (f.segment, f.mark.as_str(), f.ops, f.gets),
            (4, "m4", 40, 16)
        );
        assert_eq!((f.total_secs, f.source_secs), (10.0, Some(2.0)));
        assert_eq!(f.process_write_bytes, Some(400));
        let s = &f.stores[0];
        assert_eq!((s.entries, s.logical_bytes, s.write_secs), (24, 240, 1.0));
        assert_eq!(s.compact_secs, Some(7.0));
        assert_eq!(s.engine_write_bytes, Some(280));
        // A meter that failed once (segment 2's device) has no total.
        assert_eq!(s.device_write_bytes, None);
    }
}

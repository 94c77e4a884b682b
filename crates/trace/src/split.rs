//! One client thread's share of an operation stream, for replaying a trace
//! (or any stream) with several threads at once.
//!
//! The stream is split by key hash: a commit group (the puts and deletes up
//! to a commit) goes to the thread its first key hashes to, a get or a scan
//! to the thread of its key. A get of a group's first key therefore keeps
//! its place after that group; a get of another key of the group may run on
//! another thread, before the group commits. Marks are barriers (the driver
//! waits for every thread at each), so a get always sees what was written
//! before the previous mark: traces whose reads look back past a mark (the
//! Stellar trace's lookups of earlier batches) verify exactly. Flushes and
//! compactions go to thread 0 alone (one flush per flush in the trace, not
//! one per thread). Every thread reads the whole stream and
//! keeps its share: the reading is the harness's cost, measured as
//! `source_secs` like any other.

use crate::queue::{OwnedOp, Refill};
use crate::{Header, Op, OpSource, SourceError};

/// How a stream is split between threads, as results name it.
pub const SPLIT: &str = "key-hash";

/// Thread `thread` of `threads`' share of `inner`.
pub struct Split<S> {
    inner: S,
    thread: u64,
    threads: u64,
    /// Whether the open commit group (puts since the last commit) is ours;
    /// `None` when no group is open.
    group: Option<bool>,
}

impl<S: OpSource> Split<S> {
    /// Thread `thread` of `threads`; `threads` is at least 1.
    pub fn new(inner: S, thread: u64, threads: u64) -> Self {
        Self {
            inner,
            thread,
            threads: threads.max(1),
            group: None,
        }
    }
}

/// Whether `key` is thread `thread` of `threads`': FNV-1a of the key,
/// modulo threads (stable across builds and machines, so the split is
/// reproducible).
fn ours(key: &[u8], thread: u64, threads: u64) -> bool {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    h % threads == thread
}

/// Operations read from the inner stream per refill at most, so a long
/// segment does not sit in memory whole.
const CHUNK: usize = 4096;

impl<S: OpSource> Refill for Split<S> {
    fn header(&self) -> &Header {
        self.inner.header()
    }

    fn progress(&self) -> Option<(u64, u64)> {
        self.inner.progress()
    }

    fn refill(&mut self, out: &mut Vec<OwnedOp>) -> Result<bool, SourceError> {
        let (thread, threads) = (self.thread, self.threads);
        for _ in 0..CHUNK {
            let group = &mut self.group;
            let Some(op) = self
                .inner
                .next_op()
                .map_err(|e| Box::new(e) as SourceError)?
            else {
                return Ok(!out.is_empty());
            };
            let keep = match &op {
                // A range delete reaches every thread's keys in the store
                // whichever thread sends it: it goes with its start key.
                Op::Put { key, .. }
                | Op::Delete { key, .. }
                | Op::DeleteRange { start: key, .. } => {
                    *group.get_or_insert_with(|| ours(key, thread, threads))
                }
                Op::Commit { .. } => group.take().unwrap_or(false),
                // A read inside an open group stays with the group, so it
                // keeps its place among the group's writes.
                Op::Get { key, .. } => group.unwrap_or_else(|| ours(key, thread, threads)),
                Op::Scan { start, .. } => group.unwrap_or_else(|| ours(start, thread, threads)),
                Op::Flush { .. } | Op::Compact { .. } => thread == 0,
                // Every thread keeps the clock, to pace its own share.
                Op::Mark { .. } | Op::At { .. } => true,
            };
            if keep {
                let mark = matches!(op, Op::Mark { .. });
                out.push(OwnedOp::from(&op));
                if mark {
                    break;
                }
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::Queued;

    struct Fixed(Header, Vec<OwnedOp>, usize);

    impl OpSource for Fixed {
        fn header(&self) -> &Header {
            &self.0
        }
        fn next_op(&mut self) -> Result<Option<Op<'_>>, crate::TraceError> {
            self.2 += 1;
            Ok(self.1.get(self.2 - 1).map(OwnedOp::as_op))
        }
    }

    fn stream() -> Vec<OwnedOp> {
        let mut ops = Vec::new();
        for i in 0..200u32 {
            ops.push(OwnedOp::Put(0, i.to_be_bytes().to_vec(), vec![1]));
            ops.push(OwnedOp::Put(0, (i + 1000).to_be_bytes().to_vec(), vec![2]));
            ops.push(OwnedOp::Commit(false));
            ops.push(OwnedOp::Get(
                0,
                i.to_be_bytes().to_vec(),
                crate::Expect::Present,
            ));
        }
        ops.push(OwnedOp::Flush(None));
        ops.push(OwnedOp::Mark("half".into()));
        ops
    }

    fn share(thread: u64, threads: u64) -> Vec<OwnedOp> {
        let h = Header {
            workload: "t".into(),
            seed: 1,
            stores: vec!["s".into()],
            source: serde_json::Value::Null,
        };
        let mut q = Queued::new(Split::new(Fixed(h, stream(), 0), thread, threads));
        let mut out = Vec::new();
        while let Some(op) = q.next_op().expect("in memory") {
            out.push(OwnedOp::from(&op));
        }
        out
    }

    #[test]
    fn shares_partition_the_stream_keep_groups_whole_and_marks_everywhere() {
        let all = stream();
        let shares: Vec<Vec<OwnedOp>> = (0..3).map(|t| share(t, 3)).collect();
        let count = |ops: &[OwnedOp], f: fn(&OwnedOp) -> bool| ops.iter().filter(|o| f(o)).count();
        let is_put = |o: &OwnedOp| matches!(o, OwnedOp::Put(..));
        let is_get = |o: &OwnedOp| matches!(o, OwnedOp::Get(..));
        let is_commit = |o: &OwnedOp| matches!(o, OwnedOp::Commit(..));
        for f in [is_put, is_get, is_commit] {
            let sum: usize = shares.iter().map(|s| count(s, f)).sum();
            assert_eq!(sum, count(&all, f), "every operation on exactly one thread");
        }
        for s in &shares {
            assert!(count(s, is_get) > 0, "each thread gets a share");
            assert_eq!(
                count(s, is_put),
                2 * count(s, is_commit),
                "groups stay whole"
            );
            assert!(matches!(s.last(), Some(OwnedOp::Mark(l)) if l == "half"));
        }
        let flushes = |s: &[OwnedOp]| count(s, |o| matches!(o, OwnedOp::Flush(_)));
        assert_eq!(flushes(&shares[0]), 1);
        assert_eq!(flushes(&shares[1]) + flushes(&shares[2]), 0);
        assert_eq!(
            share(1, 3).len(),
            shares[1].len(),
            "the same share every time"
        );
        assert_eq!(share(0, 1).len(), all.len(), "one thread keeps everything");
    }
}

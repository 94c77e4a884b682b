//! Generators as operation sources: a generator fills a queue of owned
//! operations a chunk at a time, and [`Queued`] hands them out as [`Op`]s.

use crate::{Expect, Header, Op, OpSource, TraceError, ValueRef};

/// An operation that owns its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnedOp {
    /// A put of literal bytes.
    Put(u8, Vec<u8>, Vec<u8>),
    /// A put of a generated value (length, seed).
    PutGenerated(u8, Vec<u8>, u32, u64),
    /// A delete.
    Delete(u8, Vec<u8>),
    /// A delete of every key from the first (included) to the second.
    DeleteRange(u8, Vec<u8>, Vec<u8>),
    /// A get and what it must return.
    Get(u8, Vec<u8>, Expect),
    /// A scan from a key (first) to before another (second; empty: no
    /// bound), of at most this many entries.
    Scan(u8, Vec<u8>, Vec<u8>, u32),
    /// When the operations that follow were recorded (see [`Op::At`]).
    At(u64),
    /// Commit pending writes (sync or not).
    Commit(bool),
    /// Flush a store, or all.
    Flush(Option<u8>),
    /// Compact a store, or all.
    Compact(Option<u8>),
    /// End of a segment.
    Mark(String),
}

impl OwnedOp {
    /// The borrowed form.
    pub fn as_op(&self) -> Op<'_> {
        match self {
            OwnedOp::Put(s, k, v) => Op::Put {
                store: *s,
                key: k,
                value: ValueRef::Bytes(v),
            },
            OwnedOp::PutGenerated(s, k, len, seed) => Op::Put {
                store: *s,
                key: k,
                value: ValueRef::Generated {
                    len: *len,
                    seed: *seed,
                },
            },
            OwnedOp::Delete(s, k) => Op::Delete { store: *s, key: k },
            OwnedOp::DeleteRange(s, a, b) => Op::DeleteRange {
                store: *s,
                start: a,
                end: b,
            },
            OwnedOp::Get(s, k, e) => Op::Get {
                store: *s,
                key: k,
                expect: *e,
            },
            OwnedOp::Scan(s, k, e, n) => Op::Scan {
                store: *s,
                start: k,
                end: e,
                limit: *n,
            },
            OwnedOp::At(micros) => Op::At { micros: *micros },
            OwnedOp::Commit(sync) => Op::Commit { sync: *sync },
            OwnedOp::Flush(s) => Op::Flush { store: *s },
            OwnedOp::Compact(s) => Op::Compact { store: *s },
            OwnedOp::Mark(l) => Op::Mark { label: l },
        }
    }
}

/// The owned copy of an operation.
impl From<&Op<'_>> for OwnedOp {
    fn from(op: &Op<'_>) -> OwnedOp {
        match *op {
            Op::Put {
                store,
                key,
                value: ValueRef::Bytes(v),
            } => OwnedOp::Put(store, key.to_vec(), v.to_vec()),
            Op::Put {
                store,
                key,
                value: ValueRef::Generated { len, seed },
            } => OwnedOp::PutGenerated(store, key.to_vec(), len, seed),
            Op::Delete { store, key } => OwnedOp::Delete(store, key.to_vec()),
            Op::DeleteRange { store, start, end } => {
                OwnedOp::DeleteRange(store, start.to_vec(), end.to_vec())
            }
            Op::Get { store, key, expect } => OwnedOp::Get(store, key.to_vec(), expect),
            Op::Scan {
                store,
                start,
                end,
                limit,
            } => OwnedOp::Scan(store, start.to_vec(), end.to_vec(), limit),
            Op::At { micros } => OwnedOp::At(micros),
            Op::Commit { sync } => OwnedOp::Commit(sync),
            Op::Flush { store } => OwnedOp::Flush(store),
            Op::Compact { store } => OwnedOp::Compact(store),
            Op::Mark { label } => OwnedOp::Mark(label.to_string()),
        }
    }
}

/// A generator that produces its operations a chunk at a time.
pub trait Refill {
    /// What the operations describe.
    fn header(&self) -> &Header;
    /// Appends the next chunk to `out` (empty on entry); false at the end.
    /// A failure keeps its type (an importer's, the driver's) as the
    /// source of the [`TraceError::Source`] it becomes.
    fn refill(&mut self, out: &mut Vec<OwnedOp>) -> Result<bool, crate::SourceError>;
    /// Work done and in all, when known (see [`OpSource::progress`]).
    fn progress(&self) -> Option<(u64, u64)> {
        None
    }
}

/// Any [`Refill`] generator as an [`OpSource`], in bounded memory: one chunk at a time.
pub struct Queued<G> {
    gen_: G,
    queue: Vec<OwnedOp>,
    pos: usize,
}

impl<G: Refill> Queued<G> {
    /// Wraps a generator.
    pub fn new(gen_: G) -> Self {
        Self {
            gen_,
            queue: Vec::new(),
            pos: 0,
        }
    }

    /// The generator.
    pub fn inner(&self) -> &G {
        &self.gen_
    }
}

impl<G: Refill> OpSource for Queued<G> {
    fn header(&self) -> &Header {
        self.gen_.header()
    }

    fn progress(&self) -> Option<(u64, u64)> {
        self.gen_.progress()
    }

    fn next_op(&mut self) -> Result<Option<Op<'_>>, TraceError> {
        while self.pos == self.queue.len() {
            self.queue.clear();
            self.pos = 0;
            if !self
                .gen_
                .refill(&mut self.queue)
                .map_err(TraceError::Source)?
            {
                return Ok(None);
            }
        }
        self.pos += 1;
        Ok(Some(self.queue[self.pos - 1].as_op()))
    }
}

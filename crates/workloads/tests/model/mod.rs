//! A plain in-memory model of a store that streams are checked against.

use std::collections::{BTreeMap, HashMap};

use ledgerbench_trace::{Op, OpSource, ValueRef, generate};

/// What a pending write does to its key.
#[derive(Clone)]
enum W {
    Put(Vec<u8>),
    Delete,
    /// Every key from this one to the given end (excluded).
    DeleteTo(Vec<u8>),
}

/// Writes waiting for a commit: (key, what is done to it), per store.
type Pending = Vec<Vec<(Vec<u8>, W)>>;

/// Stores as sorted maps, and per stream its uncommitted writes.
pub struct Model {
    db: Vec<BTreeMap<Vec<u8>, Vec<u8>>>,
    pending: Vec<Pending>,
    scratch: Vec<u8>,
    /// Operations by kind.
    pub counts: HashMap<&'static str, u64>,
    /// Failed expectations.
    pub bad: u64,
}

impl Model {
    /// `stores` stores, written by `streams` streams.
    pub fn new(stores: usize, streams: usize) -> Self {
        Self {
            db: vec![BTreeMap::new(); stores],
            pending: vec![vec![Vec::new(); stores]; streams],
            scratch: Vec::new(),
            counts: HashMap::new(),
            bad: 0,
        }
    }

    /// Applies stream `s`'s `op`, as a store would; returns its kind.
    pub fn apply(&mut self, s: usize, op: Op<'_>) -> &'static str {
        let pending = &mut self.pending[s];
        let kind = match op {
            Op::Put { store, key, value } => {
                let v = match value {
                    ValueRef::Bytes(b) => b.to_vec(),
                    ValueRef::Generated { len, seed } => {
                        let mut v = Vec::new();
                        generate(len, seed, &mut v);
                        v
                    }
                };
                pending[store as usize].push((key.to_vec(), W::Put(v)));
                "put"
            }
            Op::Delete { store, key } => {
                pending[store as usize].push((key.to_vec(), W::Delete));
                "delete"
            }
            Op::DeleteRange { store, start, end } => {
                pending[store as usize].push((start.to_vec(), W::DeleteTo(end.to_vec())));
                "delete-range"
            }
            Op::Get { store, key, expect } => {
                let got = self.db[store as usize].get(key).map(Vec::as_slice);
                if !expect.check(got, &mut self.scratch) {
                    self.bad += 1;
                }
                "get"
            }
            Op::Scan { .. } => "scan",
            Op::Commit { .. } => {
                for (st, p) in pending.iter_mut().enumerate() {
                    for (k, w) in p.drain(..) {
                        match w {
                            W::Put(v) => {
                                self.db[st].insert(k, v);
                            }
                            W::Delete => {
                                self.db[st].remove(&k);
                            }
                            W::DeleteTo(end) => {
                                self.db[st].retain(|x, _| *x < k || *x >= end);
                            }
                        }
                    }
                }
                "commit"
            }
            Op::Flush { .. } => "flush",
            Op::Compact { .. } => "compact",
            Op::Mark { .. } => "mark",
            Op::At { .. } => "at",
        };
        *self.counts.entry(kind).or_insert(0) += 1;
        kind
    }

    /// Whether store `store` holds `key` (each test binary compiles this
    /// module; only the thread tests ask).
    #[allow(dead_code)]
    pub fn has(&self, store: usize, key: &[u8]) -> bool {
        self.db[store].contains_key(key)
    }

    /// Whether every stream has committed all it wrote.
    pub fn committed(&self) -> bool {
        self.pending.iter().flatten().all(Vec::is_empty)
    }
}

/// Runs a stream against the model and returns (op counts by kind, failed
/// expectations).
pub fn play(src: &mut dyn OpSource) -> (HashMap<&'static str, u64>, u64) {
    let mut m = Model::new(src.header().stores.len(), 1);
    while let Some(op) = src.next_op().expect("op") {
        m.apply(0, op);
    }
    assert!(m.committed(), "a stream ends committed");
    (m.counts, m.bad)
}

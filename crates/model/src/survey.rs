//! One pass over a trace, in memory bounded whatever its length: per
//! store, counts of every operation, samples of sizes and ages, the order
//! of inserts, and each sampled key's history ([`crate::sample`]).
//! [`crate::finish`] turns what it gathered into a [`crate::Workload`].

use std::collections::HashMap;

use ledgerbench_trace::{Expect, Op, OpSource, TraceError, ValueRef};

use crate::sample::{KeySample, Reservoir};

/// How a survey samples.
#[derive(Debug, Clone)]
pub struct Options {
    /// Keys a store's key sample holds at most (each a few dozen bytes).
    pub keys: usize,
    /// Values a reservoir holds (sizes, ages, gaps).
    pub values: usize,
    /// Seed of the reservoirs.
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            keys: 1 << 20,
            values: 20_000,
            seed: 46,
        }
    }
}

/// The prefix lengths whose insert order is measured.
pub const PREFIXES: [u32; 4] = [1, 2, 4, 8];

/// Distinct prefixes a prefix length is followed for; past it, that
/// length's order is not stated (a prefix that long is most of the key).
const PREFIX_CAP: usize = 1 << 16;

/// What a sampled key went through.
#[derive(Debug, Default, Clone)]
pub struct KeyState {
    /// Accesses: puts, deletes, gets.
    pub count: u64,
    /// The store's operation index of its first put.
    pub first_write: Option<u64>,
    /// ... of its last put.
    pub last_write: Option<u64>,
    /// Present now (put and not deleted since).
    pub live: bool,
    /// Read before any write.
    pub read_unwritten: bool,
}

/// Counts of a store's operations.
#[derive(Debug, Default, Clone)]
pub struct Counts {
    /// Puts.
    pub puts: u64,
    /// Deletes.
    pub deletes: u64,
    /// Range deletes.
    pub delete_ranges: u64,
    /// Gets.
    pub gets: u64,
    /// Gets whose recorded answer was a value.
    pub gets_found: u64,
    /// Gets whose recorded answer was absence.
    pub gets_missing: u64,
    /// Scans.
    pub scans: u64,
    /// Of the sampled keys' puts: of a key not present.
    pub sampled_inserts: u64,
    /// Of the sampled keys' puts: of a key present.
    pub sampled_overwrites: u64,
    /// Of the sampled keys' unchecked gets: found by the key's history.
    pub sampled_found: u64,
    /// ... absent by it (deleted, or never written and the trace says so).
    pub sampled_missing: u64,
    /// ... of a key never written before.
    pub sampled_unwritten: u64,
    /// Puts above every earlier key.
    pub ascending: u64,
}

/// One store's survey.
pub struct StoreSurvey {
    /// Its name.
    pub name: String,
    /// Its operations so far (puts, deletes, range deletes, gets, scans).
    pub ops: u64,
    /// What they were.
    pub counts: Counts,
    /// Key sizes.
    pub key_sizes: Reservoir,
    /// Value sizes of puts.
    pub value_sizes: Reservoir,
    /// Limits of scans.
    pub scan_lengths: Reservoir,
    /// Operations between a sampled key's last write and a read of it.
    pub read_ages: Reservoir,
    /// Operations between a sampled key's first write and its delete.
    pub lifetimes: Reservoir,
    /// The sampled keys.
    pub keys: KeySample<KeyState>,
    /// Keys live at a `load` mark (the initial state a generator wrote
    /// before its timed phase), estimated from the sample.
    pub loaded_keys: u64,
    /// Operations before that mark, not counted in the mix.
    pub load_ops: u64,
    max_key: Option<Vec<u8>>,
    /// Per prefix length: the largest key of each prefix and the puts
    /// above it, or `None` once past [`PREFIX_CAP`] prefixes.
    prefixes: Vec<Option<PrefixMaxima>>,
}

/// The largest key of each prefix, and the puts above it.
type PrefixMaxima = (HashMap<Vec<u8>, Vec<u8>>, u64);

impl StoreSurvey {
    fn new(name: &str, opts: &Options, index: u64) -> Self {
        let r = |k: u64| Reservoir::new(opts.values, ledgerbench_rng::stream(opts.seed, index, k));
        Self {
            name: name.to_string(),
            ops: 0,
            counts: Counts::default(),
            key_sizes: r(0),
            value_sizes: r(1),
            scan_lengths: r(2),
            read_ages: r(3),
            lifetimes: r(4),
            keys: KeySample::new(opts.keys),
            loaded_keys: 0,
            load_ops: 0,
            max_key: None,
            prefixes: PREFIXES.iter().map(|_| Some((HashMap::new(), 0))).collect(),
        }
    }

    /// Ends the initial state (a `load` mark): what it wrote is kept as
    /// the store's initial keys, and the mix counts from here.
    fn end_load(&mut self) {
        let live = self.keys.iter().filter(|(_, k)| k.live).count();
        self.loaded_keys = (live as f64 * self.keys.scale()).round() as u64;
        self.load_ops = self.ops;
        self.counts = Counts::default();
    }

    /// One operation on this store; true for a write (a put or a delete).
    fn apply(&mut self, op: Op<'_>) -> bool {
        let write = match op {
            Op::Put { key, value, .. } => {
                let len = match value {
                    ValueRef::Bytes(b) => b.len() as u32,
                    ValueRef::Generated { len, .. } => len,
                };
                self.put(key, len);
                true
            }
            Op::Delete { key, .. } => {
                self.delete(key);
                true
            }
            Op::DeleteRange { .. } => {
                self.counts.delete_ranges += 1;
                true
            }
            Op::Get { key, expect, .. } => {
                self.get(key, expect);
                false
            }
            Op::Scan { limit, .. } => {
                self.counts.scans += 1;
                self.scan_lengths.push(f64::from(limit));
                false
            }
            _ => false,
        };
        self.ops += 1;
        write
    }

    /// Puts above every earlier key of their prefix, per [`PREFIXES`]
    /// length (`None` where not followed).
    pub fn prefix_ascending(&self) -> Vec<Option<u64>> {
        self.prefixes
            .iter()
            .map(|p| p.as_ref().map(|(_, n)| *n))
            .collect()
    }

    fn put(&mut self, key: &[u8], len: u32) {
        let at = self.ops;
        self.counts.puts += 1;
        self.key_sizes.push(key.len() as f64);
        self.value_sizes.push(f64::from(len));
        if self.max_key.as_deref().is_none_or(|m| key > m) {
            self.counts.ascending += 1;
            self.max_key = Some(key.to_vec());
        }
        for (slot, &bytes) in self.prefixes.iter_mut().zip(&PREFIXES) {
            let Some((map, above)) = slot else { continue };
            let p = &key[..key.len().min(bytes as usize)];
            let full = map.len() >= PREFIX_CAP;
            let stop = match map.get_mut(p) {
                Some(m) => {
                    if key > m.as_slice() {
                        *above += 1;
                        *m = key.to_vec();
                    }
                    false
                }
                None if full => true,
                None => {
                    *above += 1;
                    map.insert(p.to_vec(), key.to_vec());
                    false
                }
            };
            if stop {
                *slot = None;
            }
        }
        if let Some(k) = self.keys.get(key) {
            k.count += 1;
            if k.live {
                self.counts.sampled_overwrites += 1;
            } else {
                self.counts.sampled_inserts += 1;
            }
            k.live = true;
            k.first_write.get_or_insert(at);
            k.last_write = Some(at);
        }
    }

    fn delete(&mut self, key: &[u8]) {
        let at = self.ops;
        self.counts.deletes += 1;
        self.key_sizes.push(key.len() as f64);
        if let Some(k) = self.keys.get(key) {
            k.count += 1;
            if let (true, Some(first)) = (k.live, k.first_write) {
                self.lifetimes.push((at - first) as f64);
            }
            k.live = false;
        }
    }

    fn get(&mut self, key: &[u8], expect: Expect) {
        let at = self.ops;
        self.counts.gets += 1;
        self.key_sizes.push(key.len() as f64);
        match expect {
            Expect::Absent => self.counts.gets_missing += 1,
            Expect::Unchecked => {}
            _ => self.counts.gets_found += 1,
        }
        let Some(k) = self.keys.get(key) else { return };
        k.count += 1;
        if let Some(w) = k.last_write {
            self.read_ages.push((at - w) as f64);
        }
        if expect == Expect::Unchecked {
            match (k.live, k.last_write) {
                (true, _) => self.counts.sampled_found += 1,
                (false, Some(_)) => self.counts.sampled_missing += 1,
                (false, None) => {
                    k.read_unwritten = true;
                    self.counts.sampled_unwritten += 1;
                }
            }
        }
    }
}

/// What a survey gathered: each store's, and the commits'.
pub struct Survey {
    /// The trace's workload name.
    pub workload: String,
    /// Per store.
    pub stores: Vec<StoreSurvey>,
    /// Writes per commit.
    pub commit_writes: Reservoir,
    /// Microseconds between commits (traces with times).
    pub commit_gaps: Reservoir,
    /// The application's flushes, after the initial state.
    pub flushes: Upkeep,
    /// Its full manual compactions, after the initial state.
    pub compactions: Upkeep,
    /// Operations read.
    pub ops: u64,
}

impl Survey {
    /// What came before the initial state's `load` mark is the state, not
    /// the workload: the commits and upkeep start again after it.
    fn end_load(&mut self, opts: &Options) {
        self.stores.iter_mut().for_each(StoreSurvey::end_load);
        self.commit_writes = Reservoir::new(opts.values, ledgerbench_rng::stream(opts.seed, 99, 2));
        self.commit_gaps = Reservoir::new(opts.values, ledgerbench_rng::stream(opts.seed, 99, 3));
        self.flushes = Upkeep::default();
        self.compactions = Upkeep::default();
    }
}

/// Reads `src` to its end, calling `progress` with the operations read
/// every million.
pub fn survey(
    src: &mut dyn OpSource,
    opts: &Options,
    progress: &mut dyn FnMut(u64),
) -> Result<Survey, TraceError> {
    let header = src.header().clone();
    let mut s = Survey {
        workload: header.workload.clone(),
        stores: (0..)
            .zip(&header.stores)
            .map(|(i, n)| StoreSurvey::new(n, opts, i))
            .collect(),
        commit_writes: Reservoir::new(opts.values, ledgerbench_rng::stream(opts.seed, 99, 0)),
        commit_gaps: Reservoir::new(opts.values, ledgerbench_rng::stream(opts.seed, 99, 1)),
        flushes: Upkeep::default(),
        compactions: Upkeep::default(),
        ops: 0,
    };
    let mut writes = 0u64;
    let (mut pending, mut now, mut last_commit) = (0u64, None::<u64>, None::<u64>);
    let mut loaded = false;
    while let Some(op) = src.next_op()? {
        s.ops += 1;
        if s.ops.is_multiple_of(1_000_000) {
            progress(s.ops);
        }
        let store = match op {
            Op::Put { store, .. }
            | Op::Delete { store, .. }
            | Op::DeleteRange { store, .. }
            | Op::Get { store, .. }
            | Op::Scan { store, .. } => store,
            Op::Commit { .. } => {
                s.commit_writes.push(pending as f64);
                pending = 0;
                if let (Some(t), Some(l)) = (now, last_commit) {
                    s.commit_gaps.push(t.saturating_sub(l) as f64);
                }
                last_commit = now.or(last_commit);
                continue;
            }
            Op::At { micros } => {
                now = Some(micros);
                continue;
            }
            // Before a `load` mark is the initial state (a generator's
            // load phase), apart from the mix; the first such mark only.
            Op::Mark { label } if label == "load" && !loaded => {
                loaded = true;
                s.end_load(opts);
                (pending, writes) = (0, 0);
                continue;
            }
            Op::Flush { .. } => {
                s.flushes.at(writes);
                continue;
            }
            Op::Compact { .. } => {
                s.compactions.at(writes);
                continue;
            }
            Op::Mark { .. } => continue,
        };
        let Some(st) = s.stores.get_mut(usize::from(store)) else {
            return Err(TraceError::Source(
                format!(
                    "operation {} names store {store}; the trace's header has {} stores",
                    s.ops,
                    header.stores.len()
                )
                .into(),
            ));
        };
        let wrote = u64::from(st.apply(op));
        pending += wrote;
        writes += wrote;
    }
    Ok(s)
}

/// An upkeep operation of the application's (a flush, a manual
/// compaction) as the trace made it: how often, in writes.
#[derive(Debug, Default, Clone, Copy)]
pub struct Upkeep {
    /// Times it came after some writes (a run of them with no write
    /// between, one per store say, is one).
    pub count: u64,
    /// Writes before the last of them.
    pub writes_to_last: u64,
}

impl Upkeep {
    /// One seen with `writes` written so far.
    fn at(&mut self, writes: u64) {
        if writes > self.writes_to_last {
            self.count += 1;
            self.writes_to_last = writes;
        }
    }

    /// Writes between two, on average; none where the trace made none.
    pub fn every(&self) -> Option<u64> {
        (self.count > 0).then(|| (self.writes_to_last as f64 / self.count as f64).round() as u64)
    }
}

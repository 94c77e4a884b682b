//! The state-trie protocol: a bulk load of N accounts (trie and flat table,
//! sorted), then blocks of K account updates (walk, rewrite and rehash
//! each path to the root, one commit) and R account reads, each read once
//! through the trie and once through the flat table, every level metered.

use std::collections::HashMap;
use std::time::Instant;

use hdrhistogram::Histogram;
use ledgerbench_core::{Batch, KvStore};
use ledgerbench_meter::blockdev::BlockStat;
use ledgerbench_meter::rusage::Usage;
use ledgerbench_rng::{Rng, stream};
use ledgerbench_trie::accounts::{Accounts, account_rlp};
use ledgerbench_trie::build::{self, hex};
use ledgerbench_trie::{Hash, Scheme, Trie, TrieError, flat_key};
use ledgerbench_workloads::zipf::Zipf;

use crate::DriverError;
use crate::observe::Observer;
use crate::results::Latency;

pub use ledgerbench_results::trie::{
    LevelCost, ReadPass, TrieBlock, TrieConfig, TrieLoad, TrieResults, TrieRun,
};

const TAG_UPDATE: u64 = 0x7475;
const TAG_READ: u64 = 0x7472;

/// The store's error as the driver reports it.
fn err(e: TrieError) -> DriverError {
    match e {
        TrieError::Store(source) => DriverError::Store {
            store: "state".into(),
            source,
        },
        other => DriverError::Generator(format!("state trie: {other}")),
    }
}

/// The device's counters now, when the store has a private device.
pub type DeviceStat<'a> = &'a dyn Fn() -> Option<BlockStat>;

/// Loads every account, sorted by hashed key, into the trie under `scheme`
/// and into the flat table; commits every `load_batch` entries.
pub fn load(
    cfg: &TrieConfig,
    scheme: Scheme,
    store: &dyn KvStore,
    observer: &mut dyn Observer,
) -> Result<(Hash, TrieLoad), DriverError> {
    cfg.validate()?;
    let accts = Accounts {
        seed: cfg.seed,
        n: cfg.accounts,
    };
    let t = Instant::now();
    let depth = accts.bucket_depth();
    let buckets = 16u64.pow(depth as u32);
    let mut out = TrieLoad {
        secs: 0.0,
        nodes: 0,
        node_bytes: 0,
        flat_bytes: 0,
        device_write_bytes: None,
        disk_allocated_bytes: 0,
        root: String::new(),
    };
    // The builder's sink (nodes) and its bucket source (flat entries) both
    // put into one batch, committed whenever it holds `load_batch` entries.
    let loader = std::cell::RefCell::new(Loader {
        store,
        batch: Batch::new(),
        load_batch: cfg.load_batch,
        out: &mut out,
    });
    let mut key = Vec::with_capacity(66);
    let root = build::root_by_buckets(
        depth,
        &mut |b| {
            observer.advanced(b, buckets);
            let items = accts.bucket(depth, b, &|_| 0);
            let mut l = loader.borrow_mut();
            for a in &items {
                let v = account_rlp(cfg.seed, a.index, 0);
                let k = flat_key(&a.key);
                l.out.flat_bytes += (k.len() + v.len()) as u64;
                l.put(&k, &v)?;
            }
            Ok(items)
        },
        &mut |path, h, rlp| {
            scheme.node_key(path, h, &mut key);
            let mut l = loader.borrow_mut();
            l.out.nodes += 1;
            l.out.node_bytes += rlp.len() as u64;
            l.put(&key, rlp)
        },
    )
    .map_err(err)?;
    let l = loader.into_inner();
    store.write(&l.batch).map_err(|e| err(e.into()))?;
    store.flush().map_err(|e| err(e.into()))?;
    observer.advanced(buckets, buckets);
    out.secs = t.elapsed().as_secs_f64();
    out.root = hex(&root);
    Ok((root, out))
}

/// What a load puts into the store, batch by batch, and has counted.
struct Loader<'a> {
    store: &'a dyn KvStore,
    batch: Batch,
    load_batch: u64,
    out: &'a mut TrieLoad,
}

impl Loader<'_> {
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), TrieError> {
        self.batch.put(key, value);
        if self.batch.len() as u64 >= self.load_batch {
            self.store.write(&self.batch)?;
            self.batch.clear();
        }
        Ok(())
    }
}

/// Which accounts blocks touch, and every account's current version.
pub struct State {
    accts: Accounts,
    cfg: TrieConfig,
    zipf: Option<Zipf>,
    /// Versions of the accounts updated so far (the rest are at 0): grows
    /// with blocks x updates, never with the accounts.
    versions: HashMap<u64, u32>,
}

impl State {
    /// The state right after the load.
    pub fn new(cfg: &TrieConfig) -> Self {
        State {
            accts: Accounts {
                seed: cfg.seed,
                n: cfg.accounts,
            },
            zipf: (cfg.dist == "zipf").then(|| Zipf::new(cfg.accounts, cfg.theta)),
            cfg: cfg.clone(),
            versions: HashMap::new(),
        }
    }

    fn pick(&self, r: &mut Rng) -> u64 {
        let n = self.cfg.accounts;
        match (&self.zipf, self.cfg.dist.as_str()) {
            (Some(z), _) => z.next_scrambled(r),
            (None, "hotcold") => {
                let hot = ((n as f64 * self.cfg.hot_fraction) as u64).max(1);
                if r.f64() < self.cfg.hot_share {
                    r.below(hot)
                } else {
                    r.below(n)
                }
            }
            _ => r.below(n),
        }
    }

    fn version(&self, i: u64) -> u32 {
        self.versions.get(&i).copied().unwrap_or(0)
    }

    /// The root from scratch over every account at its current version:
    /// the independent check of the incremental updates.
    pub fn reference_root(&self, observer: &mut dyn Observer) -> Result<Hash, DriverError> {
        let depth = self.accts.bucket_depth();
        let buckets = 16u64.pow(depth as u32);
        build::root_by_buckets(
            depth,
            &mut |b| {
                observer.advanced(b, buckets);
                Ok(self.accts.bucket(depth, b, &|i| self.version(i)))
            },
            &mut |_, _, _| Ok(()),
        )
        .map_err(err)
    }
}

/// Runs block `block` (from 1): its updates and commit, then its reads.
pub fn block(
    state: &mut State,
    trie: &mut Trie<'_>,
    store: &dyn KvStore,
    device: DeviceStat<'_>,
    block: u64,
) -> Result<TrieBlock, DriverError> {
    let cfg = state.cfg.clone();
    let mut r = Rng::new(stream(cfg.seed, TAG_UPDATE, block));
    let mut picked: Vec<u64> = (0..cfg.updates_per_block)
        .map(|_| state.pick(&mut r))
        .collect();
    picked.sort_unstable();
    picked.dedup();
    let mut updates: Vec<(Vec<u8>, Vec<u8>)> = picked
        .iter()
        .map(|&i| {
            let v = state.versions.entry(i).or_insert(0);
            *v += 1;
            (state.accts.key(i).to_vec(), account_rlp(cfg.seed, i, *v))
        })
        .collect();
    updates.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let stats0 = store.stats().map_err(|e| err(e.into()))?;
    let dev0 = device();
    let mut batch = Batch::new();
    let cost = trie.update(&updates, &mut batch).map_err(err)?;
    for (k, v) in &updates {
        batch.put(&flat_key(k), v);
    }
    let logical_write_bytes = batch.data().len() as u64;
    let t = Instant::now();
    store.write(&batch).map_err(|e| err(e.into()))?;
    let commit_secs = t.elapsed().as_secs_f64();
    let dev1 = device();
    let stats1 = store.stats().map_err(|e| err(e.into()))?;
    let delta = |a: Option<u64>, b: Option<u64>| a.zip(b).map(|(a, b)| b.saturating_sub(a));
    let mut out = TrieBlock {
        block,
        updates: updates.len() as u64,
        nodes_read: cost.nodes_read,
        node_bytes_read: cost.bytes_read,
        nodes_written: cost.nodes_written,
        node_bytes_written: cost.bytes_written,
        logical_write_bytes,
        walk_secs: cost.walk_secs,
        hash_secs: cost.hash_secs,
        commit_secs,
        update_device_reads: dev0.zip(dev1).map(|(a, b)| b.since(&a).read_ios),
        device_write_bytes: None,
        compaction_write_bytes: delta(stats0.compaction_write_bytes, stats1.compaction_write_bytes),
        stall_micros: delta(stats0.stall_micros, stats1.stall_micros),
        disk_allocated_bytes: None,
        trie: read_pass(state, trie, store, device, block, true)?,
        flat: read_pass(state, trie, store, device, block, false)?,
        root: hex(&trie.root()),
    };
    out.device_write_bytes = dev0
        .zip(device())
        .map(|(a, b)| b.since(&a).write_sectors * 512);
    out.disk_allocated_bytes = store.disk_usage().ok().map(|d| d.allocated_bytes);
    Ok(out)
}

/// The block's account reads, through the trie walk (`through_trie`) or
/// the flat table: the same accounts either way. Each GET is metered the
/// same way on both paths (device counters read before and after it).
fn read_pass(
    state: &State,
    trie: &mut Trie<'_>,
    store: &dyn KvStore,
    device: DeviceStat<'_>,
    block: u64,
    through_trie: bool,
) -> Result<ReadPass, DriverError> {
    let cfg = &state.cfg;
    let mut r = Rng::new(stream(cfg.seed, TAG_READ, block));
    let mut hist = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3)
        .expect("constant bounds are valid");
    let has_device = device().is_some();
    let mut levels: Vec<LevelCost> = Vec::new();
    let mut before = None;
    let mut probe = |level: u32, done: bool| {
        let level = level as usize;
        if levels.len() <= level {
            levels.resize_with(level + 1, || LevelCost {
                level: level as u32,
                device_reads: has_device.then_some(0),
                cached_gets: has_device.then_some(0),
                ..LevelCost::default()
            });
        }
        if !done {
            before = device();
            return;
        }
        let l = &mut levels[level];
        l.gets += 1;
        if let Some(n) = before.zip(device()).map(|(a, b)| b.since(&a).read_ios) {
            *l.device_reads.get_or_insert(0) += n;
            *l.cached_gets.get_or_insert(0) += u64::from(n == 0);
        }
    };
    let (dev0, ru0) = (device(), Usage::now());
    let (mut gets, mut depth, mut mismatches) = (0u64, 0u64, 0u64);
    let mut got = Vec::new();
    for _ in 0..cfg.reads_per_block {
        let i = state.pick(&mut r);
        let key = state.accts.key(i);
        let want = account_rlp(cfg.seed, i, state.version(i));
        let t = Instant::now();
        let found = if through_trie {
            let (v, trace) = trie.read(&key, &mut probe).map_err(err)?;
            gets += u64::from(trace.fetched);
            depth += u64::from(trace.leaf_depth);
            v
        } else {
            probe(0, false);
            let found = store
                .get_into(&flat_key(&key), &mut got)
                .map_err(|e| err(e.into()))?;
            probe(0, true);
            gets += 1;
            found.then(|| std::mem::take(&mut got))
        };
        let _ = hist.record(t.elapsed().as_nanos().max(1) as u64);
        mismatches += u64::from(found.as_deref() != Some(&want[..]));
    }
    let (dev1, ru1) = (device(), Usage::now());
    let n = cfg.reads_per_block.max(1) as f64;
    let dev = dev0.zip(dev1).map(|(a, b)| b.since(&a));
    Ok(ReadPass {
        reads: cfg.reads_per_block,
        gets_per_read: gets as f64 / n,
        leaf_depth: through_trie.then(|| depth as f64 / n),
        device_reads_per_read: dev.map(|d| d.read_ios as f64 / n),
        device_bytes_per_read: dev.map(|d| d.read_bytes() as f64 / n),
        major_faults_per_read: ru1.since(&ru0).major_faults as f64 / n,
        levels,
        latency: Latency::from_histogram(&hist),
        mismatches,
    })
}

#[cfg(test)]
mod tests;

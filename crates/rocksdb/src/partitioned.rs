//! Range-partitioned RocksDB: a new database every N batches, compacted
//! once when sealed and never again. The layout a ledger archive can use
//! because its history is write-once: compaction cost stays that of one
//! partition however large the store grows, and a lookup goes from the
//! newest partition to the oldest, each skipped by its bloom filter.
//!
//! A delete must hide the key in older partitions too, and RocksDB's `get`
//! cannot tell a deleted key from an absent one, so each partition keeps a
//! `deleted` column family: a delete writes the key there, a put removes it
//! (in the same write batch, so both stay atomic).

use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use ledgerbench_core::{
    Batch, BatchOp, Capabilities, Durability, EngineStats, Error, KvBackend, KvStore, Op, Result,
    fsutil,
};
use rocksdb::{
    ColumnFamily, ColumnFamilyDescriptor, CompactOptions, DB, DEFAULT_COLUMN_FAMILY_NAME, Options,
    ReadOptions, WriteBatch, WriteOptions,
};
use serde::{Deserialize, Serialize};

use crate::{ENGINE, Rocks, RocksConfig, add_counters, engine_err, gauges_of, sum_gauges};

const DELETED: &str = "deleted";

/// Settings of a partitioned store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PartitionedConfig {
    /// The settings of every partition.
    pub base: RocksConfig,
    /// Flushes (batches, in a Stellar run) per partition: after this many
    /// the partition is compacted once, sealed and a new one started.
    pub partition_flushes: u32,
}

impl Default for PartitionedConfig {
    /// The report's options, a partition per batch, and index and filter
    /// blocks in the one shared block cache: each partition's tables would
    /// otherwise hold theirs in memory of their own, which grows with the
    /// partitions (the first run at outgrow-memory was killed by its memory
    /// limit after ingestion, reading across 19 partitions).
    fn default() -> Self {
        Self {
            base: RocksConfig {
                cache_index_and_filter_blocks: true,
                ..RocksConfig::default()
            },
            partition_flushes: 1,
        }
    }
}

/// The partitioned RocksDB backend.
pub struct Partitioned;

struct Part {
    db: DB,
    /// The partition holds delete marks. Without deletes (the write-once
    /// stores this layout is for) it never does, and lookups, puts and
    /// scans skip the mark family instead of probing it once per key.
    marks: AtomicBool,
}

impl Part {
    fn deleted(&self) -> &ColumnFamily {
        self.db
            .cf_handle(DELETED)
            .expect("opened with the deleted family")
    }
}

/// An open partitioned store.
pub struct PartitionedStore {
    dir: PathBuf,
    cfg: PartitionedConfig,
    /// Every partition opens with a copy of these, so all of them share
    /// one block cache and one statistics object: RocksDB's statistics
    /// keep a copy of every ticker and histogram per core slot (at least
    /// 8), a cost that would otherwise grow with the partitions.
    opts: Options,
    write_opts: WriteOptions,
    // Built once (see RocksStore's).
    read_opts: ReadOptions,
    /// Oldest first; the last one takes writes.
    parts: RwLock<Vec<Part>>,
    flushes: AtomicU32,
    /// Partition lookups made by gets (the fan-out a lookup pays).
    probes: AtomicU64,
    gets: AtomicU64,
}

fn part_dir(dir: &Path, n: usize) -> PathBuf {
    dir.join(format!("p{n:06}"))
}

impl KvBackend for Partitioned {
    const NAME: &'static str = "rocksdb-partitioned";
    type Config = PartitionedConfig;
    type Store = PartitionedStore;

    crate::base_config_backend!(PartitionedConfig);

    fn version(_cfg: &Self::Config, store_dir: &Path) -> Option<String> {
        crate::engine_version(&part_dir(store_dir, 0))
    }

    fn open(dir: &Path, cfg: &PartitionedConfig) -> Result<PartitionedStore> {
        cfg.base.validate()?;
        crate::trace::refuse_for_several(&cfg.base, "a partitioned store")?;
        if cfg.partition_flushes == 0 {
            return Err(Error::Config {
                engine: ENGINE,
                message: "partition_flushes must be at least 1".into(),
            });
        }
        fsutil::claim_store_dir(ENGINE, dir)?;
        // One block cache for all partitions, so the memory budget does
        // not grow with their number.
        let cache = cfg.base.shared_cache();
        let mut opts = cfg.base.options_with(cache.as_ref());
        opts.create_missing_column_families(true);
        let write_opts = cfg.base.write_options();
        let store = PartitionedStore {
            dir: dir.to_path_buf(),
            cfg: cfg.clone(),
            opts,
            write_opts,
            read_opts: ReadOptions::default(),
            parts: RwLock::new(Vec::new()),
            flushes: AtomicU32::new(0),
            probes: AtomicU64::new(0),
            gets: AtomicU64::new(0),
        };
        let mut n = 0;
        while part_dir(dir, n + 1).exists() {
            n += 1;
        }
        // Every partition but the newest is sealed: no more writes.
        let mut parts = Vec::new();
        for i in 0..n {
            parts.push(store.open_part(i, true)?);
        }
        parts.push(store.open_part(n, false)?);
        *store.parts.write().expect("not poisoned") = parts;
        Ok(store)
    }
}

impl PartitionedStore {
    /// Opens partition `n`; a sealed one read-only, as it takes no more
    /// writes: no memtable to fill, no log or manifest writer, no
    /// background work, which each open partition would otherwise cost.
    fn open_part(&self, n: usize, sealed: bool) -> Result<Part> {
        let path = part_dir(&self.dir, n);
        // Both families named with the store's options: the crate opens a
        // default family it is not given with RocksDB's defaults (no bloom
        // filter, a private 32 MiB cache per partition), which is how the
        // data itself was stored until the first outgrow-memory runs.
        let cfs = [DEFAULT_COLUMN_FAMILY_NAME, DELETED]
            .map(|name| ColumnFamilyDescriptor::new(name, self.opts.clone()));
        let db = if sealed {
            DB::open_cf_descriptors_read_only(&self.opts, &path, cfs, false)
        } else {
            DB::open_cf_descriptors(&self.opts, &path, cfs)
        }
        .map_err(|e| engine_err(Op::Open, &path, e))?;
        if !sealed {
            // RocksDB made the partition's directory and syncs what is in
            // it, never its name in ours.
            ledgerbench_core::fsutil::sync_dir(&self.dir).map_err(|source| Error::Io {
                engine: ENGINE,
                op: Op::Open,
                path: self.dir.clone(),
                source,
            })?;
        }
        let part = Part {
            db,
            marks: AtomicBool::new(false),
        };
        let mut it = part.db.raw_iterator_cf(part.deleted());
        it.seek_to_first();
        part.marks.store(it.valid(), Ordering::Relaxed);
        it.status().map_err(|e| engine_err(Op::Open, &path, e))?;
        drop(it);
        Ok(part)
    }

    fn err(&self, op: Op, e: rocksdb::Error) -> Error {
        engine_err(op, &self.dir, e)
    }

    /// Compacts the active partition once, reopens it sealed, then starts
    /// a new one.
    fn seal(&self) -> Result<()> {
        let mut parts = self.parts.write().expect("not poisoned");
        let active = parts.pop().expect("at least one partition");
        compact_all(&active.db);
        drop(active);
        let n = parts.len();
        parts.push(self.open_part(n, true)?);
        parts.push(self.open_part(n + 1, false)?);
        Ok(())
    }
}

fn compact_all(db: &DB) {
    let mut co = CompactOptions::default();
    co.set_exclusive_manual_compaction(true);
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &co);
}

impl KvStore for PartitionedStore {
    fn engine(&self) -> &'static str {
        ENGINE
    }

    fn path(&self) -> &Path {
        &self.dir
    }

    fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        out.clear();
        let parts = self.parts.read().expect("not poisoned");
        let mut probes = 0;
        let mut found = false;
        for p in parts.iter().rev() {
            probes += 1;
            if let Some(v) =
                p.db.get_pinned_opt(key, &self.read_opts)
                    .map_err(|e| self.err(Op::Get, e))?
            {
                out.extend_from_slice(&v);
                found = true;
                break;
            }
            if p.marks.load(Ordering::Relaxed) {
                let gone = p.db.get_pinned_cf_opt(p.deleted(), key, &self.read_opts);
                if gone.map_err(|e| self.err(Op::Get, e))?.is_some() {
                    break;
                }
            }
        }
        // One update per lookup, not per partition probed.
        self.gets.fetch_add(1, Ordering::Relaxed);
        self.probes.fetch_add(probes, Ordering::Relaxed);
        Ok(found)
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        // A range would need range marks in every older partition: a
        // delete per key it holds instead, each marked as any delete is.
        let batch = ledgerbench_core::ranges::expand(self, batch)?;
        let parts = self.parts.read().expect("not poisoned");
        let p = parts.last().expect("at least one partition");
        let (older, deleted) = (parts.len() > 1, p.deleted());
        let marked = p.marks.load(Ordering::Relaxed);
        let mut marking = false;
        let mut wb = WriteBatch::default();
        for op in batch.iter() {
            match op {
                BatchOp::Put(k, v) => {
                    wb.put(k, v);
                    // Only a key this partition marked deleted needs its
                    // mark removed; the check is a bloom/memtable probe,
                    // made only once the partition has marks at all.
                    if marked && p.db.key_may_exist_cf(deleted, k) {
                        wb.delete_cf(deleted, k);
                    }
                }
                BatchOp::Delete(k) => {
                    wb.delete(k);
                    if older {
                        marking = true;
                        wb.put_cf(deleted, k, []);
                    }
                }
                BatchOp::DeleteRange(..) => unreachable!("range deletes were expanded above"),
            }
        }
        if marking {
            // Set before the marks land, so no reader skips them.
            p.marks.store(true, Ordering::Relaxed);
        }
        p.db.write_opt(wb, &self.write_opts)
            .map_err(|e| self.err(Op::Write, e))
    }

    fn scan(&self, start: &[u8], visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        let parts = self.parts.read().expect("not poisoned");
        // Newest first, so on equal keys the first holder wins.
        let mut its: Vec<_> = parts.iter().rev().map(|p| p.db.raw_iterator()).collect();
        for it in &mut its {
            it.seek(start);
        }
        let newest_first: Vec<&Part> = parts.iter().rev().collect();
        loop {
            let mut min: Option<(usize, Vec<u8>)> = None;
            for (i, it) in its.iter().enumerate() {
                if let Some(k) = it.key()
                    && min.as_ref().is_none_or(|(_, m)| k < m.as_slice())
                {
                    min = Some((i, k.to_vec()));
                }
            }
            let Some((winner, key)) = min else { break };
            // A newer partition's delete mark hides the older value.
            let mut hidden = false;
            for p in newest_first[..winner]
                .iter()
                .filter(|p| p.marks.load(Ordering::Relaxed))
            {
                let mark = p.db.get_pinned_cf_opt(p.deleted(), &key, &self.read_opts);
                if mark.map_err(|e| self.err(Op::Iterate, e))?.is_some() {
                    hidden = true;
                    break;
                }
            }
            let value = its[winner].value().unwrap_or_default().to_vec();
            for it in &mut its {
                if it.key() == Some(key.as_slice()) {
                    it.next();
                }
            }
            if !hidden && !visit(&key, &value) {
                break;
            }
        }
        for it in &its {
            it.status().map_err(|e| self.err(Op::Iterate, e))?;
        }
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        {
            let parts = self.parts.read().expect("not poisoned");
            let p = parts.last().expect("at least one partition");
            p.db.flush().map_err(|e| self.err(Op::Flush, e))?;
            p.db.flush_cf(p.deleted())
                .map_err(|e| self.err(Op::Flush, e))?;
        }
        let n = self.flushes.fetch_add(1, Ordering::Relaxed) + 1;
        if n.is_multiple_of(self.cfg.partition_flushes) {
            self.seal()?;
        }
        Ok(())
    }

    /// Compacts the active partition only: sealed ones are never compacted
    /// again, which is the point of the layout.
    fn compact(&self) -> Result<()> {
        let parts = self.parts.read().expect("not poisoned");
        compact_all(&parts.last().expect("at least one partition").db);
        Ok(())
    }

    fn stats(&self) -> Result<EngineStats> {
        let parts = self.parts.read().expect("not poisoned");
        let mut total: Option<EngineStats> = None;
        for p in parts.iter() {
            let s = gauges_of(&p.db, None, &self.cfg.base, &self.dir)?;
            total = Some(match total {
                None => s,
                Some(t) => sum_gauges(t, s),
            });
        }
        let mut t = total.unwrap_or_default();
        // Counted once: every partition, open or closed since, counts
        // into the one statistics object.
        add_counters(&mut t, &self.opts, &self.cfg.base);
        t.extra.insert("partitions".into(), parts.len() as u64);
        t.extra.insert(
            "partition_probes".into(),
            self.probes.load(Ordering::Relaxed),
        );
        t.extra
            .insert("partitioned_gets".into(), self.gets.load(Ordering::Relaxed));
        Ok(t)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            ordered_iteration: true,
            manual_compaction: true,
            evicts_oldest: false,
            persistent: true,
            discards_writes: false,
            writers: Some(ledgerbench_core::WriterModel::Concurrent),
            range_delete: Some(ledgerbench_core::RangeDelete::Emulated),
        }
    }

    fn close(self: Box<Self>) -> Result<()> {
        // Sealed partitions are read-only and flushed when sealed.
        let parts = self.parts.read().expect("not poisoned");
        let p = parts.last().expect("at least one partition");
        p.db.flush().map_err(|e| self.err(Op::Close, e))?;
        p.db.flush_cf(p.deleted())
            .map_err(|e| self.err(Op::Close, e))?;
        Ok(())
    }
}

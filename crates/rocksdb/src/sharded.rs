//! Hash-prefix-sharded RocksDB: one database, a column family per value of
//! the key's first bits (16 by the first nibble, the layout Stellar's
//! planned hot store uses). Keys are hashes, so the shards are even; a GET
//! goes to exactly one shard, a smaller leveled tree than one holding
//! everything, and a full compaction can run a shard at a time.
//!
//! Shards follow the key's leading bits, so walking them in order walks
//! the keys in order: a scan needs no merge.

use std::path::{Path, PathBuf};

use ledgerbench_core::{
    Batch, BatchOp, Capabilities, Durability, EngineStats, Error, KvBackend, KvStore, Op, Result,
    fsutil,
};
use rocksdb::{
    ColumnFamily, ColumnFamilyDescriptor, CompactOptions, DB, DEFAULT_COLUMN_FAMILY_NAME,
    FlushOptions, Options, WriteBatch, WriteOptions,
};
use serde::{Deserialize, Serialize};

use crate::{ENGINE, Rocks, RocksConfig, add_counters, engine_err, gauges_of, get, sum_gauges};

/// Settings of a sharded store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ShardedConfig {
    /// The settings of every shard (one block cache and one memtable budget
    /// shared by all of them).
    pub base: RocksConfig,
    /// Leading key bits that pick the shard: 4 gives 16 column families.
    pub shard_bits: u32,
}

impl Default for ShardedConfig {
    /// 16 shards; index and filter blocks in the shared block cache, as
    /// the partitioned store keeps them, so the two compare at one budget.
    fn default() -> Self {
        Self {
            base: RocksConfig {
                cache_index_and_filter_blocks: true,
                ..RocksConfig::default()
            },
            shard_bits: 4,
        }
    }
}

/// The sharded RocksDB backend.
pub struct Sharded;

/// An open sharded store.
pub struct ShardedStore {
    db: DB,
    opts: Options,
    cfg: ShardedConfig,
    write_opts: WriteOptions,
    // Built once (see RocksStore's).
    read_opts: get::RawReadOptions,
    path: PathBuf,
    /// Each shard's family name, made once: a GET or a put looks its
    /// family up by name, and formatting it there would allocate per key.
    names: Vec<String>,
}

fn shard_name(i: usize) -> String {
    format!("shard-{i:02x}")
}

impl KvBackend for Sharded {
    const NAME: &'static str = "rocksdb-sharded";
    type Config = ShardedConfig;
    type Store = ShardedStore;

    crate::base_config_backend!(ShardedConfig);

    fn version(_cfg: &Self::Config, store_dir: &Path) -> Option<String> {
        crate::engine_version(store_dir)
    }

    fn open(dir: &Path, cfg: &ShardedConfig) -> Result<ShardedStore> {
        cfg.base.validate()?;
        crate::trace::refuse_for_several(&cfg.base, "a sharded store")?;
        if cfg.shard_bits > 8 {
            return Err(Error::Config {
                engine: ENGINE,
                message: format!(
                    "shard_bits is {}: at most 8 (256 column families, one per first byte)",
                    cfg.shard_bits
                ),
            });
        }
        fsutil::claim_store_dir(ENGINE, dir)?;
        let cache = cfg.base.shared_cache();
        let mut opts = cfg.base.options_with(cache.as_ref());
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        // Every shard has memtables of its own; capped together at one
        // store's budget, so sharding does not multiply the memory.
        let budget = cfg.base.write_buffer_size * cfg.base.max_write_buffer_number.max(1) as u64;
        opts.set_db_write_buffer_size(budget as usize);
        let names: Vec<String> = (0..1usize << cfg.shard_bits).map(shard_name).collect();
        let cfs = std::iter::once(DEFAULT_COLUMN_FAMILY_NAME.to_string())
            .chain(names.iter().cloned())
            .map(|n| ColumnFamilyDescriptor::new(n, opts.clone()));
        let db =
            DB::open_cf_descriptors(&opts, dir, cfs).map_err(|e| engine_err(Op::Open, dir, e))?;
        let write_opts = cfg.base.write_options();
        Ok(ShardedStore {
            db,
            opts,
            cfg: cfg.clone(),
            write_opts,
            read_opts: get::RawReadOptions::new(),
            path: dir.to_path_buf(),
            names,
        })
    }
}

impl ShardedStore {
    fn shards(&self) -> usize {
        self.names.len()
    }

    /// The shard of `key`: its leading `shard_bits` bits (an empty key is
    /// in the first shard, where it sorts).
    fn shard_of(&self, key: &[u8]) -> usize {
        match (key.first(), self.cfg.shard_bits) {
            (_, 0) | (None, _) => 0,
            (Some(&b), bits) => usize::from(b >> (8 - bits)),
        }
    }

    fn cf(&self, i: usize) -> &ColumnFamily {
        self.db
            .cf_handle(&self.names[i])
            .expect("opened with every shard's family")
    }

    fn all(&self) -> Vec<&ColumnFamily> {
        (0..self.shards()).map(|i| self.cf(i)).collect()
    }

    fn err(&self, op: Op, e: rocksdb::Error) -> Error {
        engine_err(op, &self.path, e)
    }
}

impl KvStore for ShardedStore {
    fn engine(&self) -> &'static str {
        ENGINE
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        let cf = self.cf(self.shard_of(key));
        get::get_into((&self.db, &self.path), Some(cf), &self.read_opts, key, out)
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        let mut wb = WriteBatch::default();
        for op in batch.iter() {
            match op {
                BatchOp::Put(k, v) => wb.put_cf(self.cf(self.shard_of(k)), k, v),
                BatchOp::Delete(k) => wb.delete_cf(self.cf(self.shard_of(k)), k),
                // A tombstone in each shard the range reaches (shards hold
                // consecutive key ranges).
                BatchOp::DeleteRange(s, e) if s < e => {
                    for i in self.shard_of(s)..=self.shard_of(e) {
                        wb.delete_range_cf(self.cf(i), s, e);
                    }
                }
                BatchOp::DeleteRange(..) => {}
            }
        }
        self.db
            .write_opt(wb, &self.write_opts)
            .map_err(|e| self.err(Op::Write, e))
    }

    fn scan(&self, start: &[u8], visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        for i in self.shard_of(start)..self.shards() {
            let mut it = self.db.raw_iterator_cf(self.cf(i));
            it.seek(start);
            while let (Some(k), Some(v)) = (it.key(), it.value()) {
                if !visit(k, v) {
                    return it.status().map_err(|e| self.err(Op::Iterate, e));
                }
                it.next();
            }
            it.status().map_err(|e| self.err(Op::Iterate, e))?;
        }
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        self.db
            .flush_cfs_opt(&self.all(), &FlushOptions::default())
            .map_err(|e| self.err(Op::Flush, e))
    }

    /// Compacts one shard at a time, so the space a full compaction needs
    /// at once is a shard's, not the store's.
    fn compact(&self) -> Result<()> {
        let mut co = CompactOptions::default();
        co.set_exclusive_manual_compaction(true);
        for cf in self.all() {
            self.db
                .compact_range_cf_opt(cf, None::<&[u8]>, None::<&[u8]>, &co);
        }
        Ok(())
    }

    fn stats(&self) -> Result<EngineStats> {
        let mut total: Option<EngineStats> = None;
        for cf in self.all() {
            let s = gauges_of(&self.db, Some(cf), &self.cfg.base, &self.path)?;
            total = Some(match total {
                None => s,
                Some(t) => sum_gauges(t, s),
            });
        }
        let mut t = total.unwrap_or_default();
        // Figures of the whole database, not of a family: summed over the
        // shards they would count each 16 times.
        let whole = gauges_of(&self.db, None, &self.cfg.base, &self.path)?;
        t.running_compactions = whole.running_compactions;
        t.write_stopped = whole.write_stopped;
        for k in ["num_running_flushes", "actual_delayed_write_rate"] {
            match whole.extra.get(k) {
                Some(&v) => t.extra.insert(k.into(), v),
                None => t.extra.remove(k),
            };
        }
        add_counters(&mut t, &self.opts, &self.cfg.base);
        t.extra.insert("shards".into(), self.shards() as u64);
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
            range_delete: Some(ledgerbench_core::RangeDelete::Native),
        }
    }

    fn close(self: Box<Self>) -> Result<()> {
        // Flushed, so a reopen does not replay the log.
        self.flush()?;
        drop(self);
        Ok(())
    }
}

//! RocksDB backend (through the `rocksdb` crate, which bundles RocksDB's C++).
//!
//! One engine, several configs: leveled compaction (the default), FIFO (the
//! Solana blockstore design: keys mostly increasing, oldest files dropped
//! once over a size cap), universal, BlobDB's blob files, tuned L0 triggers
//! and range partitions ([`Partitioned`]). Every option the Stellar
//! ingestion report tuned is a config field, so its setup can be
//! reproduced exactly.

use std::path::{Path, PathBuf};

use ledgerbench_core::{
    Batch, Capabilities, Durability, EngineStats, Error, KvBackend, KvStore, Op, Result, fsutil,
};
use rocksdb::statistics::Ticker;
use rocksdb::{ColumnFamily, CompactOptions, DB, Options};

mod config;
mod get;
mod partitioned;
mod sharded;
mod write;

/// The [`KvBackend`] methods of a RocksDB store built from several
/// databases or families of one base config (`cfg.base`): its durability,
/// read path, tunings, eviction and memory are the base's.
macro_rules! base_config_backend {
    ($config:ty) => {
        fn set_durability(cfg: &mut $config, level: Durability) -> Result<()> {
            Rocks::set_durability(&mut cfg.base, level)
        }

        fn durability(cfg: &$config) -> Durability {
            Rocks::durability(&cfg.base)
        }

        fn read_path(cfg: &$config) -> ledgerbench_core::ReadPath {
            Rocks::read_path(&cfg.base)
        }

        fn tune(cfg: &mut $config, tuning: ledgerbench_core::Tuning) -> bool {
            Rocks::tune(&mut cfg.base, tuning)
        }

        fn evicts_oldest(cfg: &$config) -> bool {
            Rocks::evicts_oldest(&cfg.base)
        }

        fn scale_memory(cfg: &mut $config, bytes: u64) {
            Rocks::scale_memory(&mut cfg.base, bytes);
        }

        fn memory_floor(cfg: &$config) -> u64 {
            Rocks::memory_floor(&cfg.base)
        }
    };
}
pub(crate) use base_config_backend;

mod trace;

pub use config::{Blob, Compaction, Compression, RocksConfig};
pub use partitioned::{Partitioned, PartitionedConfig, PartitionedStore};
pub use sharded::{Sharded, ShardedConfig, ShardedStore};

const ENGINE: &str = "rocksdb";
const MIB: u64 = 1 << 20;

/// The RocksDB backend.
pub struct Rocks;

/// An open RocksDB store.
pub struct RocksStore {
    db: DB,
    // Statistics live in the Options object RocksDB was opened with.
    opts: Options,
    cfg: RocksConfig,
    // Built once: the durability level fixes them for the store's life.
    write_opts: write::RawWriteOptions,
    // Built once, as db_bench's: a GET that made its own would allocate
    // and free RocksDB's ReadOptions every call.
    read_opts: get::RawReadOptions,
    path: PathBuf,
    /// The file RocksDB traces this store's queries into, when asked.
    trace: Option<PathBuf>,
}

impl KvBackend for Rocks {
    const NAME: &'static str = ENGINE;
    type Config = RocksConfig;
    type Store = RocksStore;

    fn set_durability(cfg: &mut RocksConfig, level: Durability) -> Result<()> {
        (cfg.disable_wal, cfg.sync_wal) = match level {
            Durability::None => (true, false),
            Durability::Process => (false, false),
            Durability::Power => (false, true),
        };
        Ok(())
    }

    fn durability(cfg: &RocksConfig) -> Durability {
        match (cfg.disable_wal, cfg.sync_wal) {
            (true, _) => Durability::None,
            (false, false) => Durability::Process,
            (false, true) => Durability::Power,
        }
    }

    fn read_path(c: &RocksConfig) -> ledgerbench_core::ReadPath {
        if c.use_direct_reads {
            ledgerbench_core::ReadPath::Direct
        } else {
            ledgerbench_core::ReadPath::Buffered
        }
    }

    fn tune(c: &mut RocksConfig, tuning: ledgerbench_core::Tuning) -> bool {
        use ledgerbench_core::Tuning;
        match tuning {
            Tuning::NoBackgroundCompaction => c.disable_auto_compactions = true,
            Tuning::DirectReads(on) => c.use_direct_reads = on,
            // Level 0 compacts at 4 files instead of the configured trigger.
            Tuning::FrequentCompactions => c.level0_file_num_compaction_trigger = 4,
            Tuning::EvictionCapAtLeast(bytes) => match &mut c.compaction {
                Compaction::Fifo {
                    max_table_files_size,
                } => *max_table_files_size = (*max_table_files_size).max(bytes),
                _ => return false,
            },
        }
        true
    }

    fn evicts_oldest(c: &RocksConfig) -> bool {
        matches!(c.compaction, Compaction::Fifo { .. })
    }

    fn version(_cfg: &Self::Config, store_dir: &Path) -> Option<String> {
        engine_version(store_dir)
    }

    /// The report: 512 MiB x 6 memtables; keeps the count and scales the
    /// size, gives a quarter to the block cache, and caps background jobs at
    /// 4 (the report's 20 assume a big machine).
    fn scale_memory(c: &mut RocksConfig, bytes: u64) {
        c.write_buffer_size = (bytes / c.max_write_buffer_number.max(1) as u64).max(1 << 20);
        c.block_cache_bytes = (bytes / 4).max(8 << 20);
        c.max_background_jobs = c.max_background_jobs.min(4);
    }

    /// A block cache of 8 MiB (a quarter of the budget) and write buffers
    /// of 1 MiB at least.
    fn memory_floor(c: &RocksConfig) -> u64 {
        (32u64 << 20).max(c.max_write_buffer_number.max(1) as u64 * (1 << 20))
    }

    fn open(dir: &Path, cfg: &RocksConfig) -> Result<RocksStore> {
        cfg.validate()?;
        fsutil::claim_store_dir(ENGINE, dir)?;
        let opts = cfg.options_with(None);
        let db = DB::open(&opts, dir).map_err(|e| engine_err(Op::Open, dir, e))?;
        let trace = match &cfg.trace_dir {
            Some(t) => {
                let file = trace::file_for(t, dir);
                trace::start(&db, &file)?;
                Some(file)
            }
            None => None,
        };
        Ok(RocksStore {
            trace,
            db,
            opts,
            write_opts: write::RawWriteOptions::new(cfg.wal()),
            read_opts: get::RawReadOptions::new(),
            cfg: cfg.clone(),
            path: dir.to_path_buf(),
        })
    }
}

fn engine_err(op: Op, path: &Path, e: rocksdb::Error) -> Error {
    Error::engine(ENGINE, op, path, e.into_string())
}

/// The RocksDB version that wrote this store, read from its LOG header
/// (`RocksDB version: X.Y.Z`), so results name the library actually linked.
pub fn engine_version(store_dir: &Path) -> Option<String> {
    let log = std::fs::read_to_string(store_dir.join("LOG")).ok()?;
    log.lines()
        .find_map(|l| l.split("RocksDB version: ").nth(1))
        .map(|v| v.trim().to_string())
}

impl RocksStore {
    fn err(&self, op: Op, e: rocksdb::Error) -> Error {
        engine_err(op, &self.path, e)
    }

    /// The config this store was opened with.
    pub fn config(&self) -> &RocksConfig {
        &self.cfg
    }
}

impl KvStore for RocksStore {
    fn engine(&self) -> &'static str {
        ENGINE
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        get::get_into((&self.db, &self.path), None, &self.read_opts, key, out)
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        write::write((&self.db, &self.path), &self.write_opts, batch)
    }

    fn scan(&self, start: &[u8], visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        let mut it = self.db.raw_iterator();
        it.seek(start);
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            if !visit(k, v) {
                break;
            }
            it.next();
        }
        it.status().map_err(|e| self.err(Op::Iterate, e))
    }

    fn flush(&self) -> Result<()> {
        self.db.flush().map_err(|e| self.err(Op::Flush, e))
    }

    fn compact(&self) -> Result<()> {
        let mut co = CompactOptions::default();
        co.set_exclusive_manual_compaction(true);
        self.db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &co);
        Ok(())
    }

    fn stats(&self) -> Result<EngineStats> {
        stats_of(&self.db, &self.opts, &self.cfg, &self.path)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            ordered_iteration: true,
            manual_compaction: true,
            evicts_oldest: matches!(self.cfg.compaction, Compaction::Fifo { .. }),
            persistent: true,
            discards_writes: false,
            writers: Some(ledgerbench_core::WriterModel::Concurrent),
            range_delete: Some(ledgerbench_core::RangeDelete::Native),
        }
    }

    fn close(self: Box<Self>) -> Result<()> {
        // Flush so a reopen does not replay the WAL, and so disable_wal stores keep their data.
        self.db.flush().map_err(|e| self.err(Op::Close, e))?;
        if let Some(file) = &self.trace {
            trace::end(&self.db, file)?;
        }
        drop(self);
        Ok(())
    }
}

/// The engine figures of one open database: properties from the database,
/// counters from the statistics its Options carry.
pub(crate) fn stats_of(
    db: &DB,
    opts: &Options,
    cfg: &RocksConfig,
    path: &Path,
) -> Result<EngineStats> {
    let mut s = gauges_of(db, None, cfg, path)?;
    add_counters(&mut s, opts, cfg);
    Ok(s)
}

/// What one database (or one of its column families, `cf`) holds now
/// (files, sizes, memtables, pending work), read from its properties;
/// counters stay absent.
pub(crate) fn gauges_of(
    db: &DB,
    cf: Option<&ColumnFamily>,
    cfg: &RocksConfig,
    path: &Path,
) -> Result<EngineStats> {
    let prop = |name: &str| -> Result<Option<u64>> {
        match cf {
            Some(cf) => db.property_int_value_cf(cf, name),
            None => db.property_int_value(name),
        }
        .map_err(|e| engine_err(Op::Stats, path, e))
    };
    let levels = match cfg.compaction {
        Compaction::Fifo { .. } => 1,
        _ => 7,
    };
    // All levels or none: a level RocksDB does not report is not 0 files.
    let mut files = Some(Vec::with_capacity(levels));
    for l in 0..levels {
        let n = prop(&format!("rocksdb.num-files-at-level{l}"))?;
        files = files.zip(n).map(|(mut v, n)| {
            v.push(n);
            v
        });
    }
    let mut extra = std::collections::BTreeMap::new();
    for (name, p) in [
        ("estimate_num_keys", "rocksdb.estimate-num-keys"),
        (
            "actual_delayed_write_rate",
            "rocksdb.actual-delayed-write-rate",
        ),
        ("num_running_flushes", "rocksdb.num-running-flushes"),
        ("total_sst_files_size", "rocksdb.total-sst-files-size"),
        ("live_blob_file_bytes", "rocksdb.live-blob-file-size"),
        // The cache in effect, which shows a store opened with other
        // options than it was given.
        ("block_cache_capacity_bytes", "rocksdb.block-cache-capacity"),
        ("block_cache_usage_bytes", "rocksdb.block-cache-usage"),
        ("table_readers_bytes", "rocksdb.estimate-table-readers-mem"),
    ] {
        if let Some(v) = prop(p)? {
            extra.insert(name.to_string(), v);
        }
    }
    Ok(EngineStats {
        write_stopped: prop("rocksdb.is-write-stopped")?.map(|v| v != 0),
        files_per_level: files,
        pending_compaction_bytes: prop("rocksdb.estimate-pending-compaction-bytes")?,
        sst_bytes: prop("rocksdb.live-sst-files-size")?,
        memtable_bytes: prop("rocksdb.cur-size-all-mem-tables")?,
        running_compactions: prop("rocksdb.num-running-compactions")?,
        extra,
        ..EngineStats::default()
    })
}

/// The cumulative counters (tickers) of the statistics `opts` carries,
/// which count every database opened with those options or a copy of them.
pub(crate) fn add_counters(s: &mut EngineStats, opts: &Options, cfg: &RocksConfig) {
    let t = |ticker| Some(opts.get_ticker_count(ticker));
    s.compaction_read_bytes = t(Ticker::CompactReadBytes);
    s.compaction_write_bytes = t(Ticker::CompactWriteBytes);
    s.flush_write_bytes = t(Ticker::FlushWriteBytes);
    s.wal_bytes = t(Ticker::WalFileBytes);
    s.stall_micros = t(Ticker::StallMicros);
    s.block_cache_misses = t(Ticker::BlockCacheMiss);
    s.block_cache_hits = t(Ticker::BlockCacheHit);
    // What a lookup's fan-out costs: filters that ruled a table out, that
    // let a lookup through (true or false positive), and which kind of
    // block missed the cache.
    for (name, ticker) in [
        ("bloom_useful", Ticker::BloomFilterUseful),
        ("bloom_full_positive", Ticker::BloomFilterFullPositive),
        (
            "bloom_full_true_positive",
            Ticker::BloomFilterFullTruePositive,
        ),
        ("block_cache_filter_misses", Ticker::BlockCacheFilterMiss),
        ("block_cache_index_misses", Ticker::BlockCacheIndexMiss),
        ("block_cache_data_misses", Ticker::BlockCacheDataMiss),
        // How commits grouped: written by their own thread (a group's
        // leader) or by another's group, and WAL syncs; what concurrent
        // writers share shows here, beside db_bench's same tickers.
        ("writes_done_by_self", Ticker::WriteDoneBySelf),
        ("writes_done_by_other", Ticker::WriteDoneByOther),
        ("writes_with_wal", Ticker::WriteWithWal),
        ("wal_syncs", Ticker::WalFileSynced),
    ] {
        s.extra.insert(name.into(), opts.get_ticker_count(ticker));
    }
    if cfg.blob.is_some() {
        s.extra.insert(
            "blob_file_bytes_written".into(),
            opts.get_ticker_count(Ticker::BlobDbBlobFileBytesWritten),
        );
        s.extra.insert(
            "blob_gc_bytes_relocated".into(),
            opts.get_ticker_count(Ticker::BlobDbGcBytesRelocated),
        );
    }
}

/// Figures of one block cache that several databases or column families
/// share: each reports the whole of it, so they are kept, not summed.
const SHARED: [&str; 2] = ["block_cache_capacity_bytes", "block_cache_usage_bytes"];

/// Two databases' (or column families') gauges summed; a figure absent in
/// either is absent in the sum (a partial sum would pass for the whole).
pub(crate) fn sum_gauges(a: EngineStats, b: EngineStats) -> EngineStats {
    let sum = |x: Option<u64>, y: Option<u64>| x.zip(y).map(|(x, y)| x + y);
    let files = a
        .files_per_level
        .zip(b.files_per_level)
        .map(|(x, y)| x.iter().zip(&y).map(|(p, q)| p + q).collect());
    let mut extra = a.extra;
    extra.retain(|k, _| b.extra.contains_key(k));
    for (k, v) in b.extra {
        if let Some(x) = extra.get_mut(&k)
            && !SHARED.contains(&k.as_str())
        {
            *x += v;
        }
    }
    EngineStats {
        write_stopped: a.write_stopped.zip(b.write_stopped).map(|(x, y)| x || y),
        files_per_level: files,
        pending_compaction_bytes: sum(a.pending_compaction_bytes, b.pending_compaction_bytes),
        sst_bytes: sum(a.sst_bytes, b.sst_bytes),
        memtable_bytes: sum(a.memtable_bytes, b.memtable_bytes),
        running_compactions: sum(a.running_compactions, b.running_compactions),
        extra,
        ..a
    }
}

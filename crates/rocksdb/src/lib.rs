//! RocksDB backend (through the `rocksdb` crate, which bundles RocksDB's C++).
//!
//! One engine, several configs: leveled compaction (the default), FIFO (the
//! Solana blockstore design: keys mostly increasing, oldest files dropped
//! once over a size cap) and universal. Every option the Stellar ingestion
//! report tuned is a config field, so its setup can be reproduced exactly.

use std::path::{Path, PathBuf};

use kvbench_core::{
    Batch, BatchOp, Capabilities, Durability, EngineStats, Error, KvBackend, KvStore, Op, Result,
    fsutil,
};
use rocksdb::statistics::Ticker;
use rocksdb::{
    BlockBasedOptions, Cache, CompactOptions, DB, DBCompactionStyle, DBCompressionType,
    FifoCompactOptions, Options, WriteBatch, WriteOptions,
};
use serde::{Deserialize, Serialize};

const ENGINE: &str = "rocksdb";
const MIB: u64 = 1 << 20;

/// RocksDB's compaction style.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "style", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Compaction {
    /// Leveled compaction: each level ~10x the one above.
    Leveled,
    /// FIFO: no merging; the oldest SST files are deleted once the total
    /// exceeds `max_table_files_size` bytes.
    Fifo {
        /// Size cap of all SST files, bytes.
        max_table_files_size: u64,
    },
    /// Universal (tiered) compaction.
    Universal,
}

/// Block compression inside RocksDB. The Stellar report compresses in the
/// application and turns this off, which is the default here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Compression {
    /// No block compression.
    None,
    /// LZ4.
    Lz4,
    /// Zstandard.
    Zstd,
}

/// RocksDB settings. Defaults are the Stellar ingestion report's; presets
/// scale the memory ones down for small machines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RocksConfig {
    /// Compaction style.
    pub compaction: Compaction,
    /// Block compression.
    pub compression: Compression,
    /// Memtable size, bytes (report: 512 MiB).
    pub write_buffer_size: u64,
    /// Memtables kept in memory (report: 6).
    pub max_write_buffer_number: i32,
    /// L0 files that trigger compaction (report: 50).
    pub level0_file_num_compaction_trigger: i32,
    /// L0 files that slow writes down; `None` keeps RocksDB's default.
    pub level0_slowdown_writes_trigger: Option<i32>,
    /// L0 files that stop writes; `None` keeps RocksDB's default.
    pub level0_stop_writes_trigger: Option<i32>,
    /// Background flush and compaction threads (report: 20).
    pub max_background_jobs: i32,
    /// Open file limit (report: 5000; -1 is unlimited).
    pub max_open_files: i32,
    /// LRU block cache, bytes (0 keeps RocksDB's 32 MiB default cache).
    pub block_cache_bytes: u64,
    /// Data block size, bytes.
    pub block_size: u64,
    /// Bloom filter bits per key; `None` for no filter.
    pub bloom_bits_per_key: Option<f64>,
    /// O_DIRECT for reads.
    pub use_direct_reads: bool,
    /// O_DIRECT for flush and compaction writes.
    pub use_direct_io_for_flush_and_compaction: bool,
    /// Turn background compaction off (the `none` strategy).
    pub disable_auto_compactions: bool,
    /// Skip the write-ahead log: a commit lives only in the memtable until a
    /// flush (durability `none`).
    pub disable_wal: bool,
    /// Sync the write-ahead log on every commit (`WriteOptions::sync`,
    /// durability `power`); without it the WAL is written but not synced
    /// (durability `process`).
    pub sync_wal: bool,
    /// Sync with fsync instead of fdatasync (`Options::use_fsync`): also
    /// writes back file metadata the data does not need.
    pub use_fsync: bool,
    /// Target SST size at L1, bytes; `None` keeps RocksDB's default (64 MiB).
    pub target_file_size_base: Option<u64>,
    /// Size of L1, bytes; `None` keeps RocksDB's default (256 MiB).
    pub max_bytes_for_level_base: Option<u64>,
}

impl Default for RocksConfig {
    fn default() -> Self {
        Self {
            compaction: Compaction::Leveled,
            compression: Compression::None,
            write_buffer_size: 512 * MIB,
            max_write_buffer_number: 6,
            level0_file_num_compaction_trigger: 50,
            level0_slowdown_writes_trigger: None,
            level0_stop_writes_trigger: None,
            max_background_jobs: 20,
            max_open_files: 5000,
            block_cache_bytes: 0,
            block_size: 4096,
            bloom_bits_per_key: Some(10.0),
            use_direct_reads: false,
            use_direct_io_for_flush_and_compaction: false,
            disable_auto_compactions: false,
            disable_wal: false,
            sync_wal: false,
            use_fsync: false,
            target_file_size_base: None,
            max_bytes_for_level_base: None,
        }
    }
}

impl RocksConfig {
    /// The report's settings with FIFO compaction capped at `cap` bytes.
    pub fn fifo(cap: u64) -> Self {
        Self {
            compaction: Compaction::Fifo {
                max_table_files_size: cap,
            },
            max_open_files: -1,
            ..Self::default()
        }
    }

    fn validate(&self) -> Result<()> {
        let bad = |message: String| {
            Err(Error::Config {
                engine: ENGINE,
                message,
            })
        };
        if self.write_buffer_size < 64 << 10 {
            return bad(format!(
                "write_buffer_size {} is below 64 KiB; use at least 65536",
                self.write_buffer_size
            ));
        }
        if self.max_write_buffer_number < 1 {
            return bad("max_write_buffer_number must be at least 1".into());
        }
        if self.max_background_jobs < 1 {
            return bad("max_background_jobs must be at least 1".into());
        }
        if self.level0_file_num_compaction_trigger < 1 {
            return bad("level0_file_num_compaction_trigger must be at least 1".into());
        }
        if let Compaction::Fifo {
            max_table_files_size,
        } = self.compaction
        {
            if max_table_files_size == 0 {
                return bad("fifo max_table_files_size must be above 0 bytes".into());
            }
            if self.max_open_files != -1 {
                return bad(format!(
                    "FIFO compaction needs max_open_files = -1 (RocksDB keeps every file open to age them out); got {}",
                    self.max_open_files
                ));
            }
        }
        if let Some(b) = self.bloom_bits_per_key
            && !(b > 0.0 && b <= 100.0)
        {
            return bad(format!("bloom_bits_per_key {b} must be in (0, 100]"));
        }
        Ok(())
    }

    fn options(&self) -> Options {
        let mut o = Options::default();
        o.create_if_missing(true);
        o.enable_statistics();
        o.set_compression_type(match self.compression {
            Compression::None => DBCompressionType::None,
            Compression::Lz4 => DBCompressionType::Lz4,
            Compression::Zstd => DBCompressionType::Zstd,
        });
        o.set_write_buffer_size(self.write_buffer_size as usize);
        o.set_max_write_buffer_number(self.max_write_buffer_number);
        o.set_level_zero_file_num_compaction_trigger(self.level0_file_num_compaction_trigger);
        if let Some(n) = self.level0_slowdown_writes_trigger {
            o.set_level_zero_slowdown_writes_trigger(n);
        }
        if let Some(n) = self.level0_stop_writes_trigger {
            o.set_level_zero_stop_writes_trigger(n);
        }
        o.set_max_background_jobs(self.max_background_jobs);
        o.set_max_open_files(self.max_open_files);
        o.set_use_direct_reads(self.use_direct_reads);
        o.set_use_direct_io_for_flush_and_compaction(self.use_direct_io_for_flush_and_compaction);
        o.set_disable_auto_compactions(self.disable_auto_compactions);
        o.set_use_fsync(self.use_fsync);
        if let Some(n) = self.target_file_size_base {
            o.set_target_file_size_base(n);
        }
        if let Some(n) = self.max_bytes_for_level_base {
            o.set_max_bytes_for_level_base(n);
        }
        match &self.compaction {
            Compaction::Leveled => o.set_compaction_style(DBCompactionStyle::Level),
            Compaction::Universal => o.set_compaction_style(DBCompactionStyle::Universal),
            Compaction::Fifo {
                max_table_files_size,
            } => {
                o.set_compaction_style(DBCompactionStyle::Fifo);
                let mut f = FifoCompactOptions::default();
                f.set_max_table_files_size(*max_table_files_size);
                o.set_fifo_compaction_options(&f);
            }
        }
        let mut t = BlockBasedOptions::default();
        t.set_block_size(self.block_size as usize);
        if self.block_cache_bytes > 0 {
            t.set_block_cache(&Cache::new_lru_cache(self.block_cache_bytes as usize));
        }
        if let Some(bits) = self.bloom_bits_per_key {
            t.set_bloom_filter(bits, false);
        }
        o.set_block_based_table_factory(&t);
        o
    }
}

/// The RocksDB backend.
pub struct Rocks;

/// An open RocksDB store.
pub struct RocksStore {
    db: DB,
    // Statistics live in the Options object RocksDB was opened with.
    opts: Options,
    cfg: RocksConfig,
    // Built once: the durability level fixes them for the store's life.
    write_opts: WriteOptions,
    path: PathBuf,
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

    fn version(store_dir: &Path) -> Option<String> {
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

    fn open(dir: &Path, cfg: &RocksConfig) -> Result<RocksStore> {
        cfg.validate()?;
        fsutil::claim_store_dir(ENGINE, dir)?;
        let opts = cfg.options();
        let db = DB::open(&opts, dir).map_err(|e| engine_err(Op::Open, dir, e))?;
        let mut write_opts = WriteOptions::default();
        write_opts.set_sync(cfg.sync_wal && !cfg.disable_wal);
        write_opts.disable_wal(cfg.disable_wal);
        Ok(RocksStore {
            db,
            opts,
            write_opts,
            cfg: cfg.clone(),
            path: dir.to_path_buf(),
        })
    }
}

fn engine_err(op: Op, path: &Path, e: rocksdb::Error) -> Error {
    Error::Engine {
        engine: ENGINE,
        op,
        path: path.to_path_buf(),
        message: e.into_string(),
    }
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

    fn prop(&self, name: &str) -> Result<Option<u64>> {
        self.db
            .property_int_value(name)
            .map_err(|e| self.err(Op::Stats, e))
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
        out.clear();
        match self.db.get_pinned(key).map_err(|e| self.err(Op::Get, e))? {
            Some(v) => {
                out.extend_from_slice(&v);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        let mut wb = WriteBatch::default();
        for op in batch.iter() {
            match op {
                BatchOp::Put(k, v) => wb.put(k, v),
                BatchOp::Delete(k) => wb.delete(k),
            }
        }
        self.db
            .write_opt(wb, &self.write_opts)
            .map_err(|e| self.err(Op::Write, e))
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
        let t = |ticker| Some(self.opts.get_ticker_count(ticker));
        let levels = match self.cfg.compaction {
            Compaction::Fifo { .. } => 1,
            _ => 7,
        };
        // All levels or none: a level RocksDB does not report is not 0 files.
        let mut files = Some(Vec::with_capacity(levels));
        for l in 0..levels {
            let n = self.prop(&format!("rocksdb.num-files-at-level{l}"))?;
            files = files.zip(n).map(|(mut v, n)| {
                v.push(n);
                v
            });
        }
        let mut extra = std::collections::BTreeMap::new();
        for (name, prop) in [
            ("estimate_num_keys", "rocksdb.estimate-num-keys"),
            (
                "actual_delayed_write_rate",
                "rocksdb.actual-delayed-write-rate",
            ),
            ("num_running_flushes", "rocksdb.num-running-flushes"),
            ("total_sst_files_size", "rocksdb.total-sst-files-size"),
        ] {
            if let Some(v) = self.prop(prop)? {
                extra.insert(name.to_string(), v);
            }
        }
        Ok(EngineStats {
            compaction_read_bytes: t(Ticker::CompactReadBytes),
            compaction_write_bytes: t(Ticker::CompactWriteBytes),
            flush_write_bytes: t(Ticker::FlushWriteBytes),
            wal_bytes: t(Ticker::WalFileBytes),
            stall_micros: t(Ticker::StallMicros),
            block_cache_misses: t(Ticker::BlockCacheMiss),
            block_cache_hits: t(Ticker::BlockCacheHit),
            write_stopped: self.prop("rocksdb.is-write-stopped")?.map(|v| v != 0),
            files_per_level: files,
            pending_compaction_bytes: self.prop("rocksdb.estimate-pending-compaction-bytes")?,
            sst_bytes: self.prop("rocksdb.live-sst-files-size")?,
            memtable_bytes: self.prop("rocksdb.cur-size-all-mem-tables")?,
            running_compactions: self.prop("rocksdb.num-running-compactions")?,
            extra,
            ..EngineStats::default()
        })
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            ordered_iteration: true,
            manual_compaction: true,
            evicts_oldest: matches!(self.cfg.compaction, Compaction::Fifo { .. }),
            persistent: true,
        }
    }

    fn close(self: Box<Self>) -> Result<()> {
        // Flush so a reopen does not replay the WAL, and so disable_wal stores keep their data.
        self.db.flush().map_err(|e| self.err(Op::Close, e))?;
        drop(self);
        Ok(())
    }
}

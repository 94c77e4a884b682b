//! RocksDB settings: every option the Stellar ingestion report tuned, and
//! the designs a chain would try for a write-once hash-keyed store
//! (BlobDB's blob files, tuned L0 triggers and dynamic level sizes).

use ledgerbench_core::{Error, Result};
use rocksdb::{
    BlockBasedOptions, Cache, DBCompactionStyle, DBCompressionType, FifoCompactOptions, Options,
};
use serde::{Deserialize, Serialize};

use crate::{ENGINE, MIB};

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
    /// Level sizes set from the last level up
    /// (`level_compaction_dynamic_level_bytes`), so most data sits in the
    /// last level and space amplification stays near 1.1; `None` keeps
    /// RocksDB's default (on since 8.4).
    pub level_compaction_dynamic_level_bytes: Option<bool>,
    /// Keep index and filter blocks in the block cache (bounded by it)
    /// instead of in each open table's own memory, which grows with the
    /// number of files: what many databases in one process need.
    pub cache_index_and_filter_blocks: bool,
    /// Integrated BlobDB: values of at least `min_blob_size` bytes go to
    /// blob files that compaction does not rewrite; `None` keeps every
    /// value in the SSTs.
    pub blob: Option<Blob>,
    /// Record RocksDB's own query trace of each store into
    /// `DIR/<store>.trace` (for `ledgerbench import rocksdb-trace`); `None`
    /// traces nothing. The plain RocksDB backends only.
    pub trace_dir: Option<std::path::PathBuf>,
}

/// BlobDB settings (RocksDB's integrated blob files).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Blob {
    /// Values this size or larger are stored in blob files, bytes.
    pub min_blob_size: u64,
    /// Target size of a blob file, bytes.
    pub blob_file_size: u64,
    /// Relocate live blobs out of the oldest files during compaction, so
    /// space held by overwritten or deleted values comes back.
    pub enable_blob_garbage_collection: bool,
    /// Fraction of the oldest blob files garbage collection works on.
    pub blob_garbage_collection_age_cutoff: f64,
}

impl Default for Blob {
    /// Transaction records (about 1.1 KB compressed) and ledgers (about
    /// 150 KB) go to blob files; 4-byte index values stay inline.
    fn default() -> Self {
        Self {
            min_blob_size: 256,
            blob_file_size: 256 * MIB,
            enable_blob_garbage_collection: true,
            blob_garbage_collection_age_cutoff: 0.25,
        }
    }
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
            level_compaction_dynamic_level_bytes: None,
            cache_index_and_filter_blocks: false,
            blob: None,
            trace_dir: None,
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

    /// The report's settings with BlobDB's blob files for values of 256
    /// bytes or more, so compaction moves only keys and blob references.
    pub fn blob() -> Self {
        Self {
            blob: Some(Blob::default()),
            ..Self::default()
        }
    }

    /// Leveled compaction with RocksDB's own L0 triggers (4 files to
    /// compact, 20 to slow down, 36 to stop) instead of the report's 50, and
    /// level sizes set from the last level up: compaction keeps pace with
    /// each batch instead of meeting a pile of L0 files at the end.
    pub fn tuned() -> Self {
        Self {
            level0_file_num_compaction_trigger: 4,
            level0_slowdown_writes_trigger: Some(20),
            level0_stop_writes_trigger: Some(36),
            level_compaction_dynamic_level_bytes: Some(true),
            ..Self::default()
        }
    }

    pub(crate) fn validate(&self) -> Result<()> {
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
        if let Some(b) = &self.blob {
            if b.blob_file_size < MIB {
                return bad("blob.blob_file_size must be at least 1 MiB".into());
            }
            if !(0.0..=1.0).contains(&b.blob_garbage_collection_age_cutoff) {
                return bad(format!(
                    "blob.blob_garbage_collection_age_cutoff {} must be in [0, 1]",
                    b.blob_garbage_collection_age_cutoff
                ));
            }
        }
        Ok(())
    }

    /// What this config's durability asks of a commit: (sync the WAL, write
    /// no WAL); no WAL wins over a sync.
    pub(crate) fn wal(&self) -> (bool, bool) {
        (self.sync_wal && !self.disable_wal, self.disable_wal)
    }

    /// The write options of this config's durability (see [`Self::wal`]).
    pub(crate) fn write_options(&self) -> rocksdb::WriteOptions {
        let (sync, no_wal) = self.wal();
        let mut w = rocksdb::WriteOptions::default();
        w.set_sync(sync);
        w.disable_wal(no_wal);
        w
    }

    /// One block cache of this config's size for stores of several
    /// databases or families to share, so their memory does not grow with
    /// their number; `None` when the config has no block cache.
    pub(crate) fn shared_cache(&self) -> Option<Cache> {
        (self.block_cache_bytes > 0).then(|| Cache::new_lru_cache(self.block_cache_bytes as usize))
    }

    /// The options of a store, its block cache shared with `cache` when
    /// given (the partitions of one partitioned store share one).
    pub(crate) fn options_with(&self, cache: Option<&Cache>) -> Options {
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
        if let Some(on) = self.level_compaction_dynamic_level_bytes {
            o.set_level_compaction_dynamic_level_bytes(on);
        }
        if let Some(b) = &self.blob {
            o.set_enable_blob_files(true);
            o.set_min_blob_size(b.min_blob_size);
            o.set_blob_file_size(b.blob_file_size);
            o.set_enable_blob_gc(b.enable_blob_garbage_collection);
            o.set_blob_gc_age_cutoff(b.blob_garbage_collection_age_cutoff);
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
        if self.cache_index_and_filter_blocks {
            t.set_cache_index_and_filter_blocks(true);
            // L0 filters and the top-level index stay pinned: without them
            // every lookup would fault them back in from the cache.
            t.set_pin_l0_filter_and_index_blocks_in_cache(true);
            t.set_pin_top_level_index_and_filter(true);
        }
        match cache {
            Some(c) => t.set_block_cache(c),
            None if self.block_cache_bytes > 0 => {
                t.set_block_cache(&Cache::new_lru_cache(self.block_cache_bytes as usize));
            }
            None => {}
        }
        if let Some(bits) = self.bloom_bits_per_key {
            t.set_bloom_filter(bits, false);
        }
        o.set_block_based_table_factory(&t);
        o
    }
}

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// MDBX page-operation counters since the environment was first opened
/// (`mdbx_env_info_ex`, `mi_pgop_stat`). Units: pages, except where noted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageOps {
    /// Pages newly allocated.
    pub newly: u64,
    /// Pages copied for update (copy-on-write).
    pub cow: u64,
    /// Dirty pages cloned for nested transactions.
    pub clone: u64,
    /// Page splits.
    pub split: u64,
    /// Page merges.
    pub merge: u64,
    /// Dirty pages spilled to disk before commit.
    pub spill: u64,
    /// Spilled pages reloaded.
    pub unspill: u64,
    /// Explicit write operations (calls, not pages).
    pub wops: u64,
    /// Prefault write operations (calls).
    pub prefault: u64,
    /// `mincore()` calls.
    pub mincore: u64,
    /// Explicit `msync` calls.
    pub msync: u64,
    /// Explicit `fsync` calls.
    pub fsync: u64,
}

/// What an engine says about itself. Every field is optional: `None` means
/// the engine cannot report it, never zero. Serialized without the absent
/// fields, so a result file never shows a number that was not measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EngineStats {
    /// Bytes read by compactions (RocksDB `rocksdb.compact.read.bytes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction_read_bytes: Option<u64>,
    /// Bytes written by compactions (`rocksdb.compact.write.bytes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction_write_bytes: Option<u64>,
    /// Bytes written by memtable flushes (`rocksdb.flush.write.bytes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flush_write_bytes: Option<u64>,
    /// Bytes written to the write-ahead log (`rocksdb.wal.bytes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wal_bytes: Option<u64>,
    /// Microseconds writers were stalled (`rocksdb.stall.micros`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall_micros: Option<u64>,
    /// Whether writes are stopped right now (`rocksdb.is-write-stopped`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_stopped: Option<bool>,
    /// Block-cache misses (count).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_cache_misses: Option<u64>,
    /// Block-cache hits (count).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_cache_hits: Option<u64>,
    /// SST files per LSM level, level 0 first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_per_level: Option<Vec<u64>>,
    /// Estimated bytes compaction still has to rewrite.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_compaction_bytes: Option<u64>,
    /// Total size of live SST files, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sst_bytes: Option<u64>,
    /// Bytes held in memtables.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memtable_bytes: Option<u64>,
    /// Number of compactions running now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running_compactions: Option<u64>,
    /// B-tree depth (levels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree_depth: Option<u32>,
    /// B-tree branch pages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch_pages: Option<u64>,
    /// B-tree leaf pages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf_pages: Option<u64>,
    /// B-tree overflow pages (values larger than a page).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overflow_pages: Option<u64>,
    /// Page size, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_size: Option<u32>,
    /// Number of key-value entries the engine counts exactly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entries: Option<u64>,
    /// Size of the memory map, bytes (LMDB, MDBX).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub map_bytes: Option<u64>,
    /// Last used page number (LMDB, MDBX): the high-water mark of the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_page: Option<u64>,
    /// MDBX page-operation counters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_ops: Option<PageOps>,
    /// Engine-specific counters not named above, by the engine's own name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, u64>,
}

impl EngineStats {
    /// Bytes the engine says it wrote to its files: flush + compaction + WAL
    /// for an LSM, (newly + cow) pages x page size for MDBX. `None` when the
    /// engine does not count it.
    pub fn engine_write_bytes(&self) -> Option<u64> {
        if let (Some(f), Some(c)) = (self.flush_write_bytes, self.compaction_write_bytes) {
            return self.wal_bytes.map(|w| f + c + w);
        }
        match (self.page_ops, self.page_size) {
            (Some(p), Some(ps)) => Some((p.newly + p.cow) * u64::from(ps)),
            _ => None,
        }
    }
}

/// A store's footprint on disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskUsage {
    /// Bytes of allocated blocks (`st_blocks` x 512): what the store costs.
    pub allocated_bytes: u64,
    /// Sum of the files' apparent lengths (`st_size`): sparse files make this larger.
    pub apparent_bytes: u64,
    /// Number of regular files.
    pub files: u64,
}

/// How much a monotonic engine counter grew from `before` to `after`. Absent
/// when either reading is, and when the counter went backwards: the engine
/// restarted its count (RocksDB's tickers after a reopen), so the growth is
/// unknown, never a made-up 0.
pub fn counter_delta(after: Option<u64>, before: Option<u64>) -> Option<u64> {
    after?.checked_sub(before?)
}

//! redb backend: a pure-Rust copy-on-write B-tree in one file, read through
//! its own page cache (pread, not mmap), one writer at a time.
//!
//! Durability: redb has two commit modes, `Immediate` (fsync before the
//! commit returns) and `None` (not persisted until a later `Immediate`
//! commit; after any crash, kill -9 included, the store reopens at the last
//! durable commit). It has no mode that survives kill -9 without an fsync,
//! so ledgerbench's `process` level costs redb what `power` does: a finding of
//! the engine's design (`RedbConfig::immediate`).

use std::path::{Path, PathBuf};
use std::sync::RwLock;

use ledgerbench_core::{
    Batch, BatchOp, Capabilities, Durability, EngineStats, Error, KvBackend, KvStore, Op, Result,
    fsutil,
};
use redb::{ReadableDatabase, TableDefinition};
use serde::{Deserialize, Serialize};

const ENGINE: &str = "redb";
const FILE: &str = "data.redb";
const KV: TableDefinition<&[u8], &[u8]> = TableDefinition::new("kv");

/// redb settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedbConfig {
    /// redb's page cache, bytes (redb's default: 1 GiB).
    pub cache_bytes: u64,
    /// The level the run asked for. `process` and `power` commit
    /// `Immediate` (fsync'd); `none` commits `None`, made durable by
    /// `flush` (see [`RedbConfig::immediate`]).
    pub level: Durability,
}

impl RedbConfig {
    /// Whether every commit is `Immediate`: redb has no commit that
    /// survives kill -9 without an fsync, so every level above `none`.
    pub fn immediate(&self) -> bool {
        self.level != Durability::None
    }
}

impl Default for RedbConfig {
    fn default() -> Self {
        Self {
            cache_bytes: 1 << 30,
            level: Durability::Process,
        }
    }
}

/// The redb backend.
pub struct Redb;

/// An open redb store. The lock is only taken for writing by `compact`,
/// which redb allows only with no transaction open.
pub struct RedbStore {
    db: RwLock<redb::Database>,
    cfg: RedbConfig,
    path: PathBuf,
}

fn engine_err(op: Op, path: &Path, e: impl std::fmt::Display) -> Error {
    Error::engine(ENGINE, op, path, e)
}

impl KvBackend for Redb {
    const NAME: &'static str = ENGINE;
    type Config = RedbConfig;
    type Store = RedbStore;

    fn set_durability(cfg: &mut RedbConfig, level: Durability) -> Result<()> {
        cfg.level = level;
        Ok(())
    }

    fn durability(cfg: &RedbConfig) -> Durability {
        cfg.level
    }

    fn read_path(_cfg: &Self::Config) -> ledgerbench_core::ReadPath {
        ledgerbench_core::ReadPath::Buffered
    }

    fn version(_cfg: &Self::Config, _store_dir: &Path) -> Option<String> {
        Some(engine_version().to_string())
    }

    fn scale_memory(cfg: &mut RedbConfig, bytes: u64) {
        cfg.cache_bytes = bytes;
    }

    /// Its cache is the budget, and it opens with 1 MiB at least.
    fn memory_floor(_cfg: &RedbConfig) -> u64 {
        1 << 20
    }

    fn open(dir: &Path, cfg: &RedbConfig) -> Result<RedbStore> {
        if cfg.cache_bytes < 1 << 20 {
            return Err(Error::Config {
                engine: ENGINE,
                message: format!("cache_bytes {} is below 1 MiB", cfg.cache_bytes),
            });
        }
        fsutil::claim_store_dir(ENGINE, dir)?;
        let file = dir.join(FILE);
        let db = redb::Builder::new()
            .set_cache_size(cfg.cache_bytes as usize)
            .create(&file)
            .map_err(|e| engine_err(Op::Open, dir, e))?;
        // The table exists from the start, so readers never meet its absence.
        let tx = db.begin_write().map_err(|e| engine_err(Op::Open, dir, e))?;
        tx.open_table(KV)
            .map_err(|e| engine_err(Op::Open, dir, e))?;
        tx.commit().map_err(|e| engine_err(Op::Open, dir, e))?;
        Ok(RedbStore {
            db: RwLock::new(db),
            cfg: cfg.clone(),
            path: dir.to_path_buf(),
        })
    }
}

/// The redb version ledgerbench was built with.
pub fn engine_version() -> &'static str {
    "4.6"
}

impl RedbStore {
    fn err(&self, op: Op, e: impl std::fmt::Display) -> Error {
        engine_err(op, &self.path, e)
    }

    fn db(&self) -> std::sync::RwLockReadGuard<'_, redb::Database> {
        self.db.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Commits `fill` in one write transaction at the configured durability
    /// (or `Immediate` when `durable`).
    fn commit(
        &self,
        op: Op,
        durable: bool,
        fill: impl FnOnce(&mut redb::Table<&[u8], &[u8]>) -> Result<()>,
    ) -> Result<()> {
        let db = self.db();
        let mut tx = db.begin_write().map_err(|e| self.err(op, e))?;
        let level = if durable || self.cfg.immediate() {
            redb::Durability::Immediate
        } else {
            redb::Durability::None
        };
        tx.set_durability(level).map_err(|e| self.err(op, e))?;
        {
            let mut t = tx.open_table(KV).map_err(|e| self.err(op, e))?;
            // An error drops `tx` uncommitted: nothing of the batch lands.
            fill(&mut t)?;
        }
        tx.commit().map_err(|e| self.err(op, e))
    }
}

impl KvStore for RedbStore {
    fn engine(&self) -> &'static str {
        ENGINE
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        out.clear();
        let db = self.db();
        let tx = db.begin_read().map_err(|e| self.err(Op::Get, e))?;
        let t = tx.open_table(KV).map_err(|e| self.err(Op::Get, e))?;
        match t.get(key).map_err(|e| self.err(Op::Get, e))? {
            Some(v) => {
                out.extend_from_slice(v.value());
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        // A delete per key the range holds, found by a scan just before.
        let batch = ledgerbench_core::ranges::expand(self, batch)?;
        self.commit(Op::Write, false, |t| {
            for op in batch.iter() {
                match op {
                    BatchOp::Put(k, v) => t.insert(k, v).map(|_| ()),
                    BatchOp::Delete(k) => t.remove(k).map(|_| ()),
                    BatchOp::DeleteRange(..) => unreachable!("range deletes were expanded above"),
                }
                .map_err(|e| self.err(Op::Write, e))?;
            }
            Ok(())
        })
    }

    fn scan(&self, start: &[u8], visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        let db = self.db();
        let tx = db.begin_read().map_err(|e| self.err(Op::Iterate, e))?;
        let t = tx.open_table(KV).map_err(|e| self.err(Op::Iterate, e))?;
        let range = t.range(start..).map_err(|e| self.err(Op::Iterate, e))?;
        for item in range {
            let (k, v) = item.map_err(|e| self.err(Op::Iterate, e))?;
            if !visit(k.value(), v.value()) {
                break;
            }
        }
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        // An empty `Immediate` commit makes every earlier `None` commit durable.
        if self.cfg.immediate() {
            return Ok(());
        }
        self.commit(Op::Flush, true, |_| Ok(()))
    }

    fn compact(&self) -> Result<()> {
        let mut db = self.db.write().unwrap_or_else(|e| e.into_inner());
        db.compact().map_err(|e| self.err(Op::Compact, e))?;
        Ok(())
    }

    fn stats(&self) -> Result<EngineStats> {
        let db = self.db();
        // A write transaction sees the newest state; dropped uncommitted.
        let tx = db.begin_write().map_err(|e| self.err(Op::Stats, e))?;
        let s = tx.stats().map_err(|e| self.err(Op::Stats, e))?;
        tx.abort().map_err(|e| self.err(Op::Stats, e))?;
        let mut extra = std::collections::BTreeMap::new();
        extra.insert("allocated_pages".into(), s.allocated_pages());
        extra.insert("stored_bytes".into(), s.stored_bytes());
        extra.insert("metadata_bytes".into(), s.metadata_bytes());
        extra.insert("fragmented_bytes".into(), s.fragmented_bytes());
        Ok(EngineStats {
            tree_depth: Some(s.tree_height()),
            branch_pages: Some(s.branch_pages()),
            leaf_pages: Some(s.leaf_pages()),
            page_size: u32::try_from(s.page_size()).ok(),
            extra,
            ..EngineStats::default()
        })
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            // redb's compaction returns free pages to the file's end; it is
            // what "full compaction" means for this engine.
            manual_compaction: true,
            ..Capabilities::BTREE
        }
    }

    fn close(self: Box<Self>) -> Result<()> {
        if !self.cfg.immediate() {
            self.flush()?;
        }
        Ok(())
    }
}

//! fjall backend: a pure-Rust LSM tree (lsm-tree underneath), one keyspace
//! per store, a journal shared by the database.
//!
//! Durability maps onto fjall's journal: `none` leaves each commit in the
//! journal's user-space buffer (a kill -9 may lose it), `process` hands it
//! to the OS on every commit (`PersistMode::Buffer`), `power` fsyncs the
//! journal on every commit (`PersistMode::SyncAll`). `flush` fsyncs the
//! journal; memtables are written out as tables by fjall's own workers.

use std::path::{Path, PathBuf};

use fjall::{Database, Keyspace, KeyspaceCreateOptions, KvSeparationOptions, PersistMode};
use ledgerbench_core::{
    Batch, BatchOp, Capabilities, Durability, EngineStats, Error, KvBackend, KvStore, Op, Result,
    fsutil,
};
use serde::{Deserialize, Serialize};

const ENGINE: &str = "fjall";
const KEYSPACE: &str = "kv";
/// lsm-tree stores a key's length in 16 bits.
const MAX_KEY: usize = u16::MAX as usize;

/// What each commit does with the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Persist {
    /// Left in the journal's buffer (durability `none`).
    Nothing,
    /// Written to the OS (durability `process`).
    Buffer,
    /// Written and fsync'd (durability `power`).
    SyncAll,
}

/// fjall settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FjallConfig {
    /// Block cache, bytes.
    pub cache_bytes: u64,
    /// Largest memtable before it is flushed, bytes.
    pub max_memtable_bytes: u64,
    /// What each commit does with the journal.
    pub persist: Persist,
    /// Values of this many bytes or more go to blob files, apart from the
    /// keys (fjall's key-value separation: compactions move a pointer, not
    /// the value); none, fjall's default, keeps every value in the tables.
    pub blob_threshold: Option<u32>,
}

impl Default for FjallConfig {
    fn default() -> Self {
        Self {
            cache_bytes: 64 << 20,
            max_memtable_bytes: 64 << 20,
            persist: Persist::Buffer,
            blob_threshold: None,
        }
    }
}

/// The fjall backend.
pub struct Fjall;

/// An open fjall store.
pub struct FjallStore {
    db: Database,
    ks: Keyspace,
    cfg: FjallConfig,
    path: PathBuf,
}

fn engine_err(op: Op, path: &Path, e: impl std::fmt::Display) -> Error {
    Error::engine(ENGINE, op, path, e)
}

/// The fjall version ledgerbench was built with.
pub fn engine_version() -> &'static str {
    "3.1"
}

impl KvBackend for Fjall {
    const NAME: &'static str = ENGINE;
    type Config = FjallConfig;
    type Store = FjallStore;

    fn set_durability(cfg: &mut FjallConfig, level: Durability) -> Result<()> {
        cfg.persist = match level {
            Durability::None => Persist::Nothing,
            Durability::Process => Persist::Buffer,
            Durability::Power => Persist::SyncAll,
        };
        Ok(())
    }

    fn durability(cfg: &FjallConfig) -> Durability {
        match cfg.persist {
            Persist::Nothing => Durability::None,
            Persist::Buffer => Durability::Process,
            Persist::SyncAll => Durability::Power,
        }
    }

    fn read_path(_cfg: &Self::Config) -> ledgerbench_core::ReadPath {
        ledgerbench_core::ReadPath::Buffered
    }

    fn version(_cfg: &Self::Config, _store_dir: &Path) -> Option<String> {
        Some(engine_version().to_string())
    }

    fn scale_memory(cfg: &mut FjallConfig, bytes: u64) {
        cfg.cache_bytes = (bytes / 2).max(1 << 20);
        cfg.max_memtable_bytes = (bytes / 4).max(1 << 20);
    }

    /// A memtable of 1 MiB (a quarter of the budget) at least.
    fn memory_floor(_cfg: &FjallConfig) -> u64 {
        4 << 20
    }

    fn open(dir: &Path, cfg: &FjallConfig) -> Result<FjallStore> {
        if cfg.max_memtable_bytes < 1 << 20 {
            return Err(Error::Config {
                engine: ENGINE,
                message: format!(
                    "max_memtable_bytes {} is below 1 MiB",
                    cfg.max_memtable_bytes
                ),
            });
        }
        fsutil::claim_store_dir(ENGINE, dir)?;
        let db = Database::builder(dir.join("db"))
            .cache_size(cfg.cache_bytes)
            // Commits hand the journal to the OS only when asked (below).
            .manual_journal_persist(true)
            .open()
            .map_err(|e| engine_err(Op::Open, dir, e))?;
        let memtable = cfg.max_memtable_bytes;
        let blobs = cfg
            .blob_threshold
            .map(|t| KvSeparationOptions::default().separation_threshold(t));
        let ks = db
            .keyspace(KEYSPACE, || {
                KeyspaceCreateOptions::default()
                    .max_memtable_size(memtable)
                    .with_kv_separation(blobs)
            })
            .map_err(|e| engine_err(Op::Open, dir, e))?;
        Ok(FjallStore {
            db,
            ks,
            cfg: cfg.clone(),
            path: dir.to_path_buf(),
        })
    }
}

impl FjallStore {
    fn err(&self, op: Op, e: impl std::fmt::Display) -> Error {
        engine_err(op, &self.path, e)
    }
}

impl KvStore for FjallStore {
    fn engine(&self) -> &'static str {
        ENGINE
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        out.clear();
        // lsm-tree cannot hold an empty or over-long key, so none is stored.
        if key.is_empty() || key.len() > MAX_KEY {
            return Ok(false);
        }
        match self.ks.get(key).map_err(|e| self.err(Op::Get, e))? {
            Some(v) => {
                out.extend_from_slice(&v);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        // fjall has no range delete: a delete per key the range holds.
        let batch = ledgerbench_core::ranges::expand(self, batch)?;
        let mut b = self.db.batch();
        for op in batch.iter() {
            // Checked as the batch is built (lsm-tree panics on these keys);
            // an error drops it uncommitted, so nothing of it is written.
            let key = op.key();
            if key.is_empty() {
                return Err(self.err(Op::Write, "fjall cannot store an empty key"));
            }
            if let Some(e) = Error::key_too_long(ENGINE, &self.path, key, MAX_KEY) {
                return Err(e);
            }
            match op {
                BatchOp::Put(k, v) => b.insert(&self.ks, k, v),
                BatchOp::Delete(k) => b.remove(&self.ks, k),
                BatchOp::DeleteRange(..) => unreachable!("range deletes were expanded above"),
            }
        }
        let b = b.durability(match self.cfg.persist {
            Persist::Nothing => None,
            Persist::Buffer => Some(PersistMode::Buffer),
            Persist::SyncAll => Some(PersistMode::SyncAll),
        });
        b.commit().map_err(|e| self.err(Op::Write, e))
    }

    fn scan(&self, start: &[u8], visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        for item in self.ks.range(start..) {
            let (k, v) = item.into_inner().map_err(|e| self.err(Op::Iterate, e))?;
            if !visit(&k, &v) {
                break;
            }
        }
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        // The journal to disk: what fjall's public API offers. Memtables
        // become tables when full, by fjall's own workers; its blocking
        // "rotate and wait" (a test helper) waits forever when that flush
        // fails on a full disk.
        self.db
            .persist(PersistMode::SyncAll)
            .map_err(|e| self.err(Op::Flush, e))
    }

    fn compact(&self) -> Result<()> {
        self.ks
            .major_compact()
            .map_err(|e| self.err(Op::Compact, e))
    }

    fn stats(&self) -> Result<EngineStats> {
        let mut extra = std::collections::BTreeMap::new();
        extra.insert("l0_tables".into(), self.ks.l0_table_count() as u64);
        extra.insert("tables".into(), self.ks.table_count() as u64);
        extra.insert("disk_space".into(), self.ks.disk_space());
        extra.insert("journals".into(), self.db.journal_count() as u64);
        extra.insert(
            "compactions_completed".into(),
            self.db.compactions_completed() as u64,
        );
        Ok(EngineStats {
            running_compactions: Some(self.db.active_compactions() as u64),
            extra,
            ..EngineStats::default()
        })
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
        self.db
            .persist(PersistMode::SyncAll)
            .map_err(|e| self.err(Op::Close, e))
    }
}

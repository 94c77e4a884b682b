//! LMDB backend through heed: one B+tree in a memory map, copy-on-write pages,
//! a single writer.

use std::ops::Bound;
use std::path::{Path, PathBuf};

use heed::types::Bytes;
use heed::{CommitOrAbort, Database, Env, EnvFlags, EnvOpenOptions, MdbError, WithoutTls};
use ledgerbench_core::{
    Batch, BatchOp, Capabilities, Durability, EngineStats, Error, KvBackend, KvStore, Op, Result,
    fsutil,
};
use serde::{Deserialize, Serialize};

const ENGINE: &str = "lmdb";

/// LMDB settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LmdbConfig {
    /// Size of the memory map, bytes: the largest the store can grow.
    pub map_size: u64,
    /// MDB_NOSYNC: commits do not sync; the OS writes pages back in any
    /// order, so a power cut may corrupt the store (durability `none`).
    pub no_sync: bool,
    /// MDB_NOMETASYNC: each commit syncs its data pages but not the meta
    /// page, which the next commit's sync carries; a power cut may undo the
    /// last commit but not corrupt (durability `process`). With both flags
    /// off every commit syncs data and meta (LMDB's default, `power`).
    pub no_meta_sync: bool,
    /// MDB_WRITEMAP: write through the writable map instead of `pwrite`.
    pub write_map: bool,
    /// MDB_NORDAHEAD: no read-ahead on the map (helps random reads when the
    /// data set exceeds memory).
    pub no_read_ahead: bool,
}

impl Default for LmdbConfig {
    fn default() -> Self {
        Self {
            map_size: 64 << 30,
            no_sync: false,
            no_meta_sync: true,
            write_map: false,
            no_read_ahead: true,
        }
    }
}

/// The LMDB backend.
pub struct Lmdb;

/// An open LMDB store.
pub struct LmdbStore {
    env: Env<WithoutTls>,
    db: Database<'static, Bytes, Bytes>,
    path: PathBuf,
}

/// The linked LMDB library's version, e.g. `0.9.70`.
pub fn engine_version() -> String {
    let v = heed::lmdb_version();
    format!("{}.{}.{}", v.major, v.minor, v.patch)
}

fn map_err(op: Op, path: &Path, e: heed::Error) -> Error {
    match e {
        heed::Error::Mdb(MdbError::MapFull) => Error::Full {
            engine: ENGINE,
            op,
            path: path.to_path_buf(),
            setting: "map_size",
            message: "MDB_MAP_FULL: the memory map is full".into(),
        },
        heed::Error::Io(source) => Error::Io {
            engine: ENGINE,
            op,
            path: path.to_path_buf(),
            source,
        },
        other => Error::engine(ENGINE, op, path, other),
    }
}

impl KvBackend for Lmdb {
    const NAME: &'static str = ENGINE;
    type Config = LmdbConfig;
    type Store = LmdbStore;

    fn set_durability(cfg: &mut LmdbConfig, level: Durability) -> Result<()> {
        (cfg.no_sync, cfg.no_meta_sync) = match level {
            Durability::None => (true, false),
            Durability::Process => (false, true),
            Durability::Power => (false, false),
        };
        Ok(())
    }

    fn durability(cfg: &LmdbConfig) -> Durability {
        match (cfg.no_sync, cfg.no_meta_sync) {
            (true, _) => Durability::None,
            (false, true) => Durability::Process,
            (false, false) => Durability::Power,
        }
    }

    fn read_path(_cfg: &Self::Config) -> ledgerbench_core::ReadPath {
        ledgerbench_core::ReadPath::Mmap
    }

    fn version(_cfg: &Self::Config, _store_dir: &Path) -> Option<String> {
        Some(engine_version())
    }

    fn open(dir: &Path, cfg: &LmdbConfig) -> Result<LmdbStore> {
        if cfg.map_size < 1 << 20 {
            return Err(Error::Config {
                engine: ENGINE,
                message: format!("map_size {} is below 1 MiB", cfg.map_size),
            });
        }
        fsutil::claim_store_dir(ENGINE, dir)?;
        let mut flags = EnvFlags::empty();
        if cfg.no_sync {
            flags |= EnvFlags::NO_SYNC;
        }
        if cfg.no_meta_sync {
            flags |= EnvFlags::NO_META_SYNC;
        }
        if cfg.write_map {
            flags |= EnvFlags::WRITE_MAP;
        }
        if cfg.no_read_ahead {
            flags |= EnvFlags::NO_READ_AHEAD;
        }
        let mut opts = EnvOpenOptions::new().read_txn_without_tls();
        opts.map_size(cfg.map_size as usize).max_dbs(1);
        // SAFETY: heed requires that the same env is not opened twice in one
        // process with different flags and that the files are not modified by
        // other means while open; ledgerbench opens each store directory once and
        // claims it with a marker so no one else uses it.
        let env = unsafe {
            opts.flags(flags);
            opts.open(dir)
        }
        .map_err(|e| map_err(Op::Open, dir, e))?;
        let wtxn = env.write_txn().map_err(|e| map_err(Op::Open, dir, e))?;
        let db: Database<'static, Bytes, Bytes> = env
            .create_databases_and_commit(wtxn, |opener, wtxn| {
                opener
                    .create_database(wtxn, None)
                    .map(CommitOrAbort::<_, ()>::Commit)
            })
            .map_err(|e| map_err(Op::Open, dir, e))?
            .unwrap_commit();
        Ok(LmdbStore {
            env,
            db,
            path: dir.to_path_buf(),
        })
    }
}

impl LmdbStore {
    fn err(&self, op: Op, e: heed::Error) -> Error {
        map_err(op, &self.path, e)
    }

    fn write_err(&self, key: &[u8], e: heed::Error) -> Error {
        Error::key_too_long(ENGINE, &self.path, key, self.env.max_key_size())
            .unwrap_or_else(|| self.err(Op::Write, e))
    }
}

impl KvStore for LmdbStore {
    fn engine(&self) -> &'static str {
        ENGINE
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        out.clear();
        if key.is_empty() {
            // LMDB cannot store an empty key (MDB_BAD_VALSIZE), so it is absent.
            return Ok(false);
        }
        let rtxn = self.env.read_txn().map_err(|e| self.err(Op::Get, e))?;
        match self.db.get(&rtxn, key).map_err(|e| self.err(Op::Get, e))? {
            Some(v) => {
                out.extend_from_slice(v);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        // A delete per key the range holds, found by a scan just before.
        let batch = ledgerbench_core::ranges::expand(self, batch)?;
        let mut wtxn = self.env.write_txn().map_err(|e| self.err(Op::Write, e))?;
        for op in batch.iter() {
            // An error drops `wtxn`, which aborts it: nothing of the batch lands.
            match op {
                BatchOp::Put(k, v) => self.db.put(&mut wtxn, k, v),
                BatchOp::Delete(k) => self.db.delete(&mut wtxn, k).map(|_| ()),
                BatchOp::DeleteRange(..) => unreachable!("range deletes were expanded above"),
            }
            .map_err(|e| self.write_err(op.key(), e))?;
        }
        // The env flags (set from the durability level) decide what the commit syncs.
        wtxn.commit().map_err(|e| self.err(Op::Write, e))
    }

    fn scan(&self, start: &[u8], visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        let rtxn = self.env.read_txn().map_err(|e| self.err(Op::Iterate, e))?;
        // LMDB rejects an empty key even as a bound; from "" means from the first key.
        let lower = if start.is_empty() {
            Bound::Unbounded
        } else {
            Bound::Included(start)
        };
        let range = (lower, Bound::Unbounded);
        let iter = self
            .db
            .range(&rtxn, &range)
            .map_err(|e| self.err(Op::Iterate, e))?;
        for item in iter {
            let (k, v) = item.map_err(|e| self.err(Op::Iterate, e))?;
            if !visit(k, v) {
                break;
            }
        }
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        self.env.force_sync().map_err(|e| self.err(Op::Flush, e))
    }

    fn stats(&self) -> Result<EngineStats> {
        let rtxn = self.env.read_txn().map_err(|e| self.err(Op::Stats, e))?;
        let s = self.db.stat(&rtxn).map_err(|e| self.err(Op::Stats, e))?;
        let info = self.env.info();
        Ok(EngineStats {
            tree_depth: Some(s.depth),
            branch_pages: Some(s.branch_pages as u64),
            leaf_pages: Some(s.leaf_pages as u64),
            overflow_pages: Some(s.overflow_pages as u64),
            page_size: Some(s.page_size),
            entries: Some(s.entries as u64),
            map_bytes: Some(info.map_size as u64),
            last_page: Some(info.last_page_number as u64),
            ..EngineStats::default()
        })
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::BTREE
    }

    fn close(self: Box<Self>) -> Result<()> {
        let this = *self;
        this.env
            .force_sync()
            .map_err(|e| map_err(Op::Close, &this.path, e))?;
        let env = this.env;
        // Wait until the environment is really closed, so a reopen in this
        // process does not meet heed's "already opened" guard.
        env.prepare_for_closing().wait();
        Ok(())
    }
}

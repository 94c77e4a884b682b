//! MDBX backend through libmdbx: LMDB's design with a growable geometry,
//! page reclamation and page-operation counters.

use std::path::{Path, PathBuf};

use ledgerbench_core::{
    Batch, BatchOp, Capabilities, Durability, EngineStats, Error, KvBackend, KvStore, Op, PageOps,
    Result, fsutil,
};
use libmdbx::{
    Database, DatabaseKind, DatabaseOptions, Mode, NoWriteMap, ReadWriteOptions, SyncMode,
    TableFlags, WriteFlags, WriteMap,
};
use serde::{Deserialize, Serialize};

const ENGINE: &str = "mdbx";

/// File size bounds and growth policy, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Geometry {
    /// Lower bound of the file size.
    pub lower: u64,
    /// Upper bound: the largest the store can grow.
    pub upper: u64,
    /// Growth step.
    pub growth_step: u64,
}

impl Default for Geometry {
    fn default() -> Self {
        Self {
            lower: 1 << 20,
            upper: 64 << 30,
            growth_step: 16 << 20,
        }
    }
}

/// MDBX durability modes (`MDBX_SYNC_DURABLE` ... `MDBX_UTTERLY_NOSYNC`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sync {
    /// Every commit is durable.
    Durable,
    /// Data synced per commit, meta page lazily.
    NoMetaSync,
    /// Commits do not sync; the last steady commit is kept, so a crash
    /// loses recent commits but never the database.
    SafeNoSync,
    /// Commits do not sync and a system crash may corrupt the database.
    UtterlyNoSync,
}

/// MDBX settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MdbxConfig {
    /// File geometry.
    pub geometry: Geometry,
    /// Durability mode of commits, set from the durability level: `none` ->
    /// utterly-no-sync, `process` -> safe-no-sync, `power` -> durable.
    pub sync: Sync,
    /// MDBX_WRITEMAP: write through the writable map.
    pub write_map: bool,
    /// MDBX_NORDAHEAD: no read-ahead on the map.
    pub no_read_ahead: bool,
}

impl Default for MdbxConfig {
    fn default() -> Self {
        Self {
            geometry: Geometry::default(),
            sync: Sync::SafeNoSync,
            write_map: false,
            no_read_ahead: true,
        }
    }
}

/// Keeps MDBX's warnings and errors on stderr but drops its notices: at its
/// default level it prints a line in every child a process forks (its
/// after-fork handler), which would land in ledgerbench's output.
pub fn quiet_notices() {
    // SAFETY: sets global log settings; a null logger keeps MDBX's own stderr writer.
    unsafe {
        mdbx_sys::mdbx_setup_debug(mdbx_sys::MDBX_LOG_WARN, mdbx_sys::MDBX_DBG_DONTCHANGE, None);
    }
}

/// The linked libmdbx version, e.g. `0.14.1`.
pub fn engine_version() -> String {
    // SAFETY: mdbx_version is an immutable static initialised by the library.
    let v = unsafe { &mdbx_sys::mdbx_version };
    format!("{}.{}.{}", v.major, v.minor, v.patch)
}

/// The boot id libmdbx read when this process loaded it (`None` when it
/// found none). MDBX trusts commits it did not sync only when a store's
/// boot id matches this one, so a simulated reboot must change it.
pub fn boot_id() -> Option<u128> {
    let mut info = std::mem::MaybeUninit::<mdbx_sys::MDBX_envinfo>::zeroed();
    // No store is needed: the call fills the system's part (the boot id
    // among it) before it looks for one, and this path names none.
    // SAFETY: a valid C string, and an out-pointer to a zeroed struct of the
    // size passed.
    unsafe {
        mdbx_sys::mdbx_preopen_snapinfo(
            c"/nonexistent/ledgerbench".as_ptr(),
            info.as_mut_ptr(),
            std::mem::size_of::<mdbx_sys::MDBX_envinfo>(),
        );
    }
    // SAFETY: zeroed is a valid MDBX_envinfo (plain integers), filled or not.
    let id = unsafe { info.assume_init() }.mi_bootid.current;
    let id = u128::from(id.x) << 64 | u128::from(id.y);
    (id != 0).then_some(id)
}

type Pair<'a> = (std::borrow::Cow<'a, [u8]>, std::borrow::Cow<'a, [u8]>);

/// The MDBX backend.
pub struct Mdbx;

struct MdbxStore<E: DatabaseKind> {
    db: Database<E>,
    path: PathBuf,
}

fn map_err(op: Op, path: &Path, e: libmdbx::Error) -> Error {
    match e {
        libmdbx::Error::MapFull => Error::Full {
            engine: ENGINE,
            op,
            path: path.to_path_buf(),
            setting: "geometry.upper",
            message: "MDBX_MAP_FULL: the database reached its upper size".into(),
        },
        other => Error::engine(ENGINE, op, path, format!("{other} ({other:?})")),
    }
}

impl KvBackend for Mdbx {
    const NAME: &'static str = ENGINE;
    type Config = MdbxConfig;
    type Store = Box<dyn KvStore>;

    fn set_durability(cfg: &mut MdbxConfig, level: Durability) -> Result<()> {
        cfg.sync = match level {
            Durability::None => Sync::UtterlyNoSync,
            Durability::Process => Sync::SafeNoSync,
            Durability::Power => Sync::Durable,
        };
        Ok(())
    }

    fn durability(cfg: &MdbxConfig) -> Durability {
        match cfg.sync {
            Sync::UtterlyNoSync => Durability::None,
            Sync::SafeNoSync | Sync::NoMetaSync => Durability::Process,
            Sync::Durable => Durability::Power,
        }
    }

    fn read_path(_cfg: &Self::Config) -> ledgerbench_core::ReadPath {
        ledgerbench_core::ReadPath::Mmap
    }

    fn init_process() {
        quiet_notices();
    }

    fn version(_cfg: &Self::Config, _store_dir: &Path) -> Option<String> {
        Some(engine_version())
    }

    fn open(dir: &Path, cfg: &MdbxConfig) -> Result<Box<dyn KvStore>> {
        let g = cfg.geometry;
        if g.lower > g.upper || g.upper < 1 << 20 || g.growth_step == 0 {
            return Err(Error::Config {
                engine: ENGINE,
                message: format!(
                    "geometry lower {} / upper {} / growth_step {}: need lower <= upper, upper >= 1 MiB, growth_step > 0",
                    g.lower, g.upper, g.growth_step
                ),
            });
        }
        fsutil::claim_store_dir(ENGINE, dir)?;
        Ok(if cfg.write_map {
            Box::new(MdbxStore::<WriteMap>::open(dir, cfg)?)
        } else {
            Box::new(MdbxStore::<NoWriteMap>::open(dir, cfg)?)
        })
    }
}

impl<E: DatabaseKind> MdbxStore<E> {
    fn open(dir: &Path, cfg: &MdbxConfig) -> Result<Self> {
        let g = cfg.geometry;
        let to_isize = |v: u64| isize::try_from(v).unwrap_or(isize::MAX);
        let opts = DatabaseOptions {
            mode: Mode::ReadWrite(ReadWriteOptions {
                sync_mode: match cfg.sync {
                    Sync::Durable => SyncMode::Durable,
                    Sync::NoMetaSync => SyncMode::NoMetaSync,
                    Sync::SafeNoSync => SyncMode::SafeNoSync,
                    Sync::UtterlyNoSync => SyncMode::UtterlyNoSync,
                },
                min_size: Some(to_isize(g.lower)),
                max_size: Some(to_isize(g.upper)),
                growth_step: Some(to_isize(g.growth_step)),
                shrink_threshold: None,
            }),
            no_rdahead: cfg.no_read_ahead,
            ..DatabaseOptions::default()
        };
        let db =
            Database::<E>::open_with_options(dir, opts).map_err(|e| map_err(Op::Open, dir, e))?;
        // Create the main table once so readers never meet a missing one.
        let txn = db.begin_rw_txn().map_err(|e| map_err(Op::Open, dir, e))?;
        txn.create_table(None, TableFlags::default())
            .map_err(|e| map_err(Op::Open, dir, e))?;
        txn.commit().map_err(|e| map_err(Op::Open, dir, e))?;
        Ok(Self {
            db,
            path: dir.to_path_buf(),
        })
    }

    fn err(&self, op: Op, e: libmdbx::Error) -> Error {
        map_err(op, &self.path, e)
    }

    fn write_err(&self, key: &[u8], e: libmdbx::Error) -> Error {
        // SAFETY: the env pointer is valid while `self.db` lives.
        let max = unsafe { mdbx_sys::mdbx_env_get_maxkeysize_ex(self.db.ptr().0, 0) };
        let max = usize::try_from(max).unwrap_or(usize::MAX);
        Error::key_too_long(ENGINE, &self.path, key, max).unwrap_or_else(|| self.err(Op::Write, e))
    }

    fn page_ops(&self) -> Result<PageOps> {
        let mut info = std::mem::MaybeUninit::<mdbx_sys::MDBX_envinfo>::zeroed();
        // SAFETY: the env pointer is valid while `self.db` lives; the struct
        // size passed is the one the bindings were generated from.
        let rc = unsafe {
            mdbx_sys::mdbx_env_info_ex(
                self.db.ptr().0,
                std::ptr::null(),
                info.as_mut_ptr(),
                std::mem::size_of::<mdbx_sys::MDBX_envinfo>(),
            )
        };
        if rc != 0 {
            return Err(self.err(Op::Stats, libmdbx::Error::from_err_code(rc)));
        }
        // SAFETY: mdbx_env_info_ex succeeded and filled the struct.
        let p = unsafe { info.assume_init() }.mi_pgop_stat;
        Ok(PageOps {
            newly: p.newly,
            cow: p.cow,
            clone: p.clone,
            split: p.split,
            merge: p.merge,
            spill: p.spill,
            unspill: p.unspill,
            wops: p.wops,
            prefault: p.prefault,
            mincore: p.mincore,
            msync: p.msync,
            fsync: p.fsync,
        })
    }
}

impl<E: DatabaseKind + Send + std::marker::Sync> KvStore for MdbxStore<E> {
    fn engine(&self) -> &'static str {
        ENGINE
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        out.clear();
        let txn = self.db.begin_ro_txn().map_err(|e| self.err(Op::Get, e))?;
        let table = txn.open_table(None).map_err(|e| self.err(Op::Get, e))?;
        let v: Option<std::borrow::Cow<'_, [u8]>> =
            txn.get(&table, key).map_err(|e| self.err(Op::Get, e))?;
        Ok(match v {
            Some(v) => {
                out.extend_from_slice(&v);
                true
            }
            None => false,
        })
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        // A delete per key the range holds, found by a scan just before.
        let batch = ledgerbench_core::ranges::expand(self, batch)?;
        let txn = self.db.begin_rw_txn().map_err(|e| self.err(Op::Write, e))?;
        let table = txn.open_table(None).map_err(|e| self.err(Op::Write, e))?;
        for op in batch.iter() {
            // An error drops `txn`, which aborts it: nothing of the batch lands.
            match op {
                BatchOp::Put(k, v) => txn.put(&table, k, v, WriteFlags::UPSERT),
                BatchOp::Delete(k) => txn.del(&table, k, None).map(|_| ()),
                BatchOp::DeleteRange(..) => unreachable!("range deletes were expanded above"),
            }
            .map_err(|e| self.write_err(op.key(), e))?;
        }
        // The sync mode (set from the durability level) decides what the commit syncs.
        txn.commit().map(|_| ()).map_err(|e| self.err(Op::Write, e))
    }

    fn scan(&self, start: &[u8], visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        let txn = self
            .db
            .begin_ro_txn()
            .map_err(|e| self.err(Op::Iterate, e))?;
        let table = txn.open_table(None).map_err(|e| self.err(Op::Iterate, e))?;
        let mut cur = txn.cursor(&table).map_err(|e| self.err(Op::Iterate, e))?;
        let mut item: Option<Pair<'_>> =
            cur.set_range(start).map_err(|e| self.err(Op::Iterate, e))?;
        while let Some((k, v)) = item {
            if !visit(&k, &v) {
                break;
            }
            item = cur.next().map_err(|e| self.err(Op::Iterate, e))?;
        }
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        self.db
            .sync(true)
            .map(|_| ())
            .map_err(|e| self.err(Op::Flush, e))
    }

    fn stats(&self) -> Result<EngineStats> {
        let txn = self.db.begin_ro_txn().map_err(|e| self.err(Op::Stats, e))?;
        let table = txn.open_table(None).map_err(|e| self.err(Op::Stats, e))?;
        let s = txn.table_stat(&table).map_err(|e| self.err(Op::Stats, e))?;
        let info = self.db.info().map_err(|e| self.err(Op::Stats, e))?;
        Ok(EngineStats {
            tree_depth: Some(s.depth()),
            branch_pages: Some(s.branch_pages() as u64),
            leaf_pages: Some(s.leaf_pages() as u64),
            overflow_pages: Some(s.overflow_pages() as u64),
            page_size: Some(s.page_size()),
            entries: Some(s.entries() as u64),
            map_bytes: Some(info.map_size() as u64),
            last_page: Some(info.last_pgno() as u64),
            page_ops: Some(self.page_ops()?),
            ..EngineStats::default()
        })
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::BTREE
    }

    fn close(self: Box<Self>) -> Result<()> {
        self.db.sync(true).map_err(|e| self.err(Op::Close, e))?;
        drop(self);
        Ok(())
    }
}

use std::fmt::Debug;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::{Batch, DiskUsage, EngineStats, Error, Op, Result, fsutil};

/// How hard a batch commit pushes data to stable storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Durability {
    /// Return only once the batch is on stable storage (fsync / fdatasync / msync).
    Sync,
    /// Return once the engine has the batch; it reaches disk later.
    NoSync,
}

/// What a backend can do beyond the required operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Capabilities {
    /// `scan` returns keys in byte order.
    pub ordered_iteration: bool,
    /// `compact` does a full-range compaction.
    pub manual_compaction: bool,
    /// The engine drops the oldest data by itself once over a size cap (FIFO).
    pub evicts_oldest: bool,
    /// Data survives close and reopen.
    pub persistent: bool,
}

impl Capabilities {
    /// A persistent, ordered store without manual compaction or eviction:
    /// the copy-on-write B+trees (LMDB, MDBX).
    pub const BTREE: Capabilities = Capabilities {
        ordered_iteration: true,
        manual_compaction: false,
        evicts_oldest: false,
        persistent: true,
    };
}

/// An open store: the object-safe half of the trait family, so the driver can
/// hold stores of different engines at once (the Stellar workload may put
/// each of its three stores on another engine). Dynamic dispatch costs one
/// indirect call per operation, which is negligible next to an engine call.
pub trait KvStore: Send + Sync {
    /// Engine name, e.g. `rocksdb`, `lmdb`.
    fn engine(&self) -> &'static str;

    /// The store's directory.
    fn path(&self) -> &Path;

    /// Reads `key` into `out` (cleared first). Returns false when absent.
    fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool>;

    /// Reads `key`, allocating the value. Prefer `get_into` on hot paths.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut out = Vec::new();
        Ok(self.get_into(key, &mut out)?.then_some(out))
    }

    /// Commits `batch` atomically: after a crash or reopen either all of it
    /// is visible or none.
    fn write(&self, batch: &Batch, durability: Durability) -> Result<()>;

    /// Visits entries with key >= `start` in key order until `visit` returns false.
    fn scan(&self, start: &[u8], visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()>;

    /// Collects at most `limit` entries from `start` on.
    fn scan_collect(&self, start: &[u8], limit: usize) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut out = Vec::new();
        if limit == 0 {
            return Ok(out);
        }
        self.scan(start, &mut |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            out.len() < limit
        })?;
        Ok(out)
    }

    /// Pushes buffered writes into the store's files (RocksDB memtable flush,
    /// LMDB/MDBX sync) and waits for it.
    fn flush(&self) -> Result<()>;

    /// Full-range manual compaction, waiting for it to finish.
    fn compact(&self) -> Result<()> {
        Err(Error::Unsupported {
            engine: self.engine(),
            op: Op::Compact,
        })
    }

    /// Engine counters and state; fields the engine cannot give are `None`.
    fn stats(&self) -> Result<EngineStats>;

    /// Allocated and apparent bytes of the store's files.
    fn disk_usage(&self) -> Result<DiskUsage> {
        fsutil::dir_usage(self.path()).map_err(|source| Error::Io {
            engine: self.engine(),
            op: Op::DiskUsage,
            path: self.path().to_path_buf(),
            source,
        })
    }

    /// What this store can do.
    fn capabilities(&self) -> Capabilities;

    /// Closes the store, surfacing errors a drop would swallow.
    fn close(self: Box<Self>) -> Result<()>;
}

/// A storage engine kvbench can open: the static half of the family, with
/// its typed, serializable config (recorded in every result).
pub trait KvBackend {
    /// Engine name, e.g. `rocksdb`.
    const NAME: &'static str;
    /// Engine settings; `Default` gives the engine's recommended baseline.
    type Config: Clone + Debug + Default + Serialize + DeserializeOwned + Send + Sync + 'static;
    /// The open store.
    type Store: KvStore + 'static;

    /// Opens the store in `dir`, creating `dir` and the store when missing.
    /// A directory that holds something other than this engine's store is
    /// refused (see [`fsutil::claim_store_dir`]).
    fn open(dir: &Path, cfg: &Self::Config) -> Result<Self::Store>;

    /// Opens the store behind a box, for callers that mix engines.
    fn open_boxed(dir: &Path, cfg: &Self::Config) -> Result<Box<dyn KvStore>> {
        Ok(Box::new(Self::open(dir, cfg)?))
    }
}

/// A boxed store is a store, so code generic over `KvStore` also takes the
/// mixed-engine boxes the driver holds.
impl KvStore for Box<dyn KvStore> {
    fn engine(&self) -> &'static str {
        (**self).engine()
    }
    fn path(&self) -> &Path {
        (**self).path()
    }
    fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        (**self).get_into(key, out)
    }
    fn write(&self, batch: &Batch, durability: Durability) -> Result<()> {
        (**self).write(batch, durability)
    }
    fn scan(&self, start: &[u8], visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        (**self).scan(start, visit)
    }
    fn flush(&self) -> Result<()> {
        (**self).flush()
    }
    fn compact(&self) -> Result<()> {
        (**self).compact()
    }
    fn stats(&self) -> Result<EngineStats> {
        (**self).stats()
    }
    fn disk_usage(&self) -> Result<DiskUsage> {
        (**self).disk_usage()
    }
    fn capabilities(&self) -> Capabilities {
        (**self).capabilities()
    }
    fn close(self: Box<Self>) -> Result<()> {
        (*self).close()
    }
}

use std::fmt::Debug;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::{Batch, DiskUsage, EngineStats, Error, Op, ReadPath, Result, Tuning, fsutil};

/// What survives a crash: one promise with the same meaning on every engine,
/// which each backend maps onto its own settings (see
/// [`KvBackend::set_durability`]). Ordered from weakest to strongest.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Durability {
    /// Only what an explicit flush or close wrote is promised: a kill -9 may
    /// lose later commits, and a power cut may lose or corrupt anything since.
    None,
    /// A kill -9 loses no committed batch; a power cut may lose the latest
    /// commits but leaves whole batches in commit order, never a corrupt store.
    Process,
    /// Every committed batch survives a power cut.
    Power,
}

impl Durability {
    /// Every level, weakest first.
    pub const ALL: [Durability; 3] = [Durability::None, Durability::Process, Durability::Power];

    /// The level's name as flags and results spell it.
    pub fn name(self) -> &'static str {
        match self {
            Durability::None => "none",
            Durability::Process => "process",
            Durability::Power => "power",
        }
    }

    /// Whether a crash of this kind may lose a committed batch at this level.
    pub fn may_lose(self, crash: CrashKind) -> bool {
        match (self, crash) {
            (Durability::None, _) => true,
            (Durability::Process, k) => k.is_power_loss(),
            (Durability::Power, _) => false,
        }
    }

    /// Whether a crash of this kind may leave a corrupt store or a torn batch.
    pub fn may_corrupt(self, crash: CrashKind) -> bool {
        self == Durability::None && crash.is_power_loss()
    }
}

impl std::fmt::Display for Durability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A durability level's name that is none of the levels.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown durability `{0}`; accepted: none, process, power")]
pub struct UnknownDurability(pub String);

impl std::str::FromStr for Durability {
    type Err = UnknownDurability;
    fn from_str(s: &str) -> std::result::Result<Self, UnknownDurability> {
        Durability::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| UnknownDurability(s.to_string()))
    }
}

/// How a process holding a store can end without closing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CrashKind {
    /// SIGKILL: the process dies, the kernel keeps its page cache.
    Kill,
    /// The machine loses power: what the device has not made stable is gone
    /// (an ext4 shutdown without flushing its journal).
    PowerCut,
    /// A power loss on the crash filesystem: every write not yet synced is lost.
    Lose,
    /// A power loss on the crash filesystem: a random subset of the writes
    /// not yet synced reached the device, each whole, with the earlier
    /// writes to its pages (a page is written back whole).
    Reorder,
    /// As `Reorder`, with one write that reached the device cut at a
    /// sector boundary.
    Torn,
}

impl CrashKind {
    /// Every kind, in the order flags list them.
    pub const ALL: [CrashKind; 5] = [
        CrashKind::Kill,
        CrashKind::PowerCut,
        CrashKind::Lose,
        CrashKind::Reorder,
        CrashKind::Torn,
    ];

    /// The kind's name as flags and results spell it.
    pub fn name(self) -> &'static str {
        match self {
            CrashKind::Kill => "kill",
            CrashKind::PowerCut => "power-cut",
            CrashKind::Lose => "lose",
            CrashKind::Reorder => "reorder",
            CrashKind::Torn => "torn",
        }
    }

    /// Whether the machine loses power (as against one process dying).
    pub fn is_power_loss(self) -> bool {
        self != CrashKind::Kill
    }

    /// Whether the crash filesystem plays this crash.
    pub fn on_crash_fs(self) -> bool {
        matches!(self, CrashKind::Lose | CrashKind::Reorder | CrashKind::Torn)
    }
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
    /// Writes are thrown away and reads answered without a store (the
    /// `null` backend, which measures the harness's own ceiling): lookups
    /// on it are not verified.
    #[serde(default)]
    pub discards_writes: bool,
    /// How concurrent writers meet: one at a time, or together inside the
    /// engine. Absent in results from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writers: Option<WriterModel>,
    /// How a range delete in a batch is carried out: one tombstone, or a
    /// delete per key found by a scan. Absent in results from before range
    /// deletes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_delete: Option<crate::RangeDelete>,
}

/// How an engine takes writes from several threads at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriterModel {
    /// One write transaction at a time; a second writer waits for the first
    /// (LMDB, MDBX, redb, bbolt); readers do not wait.
    Single,
    /// Writers proceed together: the engine queues and merges them itself
    /// (RocksDB's write groups, Pebble's commit pipeline).
    Concurrent,
    /// Every request, read or write, waits for the one before it (one lock
    /// around the whole store; the Go sidecar's single pipe in results made
    /// before it served a connection per thread).
    Serial,
}

impl WriterModel {
    /// The model's name as results spell it.
    pub fn name(self) -> &'static str {
        match self {
            WriterModel::Single => "single",
            WriterModel::Concurrent => "concurrent",
            WriterModel::Serial => "serial",
        }
    }

    /// Whether a second writer waits for the first: the harness then takes
    /// the turn itself and times the wait (see the ops driver).
    pub fn serialises_writes(self) -> bool {
        self != WriterModel::Concurrent
    }
}

impl Capabilities {
    /// A persistent, ordered store without manual compaction or eviction:
    /// the copy-on-write B+trees (LMDB, MDBX).
    pub const BTREE: Capabilities = Capabilities {
        ordered_iteration: true,
        manual_compaction: false,
        evicts_oldest: false,
        persistent: true,
        discards_writes: false,
        writers: Some(WriterModel::Single),
        range_delete: Some(crate::RangeDelete::Emulated),
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

    /// Reads each of `keys`, in order, into `out` (cleared first): one
    /// entry per key, `None` when absent. An engine behind a process
    /// boundary answers them in one round trip; the rest read one by one.
    fn get_many(&self, keys: &[Vec<u8>], out: &mut Vec<Option<Vec<u8>>>) -> Result<()> {
        out.clear();
        for k in keys {
            out.push(self.get(k)?);
        }
        Ok(())
    }

    /// Commits `batch` atomically (after a crash or reopen either all of it
    /// is visible or none), as durable as the store's [`Durability`] level.
    fn write(&self, batch: &Batch) -> Result<()>;

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

/// A storage engine ledgerbench can open: the static half of the family, with
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

    /// Sets `cfg`'s engine settings so that the store gives `level`, or
    /// says (as [`Error::Config`]) why this engine cannot give it.
    fn set_durability(cfg: &mut Self::Config, level: Durability) -> Result<()>;

    /// The level `cfg`'s settings give, whatever set them.
    fn durability(cfg: &Self::Config) -> Durability;

    /// The engine library's version, e.g. `0.9.70`; `store_dir` is a store
    /// it opened, for engines that write their version there (RocksDB's LOG),
    /// and `cfg` names the library where one backend fronts several (Go).
    fn version(cfg: &Self::Config, store_dir: &Path) -> Option<String>;

    /// Scales the engine's own memory (memtables, caches) to about `bytes`,
    /// for presets that shrink a workload; engines that only use the page
    /// cache have nothing to scale.
    fn scale_memory(_cfg: &mut Self::Config, _bytes: u64) {}

    /// The smallest budget [`Self::scale_memory`] keeps as given: under it
    /// the engine raises a cache or buffer to a minimum of its own, so it
    /// uses more than it was given; 0 when it keeps any budget.
    fn memory_floor(_cfg: &Self::Config) -> u64 {
        0
    }

    /// How `cfg`'s GETs reach the device.
    fn read_path(cfg: &Self::Config) -> ReadPath;

    /// Applies `tuning` to `cfg` where the engine has such a setting;
    /// false when it has none (the config is then unchanged).
    fn tune(_cfg: &mut Self::Config, _tuning: Tuning) -> bool {
        false
    }

    /// Why the engine cannot run on this machine (a helper program that
    /// did not build, say), or `None` when it can.
    fn unavailable() -> Option<String> {
        None
    }

    /// Process-wide setup the engine needs before anything else runs (e.g.
    /// quieting a library's log); called once at start for every engine.
    fn init_process() {}

    /// Whether `cfg` makes the engine drop its oldest data by itself (FIFO
    /// compaction): such a store does not keep what it was given.
    fn evicts_oldest(_cfg: &Self::Config) -> bool {
        false
    }

    /// Whether the config keeps nothing it is given (the harness's own
    /// ceilings, `null` and `go-null`): such a store has no data to
    /// measure, so default backend lists leave it out.
    fn discards_writes(_cfg: &Self::Config) -> bool {
        false
    }

    /// How ledgerbench's calls reach the engine `cfg` runs: linked into
    /// the process unless the engine says otherwise (a Go engine through
    /// its sidecar).
    fn call_path(_cfg: &Self::Config) -> CallPath {
        CallPath::InProcess
    }

    /// Opens the store behind a box, for callers that mix engines.
    fn open_boxed(dir: &Path, cfg: &Self::Config) -> Result<Box<dyn KvStore>> {
        Ok(Box::new(Self::open(dir, cfg)?))
    }
}

/// How ledgerbench's calls reach an engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallPath {
    /// A function call into a library linked into ledgerbench.
    InProcess,
    /// A request over a socket to a process per store.
    Sidecar,
}

impl CallPath {
    /// How `ledgerbench list` and reports say it.
    pub fn name(self) -> &'static str {
        match self {
            CallPath::InProcess => "in process",
            CallPath::Sidecar => "through the sidecar process",
        }
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
    fn get_many(&self, keys: &[Vec<u8>], out: &mut Vec<Option<Vec<u8>>>) -> Result<()> {
        (**self).get_many(keys, out)
    }
    fn write(&self, batch: &Batch) -> Result<()> {
        (**self).write(batch)
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

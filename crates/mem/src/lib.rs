//! In-memory reference backend: an ordered map behind a lock.
//!
//! It is the suite's reference (its semantics are obvious by construction)
//! and the floor for harness overhead: a workload run on `mem` costs what the
//! driver costs. It persists a snapshot on `flush` and `close`, and, at
//! durability `process` or `power`, appends every batch to a log (synced per
//! batch at `power`) that the next open replays, so it is also the crash
//! test's control: an engine whose correctness is obvious by construction.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use ledgerbench_core::{
    Batch, BatchOp, Capabilities, Durability, EngineStats, Error, KvBackend, KvStore, Op, Result,
    fsutil,
};
use serde::{Deserialize, Serialize};

pub mod null;
mod planted;

pub use null::{Null, NullConfig};
pub use planted::Planted;

const ENGINE: &str = "mem";
const SNAPSHOT: &str = "snapshot.kvm";
const LOG: &str = "log.kvm";
const MAGIC: &[u8; 8] = b"KVBMEM01";

/// What the in-memory backend does with each committed batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemLog {
    /// Nothing: only snapshots persist (durability `none`).
    Off,
    /// Appended to the log with write(2), not synced (durability `process`).
    Write,
    /// Appended and fdatasynced before the commit returns (durability `power`).
    Sync,
}

/// Settings of the in-memory backend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemConfig {
    /// Write a snapshot file on flush and close and load it on open.
    pub persist: bool,
    /// The per-batch log (needs `persist`).
    pub log: MemLog,
    /// A commit index in a planted order (with `log = "sync"`): the crash
    /// tests' own check that they catch a missing barrier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planted: Option<Planted>,
}

impl Default for MemConfig {
    fn default() -> Self {
        Self {
            persist: true,
            log: MemLog::Write,
            planted: None,
        }
    }
}

/// The in-memory backend.
pub struct Mem;

/// An open in-memory store.
pub struct MemStore {
    path: PathBuf,
    cfg: MemConfig,
    map: RwLock<BTreeMap<Vec<u8>, Vec<u8>>>,
    /// Serialises snapshots: concurrent flushes would share the temp file.
    saving: std::sync::Mutex<()>,
    /// The open log, when `cfg.log` is not `Off`; appended under the map's
    /// write lock so its order is the commit order.
    log: std::sync::Mutex<Option<Log>>,
}

impl KvBackend for Mem {
    const NAME: &'static str = ENGINE;
    type Config = MemConfig;
    type Store = MemStore;

    fn set_durability(cfg: &mut MemConfig, level: Durability) -> Result<()> {
        cfg.log = match level {
            Durability::None => MemLog::Off,
            Durability::Process => MemLog::Write,
            Durability::Power => MemLog::Sync,
        };
        if !cfg.persist && level != Durability::None {
            return Err(Error::Config {
                engine: ENGINE,
                message: format!(
                    "durability {level} needs persist = true (without it nothing reaches disk)"
                ),
            });
        }
        Ok(())
    }

    fn durability(cfg: &MemConfig) -> Durability {
        match (cfg.persist, cfg.log) {
            (false, _) | (true, MemLog::Off) => Durability::None,
            (true, MemLog::Write) => Durability::Process,
            (true, MemLog::Sync) => Durability::Power,
        }
    }

    fn read_path(_cfg: &Self::Config) -> ledgerbench_core::ReadPath {
        ledgerbench_core::ReadPath::Memory
    }

    fn version(_cfg: &Self::Config, _store_dir: &Path) -> Option<String> {
        Some(env!("CARGO_PKG_VERSION").to_string())
    }

    fn open(dir: &Path, cfg: &MemConfig) -> Result<MemStore> {
        fsutil::claim_store_dir(ENGINE, dir)?;
        let corrupt =
            |what: &str, e: io::Error| Error::engine(ENGINE, Op::Open, dir, format!("{what}: {e}"));
        let snap = dir.join(SNAPSHOT);
        let mut map = if cfg.persist && snap.exists() {
            load(&snap).map_err(|e| corrupt(&format!("snapshot {}", snap.display()), e))?
        } else {
            BTreeMap::new()
        };
        let log = if cfg.persist && cfg.log != MemLog::Off {
            let path = dir.join(LOG);
            let what = format!("log {}", path.display());
            Some(match cfg.planted.filter(|_| cfg.log == MemLog::Sync) {
                None => replay_log(&path, &mut map).map_err(|e| corrupt(&what, e))?,
                Some(_) => {
                    let (index, committed) =
                        planted::open_index(dir).map_err(|e| corrupt(&what, e))?;
                    let file = planted::replay(&path, committed, &mut map)
                        .map_err(|e| corrupt(&what, e))?;
                    Log {
                        file,
                        len: committed,
                        index: Some(index),
                    }
                }
            })
        } else {
            None
        };
        Ok(MemStore {
            path: dir.to_path_buf(),
            cfg: cfg.clone(),
            map: RwLock::new(map),
            saving: std::sync::Mutex::new(()),
            log: std::sync::Mutex::new(log),
        })
    }
}

/// The open log and its length: kept here, not asked of the file, so a
/// commit makes no extra system call and a truncation cannot leave it stale.
struct Log {
    file: fs::File,
    len: u64,
    /// The planted commit index, if the config plants one.
    index: Option<fs::File>,
}

/// Opens the log at `path` for reading and appending, making it if
/// missing: a new log's name is durable only once its directory is synced,
/// and without that a power loss could drop the whole log, synced commits
/// and all (the crash filesystem's `lose` showed it).
pub(crate) fn open_log(path: &Path) -> io::Result<fs::File> {
    let existed = path.exists();
    let f = fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    if !existed && let Some(dir) = path.parent() {
        fsutil::sync_dir(dir)?;
    }
    Ok(f)
}

/// Applies the whole frames of the log at `path` to `map`, cuts off a torn
/// tail (a crash mid-append) and returns the log open for appending.
fn replay_log(path: &Path, map: &mut BTreeMap<Vec<u8>, Vec<u8>>) -> io::Result<Log> {
    let mut f = open_log(path)?;
    let mut data = Vec::new();
    f.read_to_end(&mut data)?;
    let mut at = 0;
    while data.len() - at >= 12 {
        let len = u32::from_le_bytes(data[at..at + 4].try_into().unwrap_or_default()) as usize;
        let sum = u64::from_le_bytes(data[at + 4..at + 12].try_into().unwrap_or_default());
        let Some(body) = data.get(at + 12..at + 12 + len) else {
            break;
        };
        if checksum(body) != sum {
            break;
        }
        apply_frame(body, map)?;
        at += 12 + len;
    }
    if at < data.len() {
        f.set_len(at as u64)?;
        f.sync_data()?;
    }
    Ok(Log {
        file: f,
        len: at as u64,
        index: None,
    })
}

/// Removes every key of `map` in `start..end`.
fn remove_range(map: &mut BTreeMap<Vec<u8>, Vec<u8>>, start: &[u8], end: &[u8]) {
    if start >= end {
        return;
    }
    let doomed: Vec<Vec<u8>> = map
        .range(start.to_vec()..end.to_vec())
        .map(|(k, _)| k.clone())
        .collect();
    for k in doomed {
        map.remove(&k);
    }
}

/// Puts are tagged 1, deletes 0 and range deletes 2 (the range's end in
/// the value's place): `tag, key length, value length, key, value`.
fn apply_frame(mut body: &[u8], map: &mut BTreeMap<Vec<u8>, Vec<u8>>) -> io::Result<()> {
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "malformed record in a log frame",
        )
    };
    while !body.is_empty() {
        let head = body.get(..9).ok_or_else(bad)?;
        let kl = u32::from_le_bytes(head[1..5].try_into().map_err(|_| bad())?) as usize;
        let vl = u32::from_le_bytes(head[5..9].try_into().map_err(|_| bad())?) as usize;
        let k = body.get(9..9 + kl).ok_or_else(bad)?;
        let v = body.get(9 + kl..9 + kl + vl).ok_or_else(bad)?;
        match head[0] {
            1 => {
                map.insert(k.to_vec(), v.to_vec());
            }
            2 => remove_range(map, k, v),
            _ => {
                map.remove(k);
            }
        }
        body = &body[9 + kl + vl..];
    }
    Ok(())
}

fn encode_frame(batch: &Batch) -> Vec<u8> {
    let mut body = Vec::with_capacity(batch.logical_bytes() as usize + 9 * batch.len() + 12);
    body.extend_from_slice(&[0; 12]);
    for op in batch.iter() {
        let (tag, k, v): (u8, &[u8], &[u8]) = match op {
            BatchOp::Put(k, v) => (1, k, v),
            BatchOp::Delete(k) => (0, k, &[]),
            BatchOp::DeleteRange(k, end) => (2, k, end),
        };
        body.push(tag);
        body.extend_from_slice(&(k.len() as u32).to_le_bytes());
        body.extend_from_slice(&(v.len() as u32).to_le_bytes());
        body.extend_from_slice(k);
        body.extend_from_slice(v);
    }
    let len = (body.len() - 12) as u32;
    let sum = checksum(&body[12..]);
    body[..4].copy_from_slice(&len.to_le_bytes());
    body[4..12].copy_from_slice(&sum.to_le_bytes());
    body
}

fn load(path: &Path) -> io::Result<BTreeMap<Vec<u8>, Vec<u8>>> {
    let bad = |m: &str| io::Error::new(io::ErrorKind::InvalidData, m.to_string());
    let mut data = Vec::new();
    fs::File::open(path)?.read_to_end(&mut data)?;
    if data.len() < 16 || &data[..8] != MAGIC {
        return Err(bad("not a ledgerbench mem snapshot (bad magic)"));
    }
    let (body, tail) = data[8..].split_at(data.len() - 16);
    let want = u64::from_le_bytes(tail.try_into().map_err(|_| bad("short file"))?);
    if checksum(body) != want {
        return Err(bad("checksum mismatch: the snapshot is corrupt"));
    }
    let mut map = BTreeMap::new();
    let mut rest = body;
    let take = |n: usize, rest: &mut &[u8]| -> io::Result<Vec<u8>> {
        if rest.len() < n {
            return Err(bad("truncated record"));
        }
        let (a, b) = rest.split_at(n);
        *rest = b;
        Ok(a.to_vec())
    };
    while !rest.is_empty() {
        let kl = u32::from_le_bytes(take(4, &mut rest)?.try_into().map_err(|_| bad("len"))?);
        let vl = u32::from_le_bytes(take(4, &mut rest)?.try_into().map_err(|_| bad("len"))?);
        let k = take(kl as usize, &mut rest)?;
        let v = take(vl as usize, &mut rest)?;
        map.insert(k, v);
    }
    Ok(map)
}

/// FNV-1a: enough to catch a torn or foreign file; this is not a security boundary.
fn checksum(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}

impl MemStore {
    fn lock_err(&self, op: Op) -> Error {
        Error::engine(
            ENGINE,
            op,
            &self.path,
            "lock poisoned by a panicking thread",
        )
    }

    fn save(&self, op: Op) -> Result<()> {
        if !self.cfg.persist {
            return Ok(());
        }
        let _saving = self.saving.lock().map_err(|_| self.lock_err(op))?;
        let map = self.map.read().map_err(|_| self.lock_err(op))?;
        let mut body = Vec::new();
        for (k, v) in map.iter() {
            body.extend_from_slice(&(k.len() as u32).to_le_bytes());
            body.extend_from_slice(&(v.len() as u32).to_le_bytes());
            body.extend_from_slice(k);
            body.extend_from_slice(v);
        }
        let io_err = |source| Error::Io {
            engine: ENGINE,
            op,
            path: self.path.clone(),
            source,
        };
        // Write aside and rename, so a crash mid-write keeps the old snapshot.
        let tmp = self.path.join(format!("{SNAPSHOT}.tmp"));
        let mut f = fs::File::create(&tmp).map_err(io_err)?;
        f.write_all(MAGIC).map_err(io_err)?;
        f.write_all(&body).map_err(io_err)?;
        f.write_all(&checksum(&body).to_le_bytes())
            .map_err(io_err)?;
        f.sync_all().map_err(io_err)?;
        fs::rename(&tmp, self.path.join(SNAPSHOT)).map_err(io_err)?;
        fsutil::sync_dir(&self.path).map_err(io_err)?;
        // The snapshot holds every logged batch now (writers wait on the
        // map's lock, held here), so the log starts over.
        let mut log = self.log.lock().map_err(|_| self.lock_err(op))?;
        if let Some(l) = log.as_mut() {
            if let Some(index) = &l.index {
                // The index first: it must never point past the log.
                std::os::unix::fs::FileExt::write_all_at(index, &0u64.to_le_bytes(), 0)
                    .and_then(|()| index.sync_data())
                    .map_err(io_err)?;
            }
            l.file
                .set_len(0)
                .and_then(|_| l.file.sync_data())
                .map_err(io_err)?;
            l.len = 0;
        }
        Ok(())
    }
}

impl KvStore for MemStore {
    fn engine(&self) -> &'static str {
        ENGINE
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        out.clear();
        let map = self.map.read().map_err(|_| self.lock_err(Op::Get))?;
        Ok(match map.get(key) {
            Some(v) => {
                out.extend_from_slice(v);
                true
            }
            None => false,
        })
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        let mut map = self.map.write().map_err(|_| self.lock_err(Op::Write))?;
        if let Some(l) = self
            .log
            .lock()
            .map_err(|_| self.lock_err(Op::Write))?
            .as_mut()
        {
            let io_err = |source| Error::Io {
                engine: ENGINE,
                op: Op::Write,
                path: self.path.clone(),
                source,
            };
            // Logged before applied: a failed append leaves the map as it
            // was, and is cut off so later frames do not follow a torn one.
            let frame = encode_frame(batch);
            let new_len = l.len + frame.len() as u64;
            let logged = match (&l.index, self.cfg.planted) {
                (Some(index), Some(p)) => planted::commit(p, &mut l.file, index, &frame, new_len),
                _ => l.file.write_all(&frame).and_then(|()| {
                    if self.cfg.log == MemLog::Sync {
                        l.file.sync_data()
                    } else {
                        Ok(())
                    }
                }),
            };
            if let Err(e) = logged {
                let _ = l.file.set_len(l.len);
                return Err(io_err(e));
            }
            l.len += frame.len() as u64;
        }
        for op in batch.iter() {
            match op {
                BatchOp::Put(k, v) => {
                    map.insert(k.to_vec(), v.to_vec());
                }
                BatchOp::Delete(k) => {
                    map.remove(k);
                }
                BatchOp::DeleteRange(start, end) => remove_range(&mut map, start, end),
            }
        }
        Ok(())
    }

    fn scan(&self, start: &[u8], visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        let map = self.map.read().map_err(|_| self.lock_err(Op::Iterate))?;
        for (k, v) in map.range(start.to_vec()..) {
            if !visit(k, v) {
                break;
            }
        }
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        self.save(Op::Flush)
    }

    fn stats(&self) -> Result<EngineStats> {
        let map = self.map.read().map_err(|_| self.lock_err(Op::Stats))?;
        Ok(EngineStats {
            entries: Some(map.len() as u64),
            ..EngineStats::default()
        })
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            ordered_iteration: true,
            manual_compaction: false,
            evicts_oldest: false,
            persistent: self.cfg.persist,
            discards_writes: false,
            writers: Some(ledgerbench_core::WriterModel::Single),
            // Removed from the map under the writer's lock, with the batch.
            range_delete: Some(ledgerbench_core::RangeDelete::Native),
        }
    }

    fn close(self: Box<Self>) -> Result<()> {
        self.save(Op::Close)
    }
}

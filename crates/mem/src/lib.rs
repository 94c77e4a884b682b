//! In-memory reference backend: an ordered map behind a lock.
//!
//! It is the suite's reference (its semantics are obvious by construction)
//! and the floor for harness overhead: a workload run on `mem` costs what the
//! driver costs. It persists a snapshot on `flush` and `close`, so the
//! conformance suite's reopen checks apply to it too; a crash loses what was
//! written since the last snapshot, which its capabilities do not hide: it
//! never calls itself durable per batch.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use kvbench_core::{
    Batch, BatchOp, Capabilities, Durability, EngineStats, Error, KvBackend, KvStore, Op, Result,
    fsutil,
};
use serde::{Deserialize, Serialize};

const ENGINE: &str = "mem";
const SNAPSHOT: &str = "snapshot.kvm";
const MAGIC: &[u8; 8] = b"KVBMEM01";

/// Settings of the in-memory backend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemConfig {
    /// Write a snapshot file on flush and close and load it on open.
    pub persist: bool,
}

impl Default for MemConfig {
    fn default() -> Self {
        Self { persist: true }
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
}

impl KvBackend for Mem {
    const NAME: &'static str = ENGINE;
    type Config = MemConfig;
    type Store = MemStore;

    fn open(dir: &Path, cfg: &MemConfig) -> Result<MemStore> {
        fsutil::claim_store_dir(ENGINE, dir)?;
        let snap = dir.join(SNAPSHOT);
        let map = if cfg.persist && snap.exists() {
            load(&snap).map_err(|e| Error::Engine {
                engine: ENGINE,
                op: Op::Open,
                path: dir.to_path_buf(),
                message: format!("snapshot {}: {e}", snap.display()),
            })?
        } else {
            BTreeMap::new()
        };
        Ok(MemStore {
            path: dir.to_path_buf(),
            cfg: cfg.clone(),
            map: RwLock::new(map),
            saving: std::sync::Mutex::new(()),
        })
    }
}

fn load(path: &Path) -> io::Result<BTreeMap<Vec<u8>, Vec<u8>>> {
    let bad = |m: &str| io::Error::new(io::ErrorKind::InvalidData, m.to_string());
    let mut data = Vec::new();
    fs::File::open(path)?.read_to_end(&mut data)?;
    if data.len() < 16 || &data[..8] != MAGIC {
        return Err(bad("not a kvbench mem snapshot (bad magic)"));
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
        Error::Engine {
            engine: ENGINE,
            op,
            path: self.path.clone(),
            message: "lock poisoned by a panicking thread".into(),
        }
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
        fs::rename(&tmp, self.path.join(SNAPSHOT)).map_err(io_err)
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

    fn write(&self, batch: &Batch, _durability: Durability) -> Result<()> {
        let mut map = self.map.write().map_err(|_| self.lock_err(Op::Write))?;
        for op in batch.iter() {
            match op {
                BatchOp::Put(k, v) => {
                    map.insert(k.to_vec(), v.to_vec());
                }
                BatchOp::Delete(k) => {
                    map.remove(k);
                }
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
        }
    }

    fn close(self: Box<Self>) -> Result<()> {
        self.save(Op::Close)
    }
}

//! The `null` backend: writes are thrown away, reads are answered with one
//! value made at open, copied into the caller's buffer (the least any
//! engine's GET does) and marked with the key. A run on it costs what the
//! harness costs (generation, compression, packing, bookkeeping), so its
//! rate is the harness's ceiling: the fastest ingest ledgerbench can feed
//! any engine.
//!
//! It keeps nothing, so it promises nothing: only durability `none`, and
//! lookups on it are not verified ([`Capabilities::discards_writes`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use ledgerbench_core::{
    Batch, Capabilities, Durability, EngineStats, Error, KvBackend, KvStore, Result, fsutil,
};
use serde::{Deserialize, Serialize};

const ENGINE: &str = "null";

/// Settings of the null backend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NullConfig {
    /// Length of the value a read answers with, bytes.
    pub value_bytes: usize,
}

impl Default for NullConfig {
    fn default() -> Self {
        Self { value_bytes: 256 }
    }
}

/// The null backend.
pub struct Null;

/// An open null store: counts what it was given, keeps none of it.
pub struct NullStore {
    path: PathBuf,
    /// What every read answers, before [`mark`].
    value: Vec<u8>,
    entries: AtomicU64,
}

impl KvBackend for Null {
    const NAME: &'static str = ENGINE;
    type Config = NullConfig;
    type Store = NullStore;

    fn discards_writes(_cfg: &NullConfig) -> bool {
        true
    }

    fn open(dir: &Path, cfg: &NullConfig) -> Result<NullStore> {
        fsutil::claim_store_dir(ENGINE, dir)?;
        Ok(NullStore {
            path: dir.to_path_buf(),
            value: made(cfg.value_bytes),
            entries: AtomicU64::new(0),
        })
    }

    fn set_durability(_cfg: &mut NullConfig, level: Durability) -> Result<()> {
        if level == Durability::None {
            return Ok(());
        }
        Err(Error::Config {
            engine: ENGINE,
            message: format!(
                "durability {level}: the null backend keeps nothing, so it promises nothing; run it with --durability none"
            ),
        })
    }

    fn durability(_cfg: &NullConfig) -> Durability {
        Durability::None
    }

    fn read_path(_cfg: &Self::Config) -> ledgerbench_core::ReadPath {
        ledgerbench_core::ReadPath::None
    }

    fn version(_cfg: &Self::Config, _store_dir: &Path) -> Option<String> {
        Some(env!("CARGO_PKG_VERSION").to_string())
    }
}

/// `len` bytes of an xorshift stream: what every read answers, made once.
fn made(len: usize) -> Vec<u8> {
    let mut x = 0xcbf2_9ce4_8422_2325u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// XORs `key`'s first 8 bytes into `value`'s, so reads of two keys differ
/// (a copy and one word: the null's GET stays the cheapest there is).
fn mark(key: &[u8], value: &mut [u8]) {
    for (v, k) in value.iter_mut().zip(key.iter().take(8)) {
        *v ^= k;
    }
}

impl KvStore for NullStore {
    fn engine(&self) -> &'static str {
        ENGINE
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        out.clear();
        out.extend_from_slice(&self.value);
        mark(key, out);
        Ok(true)
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        self.entries
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn scan(&self, _start: &[u8], _visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        Ok(())
    }

    fn stats(&self) -> Result<EngineStats> {
        // Nothing is written anywhere, so every engine byte counter is a
        // measured 0, not an unknown.
        Ok(EngineStats {
            flush_write_bytes: Some(0),
            compaction_write_bytes: Some(0),
            compaction_read_bytes: Some(0),
            wal_bytes: Some(0),
            ..EngineStats::default()
        })
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            ordered_iteration: false,
            manual_compaction: false,
            evicts_oldest: false,
            persistent: false,
            discards_writes: true,
            writers: Some(ledgerbench_core::WriterModel::Concurrent),
            // Discarded like every write.
            range_delete: None,
        }
    }

    fn close(self: Box<Self>) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_vanish_reads_answer_and_only_durability_none_is_accepted() {
        let t = tempfile::tempdir().expect("tempdir");
        let store = Null::open(&t.path().join("s"), &NullConfig::default()).expect("open");
        let mut b = Batch::new();
        b.put(b"k", b"v");
        store.write(&b).expect("write");
        let (mut a, mut c) = (Vec::new(), Vec::new());
        assert!(store.get_into(b"k", &mut a).expect("get"));
        assert!(store.get_into(b"k", &mut c).expect("get"));
        assert_eq!(a.len(), 256);
        assert_eq!(a, c, "the same key reads the same value");
        store.get_into(b"other", &mut c).expect("get");
        assert_ne!(a, c);
        assert!(store.capabilities().discards_writes);
        assert_eq!(store.stats().expect("stats").wal_bytes, Some(0));
        let mut cfg = NullConfig::default();
        assert!(Null::set_durability(&mut cfg, Durability::None).is_ok());
        let e = Null::set_durability(&mut cfg, Durability::Process).expect_err("refused");
        assert!(e.to_string().contains("--durability none"), "{e}");
    }
}

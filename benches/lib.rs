//! Helpers of the criterion benchmarks: the backends under test and data
//! shaped like the Stellar stores (32-byte hashes, ~1.1 KB compressed
//! records, 4-byte sequence values).

use std::path::Path;

use ledgerbench_core::{KvBackend, KvStore};
use ledgerbench_lmdb::{Lmdb, LmdbConfig};
use ledgerbench_mdbx::{Mdbx, MdbxConfig};
use ledgerbench_mem::{Mem, MemConfig};
use ledgerbench_rng::{Rng, stream};
use ledgerbench_rocksdb::{Rocks, RocksConfig};

/// A backend under benchmark: name and opener with bench-sized memory.
pub type Opener = fn(&Path) -> ledgerbench_core::Result<Box<dyn KvStore>>;

/// Every backend config, with memtables sized for a micro-benchmark.
pub fn backends() -> Vec<(&'static str, Opener)> {
    fn small(c: RocksConfig) -> RocksConfig {
        RocksConfig {
            write_buffer_size: 64 << 20,
            max_write_buffer_number: 2,
            max_background_jobs: 2,
            block_cache_bytes: 64 << 20,
            ..c
        }
    }
    vec![
        ("rocksdb-leveled", |d| {
            Rocks::open_boxed(d, &small(RocksConfig::default()))
        }),
        ("rocksdb-fifo", |d| {
            Rocks::open_boxed(d, &small(RocksConfig::fifo(8 << 30)))
        }),
        ("lmdb", |d| Lmdb::open_boxed(d, &LmdbConfig::default())),
        ("mdbx", |d| Mdbx::open_boxed(d, &MdbxConfig::default())),
        ("mem", |d| {
            Mem::open_boxed(
                d,
                &MemConfig {
                    persist: false,
                    log: ledgerbench_mem::MemLog::Off,
                },
            )
        }),
    ]
}

/// Key `i`: a 32-byte transaction-hash-like key.
pub fn key(i: u64) -> [u8; 32] {
    let mut r = Rng::new(stream(7, 1, i));
    let mut k = [0u8; 32];
    for c in k.chunks_mut(8) {
        c.copy_from_slice(&r.next_u64().to_le_bytes());
    }
    k
}

/// Value `i`: 1,150 incompressible bytes, the size of a compressed Stellar record.
pub fn value(i: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(1150);
    Rng::new(stream(7, 2, i)).fill(&mut v, 1150);
    v
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_backend_opens() {
        for (name, open) in super::backends() {
            let d = tempfile::tempdir().expect("tempdir");
            let s = open(&d.path().join("s")).unwrap_or_else(|e| panic!("{name}: {e}"));
            s.close().expect("close");
        }
        assert_ne!(super::key(1), super::key(2));
        assert_eq!(super::value(3).len(), 1150);
    }
}

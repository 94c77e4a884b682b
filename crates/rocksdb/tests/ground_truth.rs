//! RocksDB's engine meters against answers known in advance and against a
//! private loop device. Where loop devices cannot be used (no root, no loop
//! driver) each test prints that it was not run and why.

use ledgerbench_core::{Batch, KvBackend, KvStore, counter_delta};
use ledgerbench_meter::loopdev::LoopFs;
use ledgerbench_rng::Rng;
use ledgerbench_rocksdb::{Rocks, RocksConfig};

fn loopfs(t: &tempfile::TempDir) -> Option<LoopFs> {
    if !ledgerbench_testkit::can_run(LoopFs::available()) {
        return None;
    }
    Some(
        LoopFs::create(
            &t.path().join("img"),
            &t.path().join("mnt"),
            512 << 20,
            None,
        )
        .expect("loop fs"),
    )
}

/// A memtable that holds the whole load, no background compaction: the only
/// writes are the WAL and one flush.
fn one_flush() -> RocksConfig {
    RocksConfig {
        write_buffer_size: 128 << 20,
        max_write_buffer_number: 2,
        max_background_jobs: 2,
        disable_auto_compactions: true,
        ..RocksConfig::default()
    }
}

/// Writes `n` random 32-byte keys with `value` bytes each, 1000 per batch.
fn load(store: &dyn KvStore, seed: u64, n: usize, value: usize) -> u64 {
    let mut r = Rng::new(seed);
    let (mut k, mut v) = (Vec::new(), Vec::new());
    let mut b = Batch::new();
    let mut logical = 0;
    for i in 0..n {
        k.clear();
        v.clear();
        r.fill(&mut k, 32);
        r.fill(&mut v, value);
        b.put(&k, &v);
        if (i + 1) % 1000 == 0 || i + 1 == n {
            logical += b.logical_bytes();
            store.write(&b).expect("write");
            b.clear();
        }
    }
    logical
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn wal_plus_one_flush_writes_twice_the_data_by_engine_and_by_device() {
    let t = tempfile::tempdir().expect("tempdir");
    let Some(fs) = loopfs(&t) else { return };
    let dir = fs.path().join("db");
    let store = Rocks::open_boxed(&dir, &one_flush()).expect("open");
    fs.sync().expect("sync");
    let before = fs.stat().expect("stat");
    // 32 MiB of 1 KiB entries.
    let n = load(&*store, 1, 32 * 1024, 992);
    // Written back before the flush, as ledgerbench's syncfs after each batch
    // does: without it the WAL, deleted once flushed, may never reach the
    // device although the engine counted it.
    fs.sync().expect("sync");
    store.flush().expect("flush");
    let s = store.stats().expect("stats");
    let engine = s.engine_write_bytes().expect("RocksDB counts its bytes");
    store.close().expect("close");
    fs.sync().expect("sync");
    let device = fs.stat().expect("stat").since(&before).write_bytes();
    assert_eq!(s.compaction_write_bytes, Some(0), "no compaction ran");
    // WAL: the data plus record headers; the SST: the data plus index and
    // bloom filter. Each within a few percent of N.
    let (wal, flush) = (
        s.wal_bytes.expect("wal"),
        s.flush_write_bytes.expect("flush"),
    );
    for (what, b) in [("wal", wal), ("flush", flush)] {
        let r = b as f64 / n as f64;
        assert!(
            (1.0..1.05).contains(&r),
            "{what} wrote {b} bytes for {n}: {r:.3}"
        );
    }
    // The device sees the engine's bytes plus the filesystem's journal and
    // metadata and RocksDB's small files (MANIFEST, OPTIONS, LOG), which
    // the engine counters leave out.
    let r = device as f64 / engine as f64;
    eprintln!(
        "rocksdb: logical {n}, wal {wal}, flush {flush}, engine {engine}, device {device}: {r:.3}"
    );
    assert!(
        (0.98..1.10).contains(&r),
        "device {device} vs engine {engine}: {r:.3}"
    );
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn direct_reads_cost_one_device_read_per_block_cache_miss() {
    let t = tempfile::tempdir().expect("tempdir");
    let Some(fs) = loopfs(&t) else { return };
    let dir = fs.path().join("db");
    let keys = 200_000;
    {
        let store = Rocks::open_boxed(&dir, &one_flush()).expect("open");
        load(&*store, 2, keys, 100);
        store.flush().expect("flush");
        store.compact().expect("compact");
        store.close().expect("close");
    }
    let cfg = RocksConfig {
        use_direct_reads: true,
        block_cache_bytes: 8 << 20,
        ..one_flush()
    };
    let store = Rocks::open_boxed(&dir, &cfg).expect("reopen");
    // Regenerates the loaded keys and reads `n` of them from position `from`.
    let gets = |from: usize, n: usize| {
        let mut r = Rng::new(2);
        let (mut k, mut v) = (Vec::new(), Vec::new());
        let mut found = 0;
        for i in 0..from + n {
            k.clear();
            v.clear();
            r.fill(&mut k, 32);
            r.fill(&mut v, 100);
            if i >= from && store.get(&k).expect("get").as_deref() == Some(&v[..]) {
                found += 1;
            }
        }
        found
    };
    // Opens every table (index and filter are read outside the block cache).
    assert_eq!(gets(0, 2000), 2000);
    let (s0, d0) = (store.stats().expect("stats"), fs.stat().expect("stat"));
    assert_eq!(gets(100_000, 5000), 5000);
    let (s1, d1) = (store.stats().expect("stats"), fs.stat().expect("stat"));
    let misses = counter_delta(s1.block_cache_misses, s0.block_cache_misses).expect("misses");
    let reads = d1.since(&d0).read_ios;
    assert!(
        misses > 2500,
        "a cache of 8 MiB misses most of {keys} keys: {misses}"
    );
    let r = reads as f64 / misses as f64;
    eprintln!("rocksdb direct reads: {reads} device reads for {misses} block cache misses: {r:.3}");
    assert!(
        (0.98..1.02).contains(&r),
        "{reads} device reads for {misses} misses"
    );
    store.close().expect("close");
}

#[test]
fn counters_restart_on_reopen_and_the_delta_says_unknown_not_zero() {
    let t = tempfile::tempdir().expect("tempdir");
    let dir = t.path().join("db");
    let store = Rocks::open_boxed(&dir, &one_flush()).expect("open");
    let n = load(&*store, 3, 4000, 500);
    let before = store.stats().expect("stats");
    assert!(before.wal_bytes.expect("wal") >= n);
    store.close().expect("close");
    let store = Rocks::open_boxed(&dir, &one_flush()).expect("reopen");
    load(&*store, 4, 100, 500);
    let after = store.stats().expect("stats");
    // A fresh instance counts from 0: the WAL ticker fell, and the delta
    // across the reopen is unknown rather than a made-up 0 or wraparound.
    assert!(after.wal_bytes < before.wal_bytes);
    assert_eq!(counter_delta(after.wal_bytes, before.wal_bytes), None);
    store.close().expect("close");
}

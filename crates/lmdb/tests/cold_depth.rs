//! Proving IO per GET with a known answer: in an LMDB tree of depth D, a GET
//! on a cold cache faults in exactly D pages (root, branches, leaf), so the
//! private device must see about D reads per GET. Needs root and loop
//! devices; where they are missing the test says it was not run and why.

use ledgerbench_core::{Batch, KvBackend, KvStore};
use ledgerbench_lmdb::{Lmdb, LmdbConfig};
use ledgerbench_meter::{cgroup, loopdev::LoopFs, rusage::Usage};

fn key(i: u64) -> [u8; 32] {
    // Spread keys over the whole tree, so each probe walks its own path.
    let mut k = [0u8; 32];
    k[..8].copy_from_slice(&i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes());
    k[8..16].copy_from_slice(&i.to_be_bytes());
    k
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn a_cold_get_reads_tree_depth_pages() {
    if !ledgerbench_testkit::can_run(LoopFs::available().and_then(|()| cgroup::drop_caches())) {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let fs = LoopFs::create(
        &t.path().join("img"),
        &t.path().join("mnt"),
        512 << 20,
        Some(0),
    )
    .expect("loop fs");
    let dir = fs.path().join("store");
    let cfg = LmdbConfig {
        map_size: 256 << 20,
        ..LmdbConfig::default()
    };
    // 200k entries of 32 + 100 bytes: about 7,000 leaf pages, depth 3.
    let n = 200_000u64;
    let store = Lmdb::open(&dir, &cfg).expect("open");
    let mut b = Batch::new();
    for i in 0..n {
        b.put(&key(i), &[7u8; 100]);
        if b.len() == 10_000 {
            store.write(&b).expect("write");
            b.clear();
        }
    }
    let depth = store.stats().expect("stats").tree_depth.expect("depth");
    assert!(depth >= 3, "tree too shallow to prove anything: {depth}");
    Box::new(store).close().expect("close");

    let probes = 20u64;
    let (mut reads, mut faults) = (0u64, 0u64);
    for p in 0..probes {
        // Closing unmaps the file; only then can drop_caches evict its pages.
        fs.sync().expect("sync");
        cgroup::drop_caches().expect("drop caches");
        let store = Lmdb::open(&dir, &cfg).expect("reopen");
        let (d0, u0) = (fs.stat().expect("stat"), Usage::now());
        let v = store.get(&key(p * 9_973 % n)).expect("get");
        let (d1, u1) = (fs.stat().expect("stat"), Usage::now());
        assert_eq!(v.as_deref(), Some(&[7u8; 100][..]));
        reads += d1.since(&d0).read_ios;
        faults += u1.since(&u0).major_faults;
        Box::new(store).close().expect("close");
    }
    let per_get = reads as f64 / probes as f64;
    let faults_per_get = faults as f64 / probes as f64;
    eprintln!(
        "depth {depth}: {per_get:.2} device reads and {faults_per_get:.2} major faults per cold GET"
    );
    assert!(
        (per_get - f64::from(depth)).abs() <= 0.5,
        "expected about {depth} reads per cold GET, measured {per_get:.2}"
    );
    assert!(
        (faults_per_get - f64::from(depth)).abs() <= 0.5,
        "expected about {depth} major faults per cold GET, measured {faults_per_get:.2}"
    );
}

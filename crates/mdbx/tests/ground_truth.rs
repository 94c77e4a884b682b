//! MDBX's page-operation meter against a private loop device. Where loop
//! devices cannot be used (no root, no loop driver) the test prints that it
//! was not run and why.

use ledgerbench_core::{Batch, Durability, KvBackend};
use ledgerbench_mdbx::{Mdbx, MdbxConfig};
use ledgerbench_meter::loopdev::LoopFs;
use ledgerbench_rng::Rng;

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn page_ops_times_page_size_match_the_device_when_every_commit_is_synced() {
    let t = tempfile::tempdir().expect("tempdir");
    if !ledgerbench_testkit::can_run(LoopFs::available()) {
        return;
    }
    let fs = LoopFs::create(
        &t.path().join("img"),
        &t.path().join("mnt"),
        512 << 20,
        None,
    )
    .expect("loop fs");
    let mut cfg = MdbxConfig::default();
    Mdbx::set_durability(&mut cfg, Durability::Power).expect("power");
    let store = Mdbx::open_boxed(&fs.path().join("db"), &cfg).expect("open");
    fs.sync().expect("sync");
    let (s0, d0) = (store.stats().expect("stats"), fs.stat().expect("stat"));
    let mut r = Rng::new(7);
    let (mut k, mut v, mut b) = (Vec::new(), Vec::new(), Batch::new());
    // 200 commits of 100 random 32-byte keys with 400-byte values.
    for _ in 0..200 {
        for _ in 0..100 {
            k.clear();
            v.clear();
            r.fill(&mut k, 32);
            r.fill(&mut v, 400);
            b.put(&k, &v);
        }
        store.write(&b).expect("write");
        b.clear();
    }
    let s1 = store.stats().expect("stats");
    store.close().expect("close");
    fs.sync().expect("sync");
    let device = fs.stat().expect("stat").since(&d0).write_bytes();
    let engine = s1.engine_write_bytes().expect("pages") - s0.engine_write_bytes().expect("pages");
    let r = device as f64 / engine as f64;
    eprintln!("mdbx: engine {engine} bytes (pages x page size), device {device}: {r:.3}");
    // A durable commit writes its dirty pages and then a meta page (which
    // the page counters leave out), plus the filesystem's journal for the
    // file's growth: the device sees a little more than the pages, never
    // less.
    assert!(
        (1.0..1.10).contains(&r),
        "device {device} vs engine {engine}: {r:.3}"
    );
}

//! Proving the device meter with known answers, on a private loop device.
//! Where loop devices cannot be used (no root, no loop driver) each test
//! prints that it was not run and why.

use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

use ledgerbench_meter::loopdev::LoopFs;

fn loopfs(t: &tempfile::TempDir, size: u64) -> Option<LoopFs> {
    if !ledgerbench_testkit::can_run(LoopFs::available()) {
        return None;
    }
    Some(
        LoopFs::create(&t.path().join("img"), &t.path().join("mnt"), size, Some(0))
            .expect("loop fs"),
    )
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn plain_file_writes_give_write_amplification_near_one() {
    let t = tempfile::tempdir().expect("tempdir");
    let Some(fs) = loopfs(&t, 256 << 20) else {
        return;
    };
    fs.sync().expect("sync");
    let before = fs.stat().expect("stat");
    let n = 64u64 << 20;
    let mut f = std::fs::File::create(fs.path().join("data")).expect("create");
    let chunk = vec![0x5au8; 1 << 20];
    for _ in 0..64 {
        f.write_all(&chunk).expect("write");
    }
    f.sync_all().expect("fsync");
    drop(f);
    fs.sync().expect("sync");
    let d = fs.stat().expect("stat").since(&before);
    let wa = d.write_bytes() as f64 / n as f64;
    eprintln!(
        "wrote {n} bytes, device saw {} in {} requests: WA {wa:.3}",
        d.write_bytes(),
        d.write_ios
    );
    assert!((1.0..1.1).contains(&wa), "write amplification {wa}");
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn reading_uncached_pages_costs_one_device_read_each() {
    let t = tempfile::tempdir().expect("tempdir");
    let Some(fs) = loopfs(&t, 128 << 20) else {
        return;
    };
    let pages = 8192u64;
    let path = fs.path().join("data");
    let f = std::fs::File::create(&path).expect("create");
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut page = vec![0u8; 4096];
    for p in 0..pages {
        for c in page.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            c.copy_from_slice(&x.to_le_bytes());
        }
        f.write_all_at(&page, p * 4096).expect("write");
    }
    f.sync_all().expect("fsync");
    drop(f);
    let f = std::fs::File::open(&path).expect("open");
    // Evict the file's clean pages and turn off read-ahead for this file.
    // SAFETY: valid fd, whole-file range.
    unsafe {
        assert_eq!(
            libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED),
            0
        );
        assert_eq!(
            libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM),
            0
        );
    }
    let before = fs.stat().expect("stat");
    let k = 1000u64;
    let mut buf = vec![0u8; 4096];
    for i in 0..k {
        // Distinct pages spread over the file (1000 and 8192 are coprime-stepped).
        let p = (i * 4099) % pages;
        f.read_exact_at(&mut buf, p * 4096).expect("read");
    }
    let d = fs.stat().expect("stat").since(&before);
    eprintln!(
        "read {k} uncached pages: {} device reads, {} bytes",
        d.read_ios,
        d.read_bytes()
    );
    assert!(
        d.read_ios >= k * 95 / 100 && d.read_ios <= k * 110 / 100,
        "{} reads for {k} pages",
        d.read_ios
    );
    assert!(
        d.read_bytes() <= k * 4096 * 115 / 100,
        "{} bytes",
        d.read_bytes()
    );
}

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn a_remount_waits_for_a_file_held_open_briefly_and_names_a_holder_that_stays() {
    let t = tempfile::tempdir().expect("tempdir");
    let Some(mut fs) = loopfs(&t, 64 << 20) else {
        return;
    };
    // As a killed process blocked in an fsync: its files close late.
    let f = std::fs::File::create(fs.path().join("held")).expect("create");
    let late = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(400));
        drop(f);
    });
    fs.remount().expect("a remount once the file closes");
    late.join().expect("closer");
    // One that never lets go is named in the error.
    let held = ledgerbench_meter::mounts::holders(fs.path());
    assert_eq!(held, "no process we can see");
    let _f = std::fs::File::open(fs.path()).expect("open the mount");
    let held = ledgerbench_meter::mounts::holders(fs.path());
    assert!(
        held.contains(&format!("pid {} ", std::process::id())),
        "{held}"
    );
}

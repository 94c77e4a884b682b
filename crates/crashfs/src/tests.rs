//! The layer against hand-checked outcomes: what survives each fault.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use ledgerbench_rng::Rng;

use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    backing: PathBuf,
    mnt: PathBuf,
    scratch: PathBuf,
}

fn fixture() -> Option<Fixture> {
    if !ledgerbench_testkit::can_run(available()) {
        return None;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (backing, mnt, scratch) = (
        dir.path().join("backing"),
        dir.path().join("mnt"),
        dir.path().join("scratch"),
    );
    for d in [&backing, &mnt, &scratch] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    Some(Fixture {
        _dir: dir,
        backing,
        mnt,
        scratch,
    })
}

impl Fixture {
    fn mount(&self) -> Mounted {
        Mounted::mount(&self.backing, &self.mnt, &self.scratch).expect("mount")
    }
}

fn sync_dir(p: &Path) {
    File::open(p).and_then(|f| f.sync_all()).expect("fsync dir");
}

fn write_synced(p: &Path, bytes: &[u8]) {
    let mut f = File::create(p).expect("create");
    f.write_all(bytes).expect("write");
    f.sync_all().expect("fsync");
}

#[test]
#[ignore = "privileged: mounts a FUSE filesystem"]
fn lose_keeps_exactly_what_was_synced() {
    let Some(fx) = fixture() else { return };
    let m = fx.mount();
    write_synced(&fx.mnt.join("kept"), b"synced");
    sync_dir(&fx.mnt);
    // Appended but not synced; a new name whose directory is not synced;
    // a synced file whose name is not.
    OpenOptions::new()
        .append(true)
        .open(fx.mnt.join("kept"))
        .and_then(|mut f| f.write_all(b" and more"))
        .expect("append");
    std::fs::write(fx.mnt.join("new"), b"x").expect("new");
    write_synced(&fx.mnt.join("nameless"), b"data");
    std::fs::rename(fx.mnt.join("kept"), fx.mnt.join("moved")).expect("rename");
    assert!(fx.backing.join("moved").exists(), "writes pass through");
    let r = m.crash(Fault::Lose, &mut Rng::new(1)).expect("crash");
    assert_eq!(
        std::fs::read(fx.backing.join("kept")).expect("kept"),
        b"synced"
    );
    for gone in ["new", "nameless", "moved"] {
        assert!(!fx.backing.join(gone).exists(), "{gone} survived a lose");
    }
    assert_eq!((r.persisted_writes, r.persisted_names), (0, 0));
    assert_eq!(r.unsynced_names, 3, "{r:?}");
}

#[test]
#[ignore = "privileged: mounts a FUSE filesystem"]
fn synced_removes_and_renames_stay_and_unsynced_ones_come_back() {
    let Some(fx) = fixture() else { return };
    let m = fx.mount();
    write_synced(&fx.mnt.join("a"), b"A");
    write_synced(&fx.mnt.join("b"), b"B");
    write_synced(&fx.mnt.join("c"), b"C");
    sync_dir(&fx.mnt);
    std::fs::remove_file(fx.mnt.join("a")).expect("rm a");
    std::fs::rename(fx.mnt.join("b"), fx.mnt.join("c")).expect("b over c");
    sync_dir(&fx.mnt);
    std::fs::remove_file(fx.mnt.join("c")).expect("rm c");
    m.crash(Fault::Lose, &mut Rng::new(2)).expect("crash");
    assert!(!fx.backing.join("a").exists());
    assert!(!fx.backing.join("b").exists());
    assert_eq!(std::fs::read(fx.backing.join("c")).expect("c back"), b"B");
    // A clean unmount keeps what a crash would not.
    let m = fx.mount();
    std::fs::write(fx.mnt.join("d"), b"D").expect("d");
    m.unmount().expect("unmount");
    assert_eq!(std::fs::read(fx.backing.join("d")).expect("d"), b"D");
}

/// Eight unsynced 4 KiB writes to one synced file; each block afterwards
/// must be wholly old or wholly new.
fn blocks_after(fault: Fault, seed: u64) -> (Vec<Option<bool>>, FsCrash) {
    let fx = fixture().expect("checked by the caller");
    let m = fx.mount();
    write_synced(&fx.mnt.join("f"), &[0u8; 8 * 4096]);
    sync_dir(&fx.mnt);
    let f = OpenOptions::new()
        .write(true)
        .open(fx.mnt.join("f"))
        .expect("open");
    for i in 0..8u64 {
        f.write_all_at(&[1 + i as u8; 4096], i * 4096)
            .expect("write");
    }
    drop(f);
    let r = m.crash(fault, &mut Rng::new(seed)).expect("crash");
    let got = std::fs::read(fx.backing.join("f")).expect("read");
    assert_eq!(got.len(), 8 * 4096);
    let blocks = got
        .chunks(4096)
        .enumerate()
        .map(|(i, b)| {
            if b.iter().all(|&x| x == 0) {
                Some(false)
            } else if b.iter().all(|&x| x == 1 + i as u8) {
                Some(true)
            } else {
                None
            }
        })
        .collect();
    (blocks, r)
}

#[test]
#[ignore = "privileged: mounts a FUSE filesystem"]
fn a_page_reaches_the_device_with_every_earlier_write_to_it() {
    let Some(fx) = fixture() else { return };
    let (mut later_kept, mut earlier_alone) = (0, 0);
    for seed in 0..16 {
        let m = fx.mount();
        let path = fx.mnt.join(format!("p{seed}"));
        write_synced(&path, &[0u8; 4096]);
        sync_dir(&fx.mnt);
        // Two unsynced writes to different bytes of one page, as a meta
        // page's header and its body.
        let f = OpenOptions::new().write(true).open(&path).expect("open");
        f.write_all_at(&[1; 8], 0).expect("earlier");
        f.write_all_at(&[2; 8], 100).expect("later");
        drop(f);
        m.crash(Fault::Reorder, &mut Rng::new(seed)).expect("crash");
        let got = std::fs::read(fx.backing.join(format!("p{seed}"))).expect("read");
        let (earlier, later) = (got[..8] == [1; 8], got[100..108] == [2; 8]);
        assert!(!later || earlier, "seed {seed}: the later write alone");
        later_kept += u32::from(later);
        earlier_alone += u32::from(earlier && !later);
    }
    assert!(
        later_kept > 0 && earlier_alone > 0,
        "{later_kept} {earlier_alone}"
    );
}

#[test]
#[ignore = "privileged: mounts a FUSE filesystem"]
fn reorder_keeps_a_random_subset_of_whole_writes() {
    if !ledgerbench_testkit::can_run(available()) {
        return;
    }
    let mut kept_sets = std::collections::HashSet::new();
    for seed in 0..6 {
        let (blocks, r) = blocks_after(Fault::Reorder, seed);
        assert!(
            blocks.iter().all(Option::is_some),
            "a write was split: {blocks:?}"
        );
        let kept: Vec<bool> = blocks.iter().map(|b| b == &Some(true)).collect();
        assert_eq!(
            kept.iter().filter(|&&k| k).count() as u64,
            r.persisted_writes
        );
        assert_eq!(r.unsynced_writes, 8);
        kept_sets.insert(kept);
    }
    assert!(
        kept_sets.len() >= 4,
        "seeds chose the same subsets: {kept_sets:?}"
    );
    let (lost, _) = blocks_after(Fault::Lose, 0);
    assert!(lost.iter().all(|b| b == &Some(false)), "{lost:?}");
}

#[test]
#[ignore = "privileged: mounts a FUSE filesystem"]
fn torn_cuts_one_write_at_a_sector_boundary() {
    let Some(fx) = fixture() else { return };
    let m = fx.mount();
    write_synced(&fx.mnt.join("f"), &[0u8; 3 * 4096]);
    sync_dir(&fx.mnt);
    let f = OpenOptions::new()
        .write(true)
        .open(fx.mnt.join("f"))
        .expect("open");
    f.write_all_at(&[7u8; 2 * 4096], 1000).expect("write");
    drop(f);
    let r = m.crash(Fault::Torn, &mut Rng::new(3)).expect("crash");
    let t = r.torn.expect("a write spans boundaries");
    // The kernel hands the write over in pieces at page boundaries.
    assert_eq!(t.path, "f");
    assert!(t.offset >= 1000 && t.offset + t.len <= 1000 + 8192, "{t:?}");
    assert!(
        t.kept > 0 && t.kept < t.len && (t.offset + t.kept) % 512 == 0,
        "{t:?}"
    );
    let got = std::fs::read(fx.backing.join("f")).expect("read");
    let (start, end) = (t.offset as usize, (t.offset + t.kept) as usize);
    assert!(
        got[start..end].iter().all(|&x| x == 7),
        "the kept part is there"
    );
    let after = (t.offset + t.len) as usize;
    assert!(
        got[end..after].iter().all(|&x| x == 0),
        "the cut part is not"
    );
}

#[test]
#[ignore = "privileged: mounts a FUSE filesystem"]
fn a_write_through_an_o_dsync_handle_is_durable_when_it_returns() {
    use std::os::unix::fs::OpenOptionsExt;
    let Some(fx) = fixture() else { return };
    let m = fx.mount();
    write_synced(&fx.mnt.join("meta"), &[0u8; 4096]);
    sync_dir(&fx.mnt);
    // LMDB writes its meta page so: no fsync follows.
    for flag in [libc::O_DSYNC, libc::O_SYNC] {
        let f = OpenOptions::new()
            .write(true)
            .custom_flags(flag)
            .open(fx.mnt.join("meta"))
            .expect("open");
        f.write_all_at(&[flag as u8; 512], 0).expect("write");
    }
    m.crash(Fault::Lose, &mut Rng::new(4)).expect("crash");
    let got = std::fs::read(fx.backing.join("meta")).expect("read");
    assert!(
        got[..512].iter().all(|&x| x == libc::O_SYNC as u8),
        "{:?}",
        &got[..8]
    );
}

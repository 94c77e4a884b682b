//! One conformance suite that every backend and config must pass.
//!
//! A backend crate instantiates it once per config with
//! [`conformance_suite!`], which expands to one `#[test]` per case, so a
//! failure names the backend, the config and the case. Each case is a plain
//! function over a [`Subject`], so the suite itself stays engine-free.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use kvbench_core::{Batch, Durability, Error, KvStore, Op, Result, fsutil};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Opens a store of the config under test in a directory.
pub type Opener = fn(&Path) -> Result<Box<dyn KvStore>>;

/// A backend config under test.
pub struct Subject {
    /// Name used in messages, e.g. `rocksdb-fifo`.
    pub name: &'static str,
    /// Opens the store with the config under test.
    pub open: Opener,
    /// Opens the store with a size cap of about `SMALL_CAP` bytes, for engines
    /// whose size is bounded by config (LMDB map size, MDBX upper geometry).
    pub open_small: Option<Opener>,
    /// For configs that evict the oldest data (FIFO): the size cap in bytes.
    pub fifo_cap: Option<u64>,
}

/// Size cap, in bytes, that `Subject::open_small` configures.
pub const SMALL_CAP: u64 = 1 << 20;

/// A fresh, empty scratch directory removed on drop.
pub struct Scratch {
    _dir: tempfile::TempDir,
    /// Path where the store goes (does not exist yet).
    pub store: PathBuf,
}

impl Scratch {
    /// Makes a new scratch directory.
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("kvbench-conf-")
            .tempdir()
            .expect("create scratch dir");
        let store = dir.path().join("store");
        Self { _dir: dir, store }
    }
}

impl Default for Scratch {
    fn default() -> Self {
        Self::new()
    }
}

fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

fn random_bytes(r: &mut ChaCha8Rng, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    r.fill_bytes(&mut v);
    v
}

fn put_all(store: &dyn KvStore, pairs: &[(Vec<u8>, Vec<u8>)], d: Durability) {
    let mut b = Batch::new();
    for (k, v) in pairs {
        b.put(k, v);
    }
    store.write(&b, d).unwrap();
}

fn reopen(s: &Subject, store: Box<dyn KvStore>) -> Box<dyn KvStore> {
    let path = store.path().to_path_buf();
    store.close().unwrap();
    (s.open)(&path).unwrap_or_else(|e| panic!("{}: reopen failed: {e}", s.name))
}

/// Put, get, overwrite, delete.
pub fn put_get_overwrite_delete(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    let mut b = Batch::new();
    b.put(b"alpha", b"1");
    b.put(b"beta", b"2");
    st.write(&b, Durability::NoSync).unwrap();
    assert_eq!(st.get(b"alpha").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(st.get(b"beta").unwrap().as_deref(), Some(&b"2"[..]));

    let mut b = Batch::new();
    b.put(b"alpha", b"one");
    b.delete(b"beta");
    st.write(&b, Durability::NoSync).unwrap();
    assert_eq!(st.get(b"alpha").unwrap().as_deref(), Some(&b"one"[..]));
    assert_eq!(
        st.get(b"beta").unwrap(),
        None,
        "{}: deleted key still visible",
        s.name
    );

    // Within one batch, later operations win.
    let mut b = Batch::new();
    b.put(b"gamma", b"x");
    b.delete(b"gamma");
    b.put(b"delta", b"x");
    b.put(b"delta", b"y");
    st.write(&b, Durability::NoSync).unwrap();
    assert_eq!(st.get(b"gamma").unwrap(), None);
    assert_eq!(st.get(b"delta").unwrap().as_deref(), Some(&b"y"[..]));

    // get_into clears the buffer it is given.
    let mut buf = b"stale".to_vec();
    assert!(st.get_into(b"alpha", &mut buf).unwrap());
    assert_eq!(buf, b"one");
    assert!(!st.get_into(b"nope", &mut buf).unwrap());
    st.close().unwrap();
}

/// A key never written, and one deleted, read as None.
pub fn missing_key_is_none(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    assert_eq!(st.get(b"never-written").unwrap(), None);
    assert_eq!(st.get(&[0u8; 32]).unwrap(), None);
    put_all(&*st, &[(b"k".to_vec(), b"v".to_vec())], Durability::NoSync);
    assert_eq!(st.get(b"k\0").unwrap(), None, "prefix match is not a hit");
    assert_eq!(st.get(b"").unwrap(), None);
    st.close().unwrap();
}

/// A committed batch is entirely visible after close and reopen, and a batch
/// that fails (store full) leaves nothing of itself behind.
pub fn batch_is_all_or_nothing_across_reopen(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    let mut r = rng(7);
    let first: Vec<_> = (0..500)
        .map(|_| (random_bytes(&mut r, 32), random_bytes(&mut r, 100)))
        .collect();
    put_all(&*st, &first, Durability::Sync);
    // Second batch: overwrite some, delete some, add some.
    let mut b = Batch::new();
    let mut expect: BTreeMap<Vec<u8>, Option<Vec<u8>>> = first
        .iter()
        .map(|(k, v)| (k.clone(), Some(v.clone())))
        .collect();
    for (i, (k, _)) in first.iter().enumerate().take(200) {
        if i % 2 == 0 {
            b.delete(k);
            expect.insert(k.clone(), None);
        } else {
            let v = random_bytes(&mut r, 50);
            b.put(k, &v);
            expect.insert(k.clone(), Some(v));
        }
    }
    for _ in 0..100 {
        let (k, v) = (random_bytes(&mut r, 32), random_bytes(&mut r, 70));
        b.put(&k, &v);
        expect.insert(k, Some(v));
    }
    st.write(&b, Durability::Sync).unwrap();
    let st = reopen(s, st);
    for (k, v) in &expect {
        assert_eq!(
            &st.get(k).unwrap(),
            v,
            "{}: batch not applied whole after reopen",
            s.name
        );
    }
    st.close().unwrap();

    let Some(open_small) = s.open_small else {
        return;
    };
    let sc = Scratch::new();
    let st = open_small(&sc.store).unwrap();
    put_all(
        &*st,
        &[(b"before".to_vec(), b"kept".to_vec())],
        Durability::Sync,
    );
    let mut big = Batch::new();
    for i in 0..64u32 {
        big.put(&i.to_be_bytes(), &random_bytes(&mut r, 64 << 10));
    }
    let err = st
        .write(&big, Durability::Sync)
        .expect_err("a batch over the cap must fail");
    assert!(
        err.is_full(),
        "{}: expected a full-store error, got {err}",
        s.name
    );
    let st = reopen_with(open_small, st);
    assert_eq!(st.get(b"before").unwrap().as_deref(), Some(&b"kept"[..]));
    for i in 0..64u32 {
        assert_eq!(
            st.get(&i.to_be_bytes()).unwrap(),
            None,
            "{}: part of a failed batch is visible",
            s.name
        );
    }
    st.close().unwrap();
}

fn reopen_with(open: Opener, store: Box<dyn KvStore>) -> Box<dyn KvStore> {
    let path = store.path().to_path_buf();
    store.close().unwrap();
    open(&path).unwrap()
}

/// Iteration from a key returns keys in byte order, starting at the first key >= start.
pub fn ordered_iteration(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    if !st.capabilities().ordered_iteration {
        return;
    }
    let mut r = rng(11);
    let mut keys: Vec<Vec<u8>> = (0..1000)
        .map(|_| {
            let n = r.random_range(1..40);
            random_bytes(&mut r, n)
        })
        .collect();
    let pairs: Vec<_> = keys
        .iter()
        .map(|k| (k.clone(), k.iter().rev().copied().collect()))
        .collect();
    put_all(&*st, &pairs, Durability::NoSync);
    keys.sort();
    keys.dedup();
    let all = st.scan_collect(b"", usize::MAX).unwrap();
    let got: Vec<_> = all.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(got, keys, "{}: full scan not in byte order", s.name);
    for (k, v) in &all {
        assert_eq!(v, &k.iter().rev().copied().collect::<Vec<u8>>());
    }
    let start = keys[400].clone();
    let mut probe = start.clone();
    probe.pop(); // a start key that may not exist
    let from = st.scan_collect(&probe, 10).unwrap();
    let expect: Vec<_> = keys
        .iter()
        .filter(|k| **k >= probe)
        .take(10)
        .cloned()
        .collect();
    assert_eq!(from.into_iter().map(|p| p.0).collect::<Vec<_>>(), expect);
    assert!(st.scan_collect(&[0xff; 64], 10).unwrap().is_empty());
    st.close().unwrap();
}

/// 10,000 uniformly random 32-byte keys (the shape of transaction hashes).
pub fn random_32_byte_keys(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    let mut r = rng(32);
    let pairs: Vec<_> = (0..10_000)
        .map(|_| {
            let k = random_bytes(&mut r, 32);
            let v = k[..8].repeat(4);
            (k, v)
        })
        .collect();
    for chunk in pairs.chunks(1000) {
        put_all(&*st, chunk, Durability::NoSync);
    }
    st.flush().unwrap();
    let mut buf = Vec::new();
    for (k, v) in &pairs {
        assert!(st.get_into(k, &mut buf).unwrap(), "{}: key lost", s.name);
        assert_eq!(&buf, v);
    }
    if st.capabilities().ordered_iteration {
        let mut n = 0usize;
        st.scan(b"", &mut |_, _| {
            n += 1;
            true
        })
        .unwrap();
        assert_eq!(n, pairs.len());
    }
    st.close().unwrap();
}

/// Empty values and values of 1 MiB and more round-trip exactly.
pub fn empty_and_large_values(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    let mut r = rng(3);
    let pairs = vec![
        (b"empty".to_vec(), Vec::new()),
        (b"one-mib".to_vec(), random_bytes(&mut r, 1 << 20)),
        (b"three-mib".to_vec(), random_bytes(&mut r, 3 << 20)),
    ];
    put_all(&*st, &pairs, Durability::Sync);
    let st = reopen(s, st);
    for (k, v) in &pairs {
        let got = st.get(k).unwrap();
        assert_eq!(
            got.as_ref().map(Vec::len),
            Some(v.len()),
            "{}: {:?}",
            s.name,
            String::from_utf8_lossy(k)
        );
        assert!(got.as_ref() == Some(v));
    }
    st.close().unwrap();
}

/// Data committed with `Sync` survives close and reopen; so does `NoSync`
/// data followed by a flush and a clean close.
pub fn synced_data_survives_reopen(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    put_all(
        &*st,
        &[(b"synced".to_vec(), b"1".to_vec())],
        Durability::Sync,
    );
    put_all(
        &*st,
        &[(b"flushed".to_vec(), b"2".to_vec())],
        Durability::NoSync,
    );
    st.flush().unwrap();
    let st = reopen(s, st);
    assert_eq!(
        st.get(b"synced").unwrap().as_deref(),
        Some(&b"1"[..]),
        "{}",
        s.name
    );
    assert_eq!(
        st.get(b"flushed").unwrap().as_deref(),
        Some(&b"2"[..]),
        "{}",
        s.name
    );
    // And once more, to catch stores that only survive one reopen.
    let st = reopen(s, st);
    assert_eq!(st.get(b"synced").unwrap().as_deref(), Some(&b"1"[..]));
    st.close().unwrap();
}

/// Every statistic the engine reports is real: present fields agree with
/// what was written, so a hard-coded zero or a made-up count fails here.
pub fn stats_are_real_or_absent(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    let n = 3000u64;
    let mut r = rng(5);
    let pairs: Vec<_> = (0..n)
        .map(|_| (random_bytes(&mut r, 32), random_bytes(&mut r, 400)))
        .collect();
    put_all(&*st, &pairs, Durability::NoSync);
    st.flush().unwrap();
    let stats = st.stats().unwrap();
    let name = s.name;
    if let Some(e) = stats.entries {
        assert_eq!(e, n, "{name}: entries");
    }
    if let Some(d) = stats.tree_depth {
        assert!((1..=6).contains(&d), "{name}: depth {d}");
    }
    if let (Some(l), Some(ps)) = (stats.leaf_pages, stats.page_size) {
        // 3000 x 432 bytes of data cannot fit in fewer pages than this.
        assert!(l * u64::from(ps) >= n * 432 / 2, "{name}: leaf pages {l}");
    }
    if let Some(f) = stats.flush_write_bytes {
        assert!(
            f >= n * 432 / 2,
            "{name}: flush bytes {f} after flushing {} bytes",
            n * 432
        );
    }
    if let Some(w) = stats.wal_bytes {
        assert!(w >= n * 432, "{name}: wal bytes {w}");
    }
    if let Some(sst) = stats.sst_bytes {
        assert!(sst >= n * 432 / 2, "{name}: sst bytes {sst}");
    }
    if let Some(files) = &stats.files_per_level {
        assert!(
            files.iter().sum::<u64>() >= 1,
            "{name}: no SST after a flush"
        );
    }
    if let Some(p) = stats.page_ops {
        assert!(
            p.newly > 0,
            "{name}: MDBX reports no new pages after writing"
        );
    }
    let json = serde_json::to_string(&stats).unwrap();
    assert!(
        !json.contains("null"),
        "{name}: absent stats must be omitted, not null: {json}"
    );
    st.close().unwrap();
}

/// On-disk size counts allocated blocks and grows with the data.
pub fn disk_usage_tracks_data(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    if !st.capabilities().persistent {
        return;
    }
    let before = st.disk_usage().unwrap();
    let mut r = rng(9);
    // 4 MiB of incompressible values.
    let pairs: Vec<_> = (0..1024u32)
        .map(|i| (i.to_be_bytes().to_vec(), random_bytes(&mut r, 4096)))
        .collect();
    put_all(&*st, &pairs, Durability::Sync);
    st.flush().unwrap();
    let after = st.disk_usage().unwrap();
    assert!(after.files >= 1);
    assert!(
        after.allocated_bytes >= before.allocated_bytes + (3 << 20),
        "{}: allocated {} -> {} after writing 4 MiB",
        s.name,
        before.allocated_bytes,
        after.allocated_bytes
    );
    st.close().unwrap();
}

/// A FIFO config drops its oldest data once over its cap; every other config keeps everything.
pub fn fifo_drops_oldest_over_cap(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    let evicts = st.capabilities().evicts_oldest;
    assert_eq!(
        evicts,
        s.fifo_cap.is_some(),
        "{}: capability disagrees with config",
        s.name
    );
    let mut r = rng(13);
    let cap = s.fifo_cap.unwrap_or(4 << 20);
    // Increasing keys, ~6x the cap, flushed in ~cap/4 chunks so files form.
    let value_len = 4096usize;
    let per_chunk = (cap / 4 / value_len as u64).max(1) as u32;
    let chunks = 24u32;
    let mut key = 0u32;
    for _ in 0..chunks {
        let pairs: Vec<_> = (0..per_chunk)
            .map(|_| {
                key += 1;
                (key.to_be_bytes().to_vec(), random_bytes(&mut r, value_len))
            })
            .collect();
        put_all(&*st, &pairs, Durability::NoSync);
        st.flush().unwrap();
    }
    let first = 1u32.to_be_bytes();
    let last = key.to_be_bytes();
    assert!(
        st.get(&last).unwrap().is_some(),
        "{}: newest key lost",
        s.name
    );
    if evicts {
        // FIFO drops files in a compaction; run one instead of racing the background.
        if st.capabilities().manual_compaction {
            st.compact().unwrap();
        }
        assert_eq!(
            st.get(&first).unwrap(),
            None,
            "{}: oldest key kept past the FIFO cap",
            s.name
        );
        let used = st
            .stats()
            .unwrap()
            .sst_bytes
            .unwrap_or(st.disk_usage().unwrap().allocated_bytes);
        assert!(
            used <= cap * 2,
            "{}: {used} bytes kept with a cap of {cap}",
            s.name
        );
    } else {
        assert!(
            st.get(&first).unwrap().is_some(),
            "{}: non-FIFO store dropped data",
            s.name
        );
    }
    st.close().unwrap();
}

/// `compact` works exactly when the capabilities say it does.
pub fn compaction_matches_capabilities(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    put_all(&*st, &[(b"k".to_vec(), b"v".to_vec())], Durability::NoSync);
    match (st.capabilities().manual_compaction, st.compact()) {
        (true, Ok(())) => {}
        (
            false,
            Err(Error::Unsupported {
                op: Op::Compact, ..
            }),
        ) => {}
        (cap, res) => panic!(
            "{}: manual_compaction={cap} but compact() gave {res:?}",
            s.name
        ),
    }
    assert_eq!(st.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    st.close().unwrap();
}

/// A path that is a file is refused with a clear error; the file is untouched.
pub fn path_that_is_a_file_is_refused(s: &Subject) {
    let sc = Scratch::new();
    fs::write(&sc.store, b"not a store").unwrap();
    let err = (s.open)(&sc.store).err().expect("opening a file must fail");
    assert!(matches!(err, Error::BadPath { .. }), "{}: {err}", s.name);
    assert!(err.to_string().contains("is a file"), "{err}");
    assert_eq!(fs::read(&sc.store).unwrap(), b"not a store");
}

/// A directory that cannot be written gives an error naming the path.
pub fn unwritable_directory_is_refused(s: &Subject) {
    let sc = Scratch::new();
    // Root writes through permission bits, so as root use a place no one can
    // create files in: procfs.
    let path = if is_root() {
        PathBuf::from("/proc/kvbench-conformance-store")
    } else {
        use std::os::unix::fs::PermissionsExt;
        fs::create_dir(&sc.store).unwrap();
        fs::set_permissions(&sc.store, fs::Permissions::from_mode(0o555)).unwrap();
        sc.store.clone()
    };
    let err = (s.open)(&path)
        .err()
        .expect("opening an unwritable dir must fail");
    let msg = err.to_string();
    assert!(
        msg.contains(&path.display().to_string()),
        "{}: error does not name the path: {msg}",
        s.name
    );
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A store bounded by config (LMDB map size) gives a full-store error that
/// names the setting to raise, and stays usable.
pub fn full_store_is_a_clear_error(s: &Subject) {
    let Some(open_small) = s.open_small else {
        return;
    };
    let sc = Scratch::new();
    let st = open_small(&sc.store).unwrap();
    let mut r = rng(17);
    let mut err = None;
    for i in 0..(4 * SMALL_CAP / 16384) as u32 {
        let mut b = Batch::new();
        b.put(&i.to_be_bytes(), &random_bytes(&mut r, 16384));
        if let Err(e) = st.write(&b, Durability::NoSync) {
            err = Some(e);
            break;
        }
    }
    let err = err.unwrap_or_else(|| panic!("{}: wrote 4x the cap without an error", s.name));
    assert!(matches!(err, Error::Full { .. }), "{}: {err}", s.name);
    let msg = err.to_string();
    assert!(
        msg.contains("raise `"),
        "{}: error does not name the setting: {msg}",
        s.name
    );
    assert!(
        st.get(&0u32.to_be_bytes()).unwrap().is_some(),
        "{}: earlier data lost",
        s.name
    );
    st.close().unwrap();
}

/// A store whose files were overwritten with garbage fails to open or read
/// with an error, never a panic or a silent empty store.
pub fn corrupt_store_is_an_error(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    put_all(&*st, &[(b"k".to_vec(), b"v".repeat(100))], Durability::Sync);
    st.flush().unwrap();
    st.close().unwrap();
    for entry in fs::read_dir(&sc.store).unwrap() {
        let p = entry.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name == fsutil::STORE_MARKER
            || !p.is_file()
            || name.contains("LOCK")
            || name.starts_with("LOG")
            || name.ends_with("-lock")
            || name.ends_with(".lck")
        {
            continue;
        }
        let len = fs::metadata(&p).unwrap().len().max(64) as usize;
        fs::write(&p, vec![0x5a; len]).unwrap();
    }
    match (s.open)(&sc.store) {
        Err(e) => assert!(!e.to_string().is_empty()),
        Ok(st) => {
            let got = st.get(b"k");
            assert!(
                got.is_err(),
                "{}: a corrupt store opened and read {:?}",
                s.name,
                got.map(|v| v.map(|v| v.len()))
            );
        }
    }
}

/// A directory holding something kvbench did not make, or another engine's
/// store, is refused and left untouched.
pub fn foreign_directory_is_refused(s: &Subject) {
    let sc = Scratch::new();
    fs::create_dir(&sc.store).unwrap();
    fs::write(sc.store.join("data.bin"), b"someone's data").unwrap();
    let err = (s.open)(&sc.store)
        .err()
        .expect("foreign dir must be refused");
    assert!(matches!(err, Error::BadPath { .. }), "{}: {err}", s.name);
    assert_eq!(
        fs::read(sc.store.join("data.bin")).unwrap(),
        b"someone's data"
    );
    assert_eq!(
        fs::read_dir(&sc.store).unwrap().count(),
        1,
        "{}: wrote into a foreign dir",
        s.name
    );

    let sc = Scratch::new();
    fs::create_dir(&sc.store).unwrap();
    fs::write(sc.store.join(fsutil::STORE_MARKER), "some-other-engine\n").unwrap();
    let err = (s.open)(&sc.store)
        .err()
        .expect("another engine's store must be refused");
    assert!(
        err.to_string().contains("some-other-engine"),
        "{}: {err}",
        s.name
    );
}

/// Instantiates the whole suite as `#[test]` functions for one [`Subject`].
#[macro_export]
macro_rules! conformance_suite {
    ($subject:expr) => {
        $crate::conformance_suite!(@cases $subject;
            put_get_overwrite_delete,
            missing_key_is_none,
            batch_is_all_or_nothing_across_reopen,
            ordered_iteration,
            random_32_byte_keys,
            empty_and_large_values,
            synced_data_survives_reopen,
            stats_are_real_or_absent,
            disk_usage_tracks_data,
            fifo_drops_oldest_over_cap,
            compaction_matches_capabilities,
            path_that_is_a_file_is_refused,
            unwritable_directory_is_refused,
            full_store_is_a_clear_error,
            corrupt_store_is_an_error,
            foreign_directory_is_refused
        );
    };
    (@cases $subject:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                $crate::$case(&$subject);
            }
        )*
    };
}

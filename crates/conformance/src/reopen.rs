//! What survives a close, a drop or a crash, and what a failed batch leaves.

use std::collections::BTreeMap;

use ledgerbench_core::{Batch, Durability, KvStore};

use crate::{Opener, Scratch, Subject, put_all, random_bytes, reopen, rng};

/// A committed batch is entirely visible after close and reopen, and a batch
/// that fails (store full) leaves nothing of itself behind.
pub fn batch_is_all_or_nothing_across_reopen(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    let mut r = rng(7);
    let first: Vec<_> = (0..500)
        .map(|_| (random_bytes(&mut r, 32), random_bytes(&mut r, 100)))
        .collect();
    put_all(&*st, &first);
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
    st.write(&b).unwrap();
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
    put_all(&*st, &[(b"before".to_vec(), b"kept".to_vec())]);
    let mut big = Batch::new();
    for i in 0..64u32 {
        big.put(&i.to_be_bytes(), &random_bytes(&mut r, 64 << 10));
    }
    let err = st.write(&big).expect_err("a batch over the cap must fail");
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

/// Data committed with `Sync` survives close and reopen; so does `NoSync`
/// data followed by a flush and a clean close.
pub fn synced_data_survives_reopen(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    put_all(&*st, &[(b"synced".to_vec(), b"1".to_vec())]);
    put_all(&*st, &[(b"flushed".to_vec(), b"2".to_vec())]);
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

/// A store dropped without `close` (a panic unwinding, an early return)
/// reopens with its flushed data, and with its later commits too wherever
/// the durability level promises that a process crash keeps them.
pub fn reopen_after_drop_without_close(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    put_all(&*st, &[(b"flushed".to_vec(), b"1".to_vec())]);
    st.flush().unwrap();
    put_all(&*st, &[(b"committed".to_vec(), b"2".to_vec())]);
    drop(st);
    let st = (s.open)(&sc.store).unwrap_or_else(|e| panic!("{}: reopen after drop: {e}", s.name));
    assert_eq!(
        st.get(b"flushed").unwrap().as_deref(),
        Some(&b"1"[..]),
        "{}",
        s.name
    );
    if s.durability >= Durability::Process {
        assert_eq!(
            st.get(b"committed").unwrap().as_deref(),
            Some(&b"2"[..]),
            "{}: a commit was lost by a drop at durability {}",
            s.name,
            s.durability
        );
    }
    st.close().unwrap();
}

/// An empty batch commits nothing and fails nothing.
pub fn empty_batch_is_a_no_op(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    st.write(&Batch::new()).unwrap();
    assert!(st.scan_collect(b"", 1).unwrap().is_empty(), "{}", s.name);
    put_all(&*st, &[(b"k".to_vec(), b"v".to_vec())]);
    st.write(&Batch::new()).unwrap();
    let st = reopen(s, st);
    assert_eq!(st.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    st.close().unwrap();
}

const CHILD_ENV: &str = "LEDGERBENCH_CONFORMANCE_CHILD";
const ACK: &str = "ledgerbench-acked ";
const KILL_AFTER: u64 = 20;

fn child_key(b: u64, j: u64) -> Vec<u8> {
    let mut k = (b * 1000 + j)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .to_be_bytes()
        .to_vec();
    k.extend_from_slice(&b.to_be_bytes());
    k
}

fn child_batch(b: u64) -> Batch {
    let mut batch = Batch::new();
    for j in 0..50 {
        batch.put(&child_key(b, j), &[(b % 251) as u8; 300]);
    }
    batch
}

/// Kill -9 of a process that is committing batches: after a reopen, every
/// batch it acknowledged is there (at `process` and `power`), and every
/// batch is whole or absent, in commit order. The test binary re-runs this
/// test (`test_name`) as the child with the store's path in the environment.
pub fn committed_batches_survive_kill_9_of_a_child(s: &Subject, test_name: &str) {
    use std::io::{BufRead, Write};
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        let st = (s.open)(std::path::Path::new(&dir)).unwrap();
        let mut out = std::io::stdout();
        for b in 0..100_000 {
            st.write(&child_batch(b)).unwrap();
            writeln!(out, "{ACK}{b}").unwrap();
            out.flush().unwrap();
        }
        loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
    }
    let sc = Scratch::new();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test_name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, &sc.store)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut acked = None;
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some(n) = line.strip_prefix(ACK) {
            acked = Some(n.trim().parse::<u64>().unwrap());
            if acked == Some(KILL_AFTER) {
                break;
            }
        }
    }
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    let acked =
        acked.unwrap_or_else(|| panic!("{}: the child acknowledged nothing ({status})", s.name));
    assert_eq!(
        acked, KILL_AFTER,
        "{}: the child stopped early ({status})",
        s.name
    );
    let st =
        (s.open)(&sc.store).unwrap_or_else(|e| panic!("{}: reopen after kill -9: {e}", s.name));
    let mut present_after_gap = None;
    let mut gap = None;
    for b in 0..KILL_AFTER + 2000 {
        let found = (0..50)
            .filter(|&j| st.get(&child_key(b, j)).unwrap().is_some())
            .count();
        assert!(
            found == 0 || found == 50,
            "{}: batch {b} is torn: {found} of 50 keys",
            s.name
        );
        match (found, gap) {
            (0, None) => gap = Some(b),
            (50, Some(_)) => present_after_gap = Some(b),
            _ => {}
        }
    }
    assert_eq!(
        present_after_gap, None,
        "{}: not a prefix of the commit order (gap at {gap:?})",
        s.name
    );
    if s.durability >= Durability::Process {
        let kept = gap.unwrap_or(u64::MAX);
        assert!(
            kept > acked,
            "{}: acknowledged batch {kept} lost by kill -9 at durability {}",
            s.name,
            s.durability
        );
    }
    st.close().unwrap();
}

/// A batch that fails because the disk is full leaves none of its keys,
/// and the data committed before it survives (root only: it mounts a small
/// tmpfs; engines that write through a map get SIGBUS instead and are skipped).
pub fn failed_batch_on_a_full_disk_leaves_nothing(s: &Subject) {
    if s.map_writes {
        eprintln!(
            "not applicable: {} writes through a map (a full disk is SIGBUS)",
            s.name
        );
        return;
    }
    if !ledgerbench_testkit::can_run(ledgerbench_testkit::root()) {
        return;
    }
    let sc = Scratch::new();
    let fs =
        crate::smallfs::SmallFs::mount(&sc.store, 12).expect("mounting a 12 MiB tmpfs as root");
    let dir = fs.dir.join("store");
    let st = (s.open)(&dir).unwrap();
    put_all(&*st, &[(b"before".to_vec(), b"kept".to_vec())]);
    st.flush().unwrap();
    let mut r = rng(29);
    let mut failed = None;
    for round in 0..40u32 {
        let mut b = Batch::new();
        for i in 0..16u32 {
            b.put(
                &[round.to_be_bytes(), i.to_be_bytes()].concat(),
                &random_bytes(&mut r, 64 << 10),
            );
        }
        if let Err(e) = st.write(&b).and_then(|_| st.flush()) {
            failed = Some((round, e));
            break;
        }
    }
    let (round, err) =
        failed.unwrap_or_else(|| panic!("{}: 40 MiB fitted in a 12 MiB tmpfs", s.name));
    assert!(!err.to_string().is_empty());
    // Room again: the store must reopen with the failed batch absent.
    fs.grow(256);
    drop(st);
    let st = (s.open)(&dir).unwrap_or_else(|e| panic!("{}: reopen after a full disk: {e}", s.name));
    assert_eq!(
        st.get(b"before").unwrap().as_deref(),
        Some(&b"kept"[..]),
        "{}",
        s.name
    );
    let found = (0..16u32)
        .filter(|i| {
            st.get(&[round.to_be_bytes(), i.to_be_bytes()].concat())
                .unwrap()
                .is_some()
        })
        .count();
    assert!(
        found == 0 || found == 16,
        "{}: {found} of 16 keys of the failed batch are visible",
        s.name
    );
    st.close().unwrap();
}

//! The staples' op counts and key patterns on the reference backend.

use super::*;
use ledgerbench_core::KvBackend;
use ledgerbench_mem::{Mem, MemConfig};

fn cfg() -> MicroConfig {
    MicroConfig {
        num: 1000,
        reads: 700,
        threads: 2,
        ..MicroConfig::default()
    }
}

fn entries(store: &dyn KvStore) -> Vec<Vec<u8>> {
    store
        .scan_collect(&[], usize::MAX)
        .expect("scan")
        .into_iter()
        .map(|(k, _)| k)
        .collect()
}

#[test]
fn keys_are_db_bench_keys() {
    let mut k = Vec::new();
    key(&cfg(), 258, &mut k);
    assert_eq!(k, b"\0\0\0\0\0\0\x01\x020000000000000000"[..16]);
    assert_eq!(k.len(), 16);
}

#[test]
fn staples_do_what_db_bench_does_with_the_counts_it_reports() {
    let c = cfg();
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Mem::open_boxed(&dir.path().join("s"), &MemConfig::default()).expect("open");
    let fill = run(&c, "fillseq", 0, &*store).expect("fillseq");
    assert_eq!(fill.ops, 1000);
    let keys = entries(&*store);
    assert_eq!(keys.len(), 1000);
    let mut k = Vec::new();
    for (i, got) in keys.iter().enumerate() {
        key(&c, i as u64, &mut k);
        assert_eq!(got, &k, "fillseq writes keys 0..num in order");
    }
    assert_eq!(
        fill.latency.as_ref().map(|l| l.count),
        Some(1000),
        "a commit a put"
    );
    // Every key exists: every read and seek finds one; each thread reads --reads.
    for name in ["readrandom", "seekrandom"] {
        let b = run(&c, name, 1, &*store).expect(name);
        assert_eq!((b.ops, b.found, b.threads), (1400, Some(1400), 2), "{name}");
    }
    // Each writer writes --num, as db_bench's do, and not the same keys.
    let over = run(&c, "overwrite", 2, &*store).expect("overwrite");
    assert_eq!((over.ops, over.threads), (2000, 2));
    assert_eq!(entries(&*store).len(), 1000);
    assert_eq!(over.latency.as_ref().map(|l| l.count), Some(2000));
    let del = run(&c, "deleterandom", 3, &*store).expect("deleterandom");
    assert_eq!((del.ops, del.threads), (2000, 2));
    assert_ne!(
        thread_seed(7, 0),
        thread_seed(7, 1),
        "two writers draw two key sequences"
    );
    let left = entries(&*store).len() as u64;
    // Random picks repeat: two deleters of 1000 picks each miss about
    // 1/e^2 of the keys.
    assert!((90..190).contains(&left), "{left}");
    let seq = run(&c, "readseq", 4, &*store).expect("readseq");
    assert_eq!((seq.ops, seq.found), (left, Some(left)));
    let rand = run(&c, "readrandom", 5, &*store).expect("readrandom");
    let share = rand.found.expect("found") as f64 / rand.ops as f64;
    assert!((share - left as f64 / 1000.0).abs() < 0.08, "{share}");
    let before = entries(&*store).len() as u64;
    let rww = run(&c, "readwhilewriting", 6, &*store).expect("readwhilewriting");
    assert_eq!(rww.ops, 1400);
    let writes = rww.background_writes.expect("the writer's count");
    assert!(writes >= 1, "the readers read beside at least one write");
    // Each write adds at most one key (a repeat or an existing key adds none).
    let added = entries(&*store).len() as u64 - before;
    assert!(added <= writes, "{added} keys added by {writes} writes");
}

#[test]
fn a_fresh_fill_of_random_keys_writes_num_puts_over_fewer_keys() {
    let c = MicroConfig {
        batch_size: 100,
        ..cfg()
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Mem::open_boxed(&dir.path().join("s"), &MemConfig::default()).expect("open");
    let b = run(&c, "fillrandom", 0, &*store).expect("fillrandom");
    assert_eq!(b.ops, 2000, "two writers of --num");
    assert_eq!(
        b.latency.as_ref().map(|l| l.count),
        Some(20),
        "ten commits of 100 each"
    );
    let distinct = entries(&*store).len();
    // 2000 picks of 1000 keys miss about 1/e^2 of them.
    assert!((800..920).contains(&distinct), "{distinct}");
    assert!(fresh("fillrandom") && fresh("fillseq") && !fresh("overwrite"));
    let e = run(&c, "fillbatch", 0, &*store).expect_err("unknown");
    assert!(e.to_string().contains("fillseq,fillrandom"), "{e}");
}

#[test]
fn benchmark_threads_carry_their_number_for_a_profile() {
    let names = std::sync::Mutex::new(Vec::new());
    let done = on_threads(3, |t| {
        let name = std::thread::current().name().map(String::from);
        names.lock().expect("lock").push((t, name));
        Ok(Done {
            ops: t,
            secs: 0.0,
            found: 0,
            hist: histogram(),
        })
    })
    .expect("threads");
    // Each thread's result in its place, each thread named by its number.
    assert_eq!(done.iter().map(|d| d.ops).collect::<Vec<_>>(), [0, 1, 2]);
    let mut names = names.into_inner().expect("lock");
    names.sort();
    let want: Vec<_> = (0..3)
        .map(|t| (t, Some(format!("lb-client-{t}"))))
        .collect();
    assert_eq!(names, want);
}

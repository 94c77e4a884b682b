//! The Stellar batch protocol end to end on the in-memory backend.

use std::sync::atomic::{AtomicU32, Ordering};

use ledgerbench_core::{Batch, Capabilities, EngineStats, Error, KvBackend, KvStore, Op, Result};
use ledgerbench_driver::results::BatchRecord;
use ledgerbench_driver::stellar::{
    self, CompactionStrategy, Observer, StellarConfig, StreamingConfig,
};
use ledgerbench_mem::{Mem, MemConfig, MemStore};
use ledgerbench_workloads::stellar::{StellarGen, StellarProfile};

fn small() -> StellarConfig {
    StellarConfig {
        ledgers: 23,
        batch_ledgers: 5,
        commit_ledgers: 2,
        verify_txs: 50,
        workers: 2,
        profile: StellarProfile {
            tx_per_ledger_mean: 20.0,
            ..StellarProfile::default()
        },
        streaming: StreamingConfig {
            ledgers: 4,
            // Paced, so the lookup threads surely run while ledgers stream in.
            close_interval_ms: 25,
            lookup_workers: 2,
            ..StreamingConfig::default()
        },
        ..StellarConfig::default()
    }
}

#[derive(Default)]
struct Seen {
    batches: Vec<u32>,
    phases: Vec<String>,
}

impl Observer for Seen {
    fn batch_done(&mut self, rec: &BatchRecord, total: u32) {
        assert_eq!(total, 5);
        self.batches.push(rec.batch);
    }
    fn phase(&mut self, name: &str) {
        self.phases.push(name.to_string());
    }
}

/// Runs the workload on three in-memory stores without device meters.
fn run_mem(cfg: &StellarConfig, s: &[MemStore; 3], seen: &mut Seen) -> stellar::Outcome {
    stellar::run(cfg, "mem", [&s[0], &s[1], &s[2]], [None, None, None], seen)
}

/// The pregenerated path on three in-memory stores, its spool in `dir`
/// (and kept in `cache`, when given).
fn run_spooled(
    cfg: &StellarConfig,
    s: &[MemStore; 3],
    seen: &mut Seen,
    dir: &std::path::Path,
    (cache, drop_behind): (Option<&std::path::Path>, bool),
) -> stellar::Outcome {
    stellar::run_spooled(
        cfg,
        "mem",
        [&s[0], &s[1], &s[2]],
        [None, None, None],
        seen,
        Some(stellar::SpoolAt {
            dir,
            cache,
            drop_behind,
        }),
    )
}

fn open3(dir: &std::path::Path) -> [MemStore; 3] {
    let cfg = MemConfig {
        persist: false,
        log: ledgerbench_mem::MemLog::Off,
        ..MemConfig::default()
    };
    ["ledgers", "txdata", "txindex"].map(|s| Mem::open(&dir.join(s), &cfg).expect("open"))
}

#[test]
fn ingests_every_ledger_in_batches_and_reads_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = open3(dir.path());
    let cfg = small();
    let mut seen = Seen::default();
    let out = run_mem(&cfg, &s, &mut seen);
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(seen.batches, vec![1, 2, 3, 4, 5]);
    assert_eq!(seen.phases, vec!["verify", "streaming"]);
    let ledgers: Vec<u32> = out.batches.iter().map(|b| b.ledgers).collect();
    assert_eq!(ledgers, vec![5, 5, 5, 5, 3]);

    let g = StellarGen::new(cfg.seed, cfg.profile.clone()).expect("gen");
    let first = cfg.profile.first_ledger;
    let txs: u64 = (first..first + 23).map(|q| u64::from(g.tx_count(q))).sum();
    let sum = out.summary.as_ref().expect("summary");
    assert_eq!(sum.txs, txs);
    assert_eq!(sum.ledgers, 23);
    // Every store holds exactly what was written (plus the streamed ledgers).
    let streamed: u64 = (first + 23..first + 27)
        .map(|q| u64::from(g.tx_count(q)))
        .sum();
    assert_eq!(s[0].stats().expect("stats").entries, Some(27));
    assert_eq!(s[1].stats().expect("stats").entries, Some(txs + streamed));
    assert_eq!(s[2].stats().expect("stats").entries, Some(txs + streamed));
    let td = &sum.stores["txdata"];
    let raw: u64 = out.batches.iter().map(|b| b.stores[1].raw_bytes).sum();
    assert!(td.logical_bytes < raw / 2, "txdata is stored compressed");
    assert!(td.compact_secs.is_none(), "mem has no manual compaction");

    let st = out.streaming.expect("streaming ran");
    assert_eq!(st.mismatches, Some(0));
    assert_eq!(st.ledgers, 4);
    let (one, two) = (
        st.one_step.expect("lookups ran"),
        st.two_step.expect("lookups ran"),
    );
    assert!(one.count > 0 && two.count > 0);
    assert!(one.p50_us <= one.p99_us);
    assert!(st.ledger_commit.expect("commits ran").count == 4);
}

#[test]
fn the_same_seed_writes_the_same_bytes() {
    let run = |seed| {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = open3(dir.path());
        let cfg = StellarConfig {
            seed,
            streaming: StreamingConfig {
                ledgers: 0,
                ..StreamingConfig::default()
            },
            ..small()
        };
        let out = run_mem(&cfg, &s, &mut Seen::default());
        assert!(out.error.is_none());
        let mut all = Vec::new();
        s[1].scan(b"", &mut |k, v| {
            all.push((k.to_vec(), v.to_vec()));
            true
        })
        .expect("scan");
        all
    };
    assert_eq!(run(5), run(5));
    assert_ne!(run(5), run(6));
}

/// A store that reports itself full after a number of writes.
struct Filling {
    inner: MemStore,
    writes_left: AtomicU32,
}

impl KvStore for Filling {
    fn engine(&self) -> &'static str {
        "filling"
    }
    fn path(&self) -> &std::path::Path {
        self.inner.path()
    }
    fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        self.inner.get_into(key, out)
    }
    fn write(&self, batch: &Batch) -> Result<()> {
        if self.writes_left.fetch_sub(1, Ordering::SeqCst) == 0 {
            return Err(Error::Full {
                engine: "filling",
                op: Op::Write,
                path: self.inner.path().to_path_buf(),
                setting: "size",
                message: "test cap".into(),
            });
        }
        self.inner.write(batch)
    }
    fn scan(&self, start: &[u8], visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        self.inner.scan(start, visit)
    }
    fn flush(&self) -> Result<()> {
        Ok(())
    }
    fn stats(&self) -> Result<EngineStats> {
        self.inner.stats()
    }
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }
    fn close(self: Box<Self>) -> Result<()> {
        Ok(())
    }
}

#[test]
fn a_full_store_ends_the_run_keeping_finished_batches() {
    let dir = tempfile::tempdir().expect("tempdir");
    let [a, b, c] = open3(dir.path());
    // Three commits per batch (5 ledgers, 2 per commit): fail in batch 3.
    let full = Filling {
        inner: b,
        writes_left: AtomicU32::new(7),
    };
    let cfg = StellarConfig {
        compaction: CompactionStrategy::Background,
        ..small()
    };
    let out = stellar::run(
        &cfg,
        "filling",
        [&a, &full, &c],
        [None, None, None],
        &mut Seen::default(),
    );
    let err = out.error.expect("the run must fail");
    assert!(err.is_full(), "{err}");
    assert!(err.to_string().contains("txdata"), "{err}");
    assert_eq!(out.batches.len(), 2);
    assert_eq!(out.summary.expect("partial summary").ledgers, 10);
    assert!(out.streaming.is_none());
}

#[test]
fn bad_configs_are_refused_before_writing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = open3(dir.path());
    let cfg = StellarConfig {
        batch_ledgers: 0,
        ..small()
    };
    let out = run_mem(&cfg, &s, &mut Seen::default());
    assert!(
        out.error
            .expect("refused")
            .to_string()
            .contains("batch_ledgers")
    );
    assert!(out.batches.is_empty());
    assert_eq!(s[0].stats().expect("stats").entries, Some(0));
}

#[test]
fn the_pregenerated_path_writes_what_the_live_path_writes_and_removes_its_spool() {
    let dir = tempfile::tempdir().expect("tempdir");
    let live = {
        let s = open3(&dir.path().join("live"));
        let out = run_mem(&small(), &s, &mut Seen::default());
        assert!(out.error.is_none(), "{:?}", out.error);
        out
    };
    let spool_dir = dir.path().join("spool");
    std::fs::create_dir(&spool_dir).expect("mkdir");
    let cfg = StellarConfig {
        pregenerate: true,
        ..small()
    };
    let s = open3(&dir.path().join("pre"));
    let stores: [&dyn KvStore; 3] = [&s[0], &s[1], &s[2]];
    // Without a place for the spool it says so.
    let refused = stellar::run(
        &cfg,
        "mem",
        stores,
        [None, None, None],
        &mut Seen::default(),
    );
    let e = refused.error.expect("refused").to_string();
    assert!(e.contains("spool"), "{e}");
    for drop_behind in [false, true] {
        let s = open3(&dir.path().join(format!("pre-{drop_behind}")));
        let mut seen = Seen::default();
        let out = run_spooled(&cfg, &s, &mut seen, &spool_dir, (None, drop_behind));
        assert!(out.error.is_none(), "{:?}", out.error);
        assert_eq!(seen.phases[0], "pregenerate");
        assert_eq!(out.phases[0].phase, "pregenerate");
        // Verified and streamed like the live run, from the same bytes.
        assert_eq!(
            out.streaming.as_ref().expect("streamed").mismatches,
            Some(0)
        );
        for (a, b) in live.batches.iter().zip(&out.batches) {
            for (x, y) in a.stores.iter().zip(&b.stores) {
                assert_eq!((x.entries, x.logical_bytes), (y.entries, y.logical_bytes));
            }
        }
        assert_eq!(live.batches.len(), out.batches.len());
        let left: Vec<_> = std::fs::read_dir(&spool_dir).expect("ls").collect();
        assert!(left.is_empty(), "the spool is removed: {left:?}");
    }
}

#[test]
fn a_spool_cache_keeps_the_ledgers_for_the_next_run_of_the_same_settings_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (spool_dir, cache) = (dir.path().join("spool"), dir.path().join("cache"));
    std::fs::create_dir(&spool_dir).expect("mkdir");
    let cfg = StellarConfig {
        pregenerate: true,
        ..small()
    };
    let run = |cfg: &StellarConfig, name: &str| {
        let s = open3(&dir.path().join(name));
        let mut seen = Seen::default();
        let out = run_spooled(cfg, &s, &mut seen, &spool_dir, (Some(&cache), false));
        assert!(out.error.is_none(), "{:?}", out.error);
        (out, seen.phases)
    };
    let spools = || {
        let mut v: Vec<String> = std::fs::read_dir(&cache)
            .expect("ls")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let (first, phases) = run(&cfg, "one");
    assert!(!phases.iter().any(|p| p.contains("reusing")), "{phases:?}");
    // Kept, complete (a spool and its key, no private names left).
    let kept = spools();
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(kept.iter().all(|n| !n.ends_with(".tmp")), "{kept:?}");
    let (second, phases) = run(&cfg, "two");
    assert!(phases.iter().any(|p| p.contains("reusing")), "{phases:?}");
    assert_eq!(spools(), kept, "reused, not made again");
    // The same writes, read back and streamed without a mismatch.
    assert_eq!(first.batches.len(), second.batches.len());
    for (a, b) in first.batches.iter().zip(&second.batches) {
        for (x, y) in a.stores.iter().zip(&b.stores) {
            assert_eq!((x.entries, x.logical_bytes), (y.entries, y.logical_bytes));
        }
    }
    assert_eq!(second.streaming.expect("streamed").mismatches, Some(0));
    // Other settings are not served another's ledgers.
    let other = StellarConfig {
        seed: cfg.seed + 1,
        ..cfg.clone()
    };
    let (_, phases) = run(&other, "three");
    assert!(!phases.iter().any(|p| p.contains("reusing")), "{phases:?}");
    assert_eq!(spools().len(), 4);
    // The run directory's own spool place is left empty throughout.
    assert_eq!(std::fs::read_dir(&spool_dir).expect("ls").count(), 0);
}

#[test]
fn open_loop_lookups_arrive_on_schedule_and_a_sweep_finds_the_sustained_rate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = open3(dir.path());
    let mut cfg = small();
    // 4 ledgers 50 ms apart: a phase of about 0.2 s per rate.
    cfg.streaming.close_interval_ms = 50;
    cfg.streaming.lookup_rates = vec![200.0, 1000.0];
    cfg.streaming.arrival = stellar::Arrival::Poisson;
    // A bound no lookup can meet, so no rate is sustained...
    cfg.streaming.p99_bound_us = 0.001;
    let out = run_mem(&cfg, &s, &mut Seen::default());
    assert!(out.error.is_none(), "{:?}", out.error);
    let st = out.streaming.expect("streamed");
    assert_eq!(st.ledgers, 8, "one phase of 4 ledgers per rate");
    assert_eq!(st.rate_sweep.len(), 2);
    assert!(st.open_loop.is_none() && st.one_step.is_none());
    assert_eq!(st.max_sustained_rate_per_sec, None);
    assert_eq!(st.mismatches, Some(0));
    for p in &st.rate_sweep {
        assert_eq!(p.arrival, "poisson");
        assert_eq!(p.shed, 0);
        assert_eq!(p.issued, p.completed);
        assert_eq!(p.mismatches, Some(0));
        assert_eq!(p.sustained, Some(false));
        // On schedule: the requests issued match the rate over the phase
        // within Poisson noise and the phase's ragged ends.
        let expect = p.rate_per_sec * st.wall_secs / 2.0;
        assert!(
            (p.issued as f64) > expect * 0.5 && (p.issued as f64) < expect * 1.5,
            "{} issued at {}/s over about {:.2} s",
            p.issued,
            p.rate_per_sec,
            st.wall_secs / 2.0
        );
        let (c, u) = (
            p.one_step.as_ref().expect("corrected"),
            p.one_step_uncorrected.as_ref().expect("uncorrected"),
        );
        // Latency from when a request was due includes its service time.
        assert!(c.p50_us >= u.p50_us && c.max_us >= u.max_us, "{c:?} {u:?}");
        assert!(p.two_step.is_some() && p.dispatch_lateness.is_some());
    }
    // ...and with a bound every lookup meets, the highest rate is.
    let s = open3(&dir.path().join("again"));
    cfg.streaming.p99_bound_us = 1e9;
    let st = run_mem(&cfg, &s, &mut Seen::default())
        .streaming
        .expect("streamed");
    assert_eq!(st.max_sustained_rate_per_sec, Some(1000.0));
}

#[test]
fn a_checkpointed_run_resumed_from_a_batch_ends_as_one_never_stopped() {
    let cfg = StellarConfig {
        checkpoint: true,
        lookups_at: vec![2, 5],
        ..small()
    };
    let (a, b) = (
        tempfile::tempdir().expect("a"),
        tempfile::tempdir().expect("b"),
    );
    let (sa, sb) = (open3(a.path()), open3(b.path()));
    let whole = run_mem(&cfg, &sa, &mut Seen::default());
    assert!(whole.error.is_none(), "{:?}", whole.error);
    // Timed lookups where asked, and only there; every batch synced.
    let at: Vec<u32> = whole
        .batches
        .iter()
        .filter_map(|b| b.lookups.as_ref().map(|l| l.batch))
        .collect();
    assert_eq!(at, [2, 5]);
    let l = whole.batches[1].lookups.as_ref().expect("lookups at 2");
    assert_eq!(l.one_step.as_ref().expect("timed").count, 50);
    assert_eq!(l.two_step.as_ref().expect("timed").count, 50);
    assert!(whole.batches.iter().all(|b| b.checkpoint_secs.is_some()));

    // The first two batches, then the rest from them, as after a kill.
    let first = StellarConfig {
        ledgers: 10,
        lookups_at: vec![2],
        ..cfg.clone()
    };
    let begun = stellar::run(
        &first,
        "mem",
        [&sb[0], &sb[1], &sb[2]],
        [None, None, None],
        &mut (),
    );
    assert_eq!(begun.batches.len(), 2);
    let mut seen = Seen::default();
    let stores = [&sb[0] as &dyn KvStore, &sb[1], &sb[2]];
    let rest = stellar::run_resumed(
        &cfg,
        "mem",
        (stores, [None, None, None]),
        &mut seen,
        None,
        begun.batches,
    );
    assert!(rest.error.is_none(), "{:?}", rest.error);
    assert_eq!(seen.batches, [3, 4, 5]);
    let keys = |o: &stellar::Outcome| -> Vec<(u64, u64)> {
        let b = o.batches.iter().flat_map(|b| &b.stores);
        b.map(|s| (s.entries, s.logical_bytes)).collect()
    };
    assert_eq!(keys(&whole), keys(&rest));
    let content = |o: &stellar::Outcome| -> Vec<Option<String>> {
        let s = &o.summary.as_ref().expect("summary").stores;
        s.values().map(|s| s.content_sha256.clone()).collect()
    };
    assert!(content(&whole).iter().all(Option::is_some));
    assert_eq!(content(&whole), content(&rest));
}

#[test]
fn lookups_outside_the_run_and_a_checkpointed_spool_are_refused() {
    let mut cfg = StellarConfig {
        lookups_at: vec![6],
        ..small()
    };
    let e = cfg.validate().expect_err("batch 6 of 5").to_string();
    assert!(
        e.contains("lookups_at batch 6") && e.contains("1 to 5"),
        "{e}"
    );
    cfg.lookups_at = vec![0];
    assert!(cfg.validate().is_err());
    cfg.lookups_at = vec![5];
    cfg.checkpoint = true;
    cfg.pregenerate = true;
    let e = cfg.validate().expect_err("both").to_string();
    assert!(
        e.contains("--checkpoint") && e.contains("--pregenerate"),
        "{e}"
    );
}

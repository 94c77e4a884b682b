use super::*;
use ledgerbench_core::{Capabilities, EngineStats, Result};
use std::path::Path;

/// A store whose commits take a known time per row, so its capacity is
/// known: 1 / `per_row` rows a second.
struct Slow {
    per_row: Duration,
}

impl KvStore for Slow {
    fn engine(&self) -> &'static str {
        "slow"
    }
    fn path(&self) -> &Path {
        Path::new("/nonexistent")
    }
    fn get_into(&self, _: &[u8], _: &mut Vec<u8>) -> Result<bool> {
        Ok(false)
    }
    fn write(&self, batch: &Batch) -> Result<()> {
        std::thread::sleep(self.per_row * batch.len() as u32);
        Ok(())
    }
    fn scan(&self, _: &[u8], _: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        Ok(())
    }
    fn flush(&self) -> Result<()> {
        Ok(())
    }
    fn stats(&self) -> Result<EngineStats> {
        Ok(EngineStats::default())
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities::BTREE
    }
    fn close(self: Box<Self>) -> Result<()> {
        Ok(())
    }
}

fn cfg() -> CapacityConfig {
    CapacityConfig {
        seed: 1,
        rows: RowShape::TxHash,
        value_bytes: 16,
        interval_secs: 0.05,
        intervals: 3,
        min_rate: 1_000.0,
        max_rate: 200_000.0,
        probes: 14,
        prefill_rows: 0,
    }
}

#[test]
fn bisection_converges_on_a_known_capacity() {
    // 50 us a row: 20,000 rows a second fill the interval exactly.
    let store = Slow {
        per_row: Duration::from_micros(50),
    };
    let c = cfg();
    let (found, err) = search(&c, Vec::new(), &mut |rate, _| probe(&store, &c, rate));
    assert!(err.is_none(), "{err:?}");
    let (lo, hi) = (
        found.sustained.expect("held"),
        found.failed.expect("failed"),
    );
    assert!(lo < hi && hi / lo <= NARROW + 1e-9, "bracket {lo}..{hi}");
    assert!((15_000.0..=20_000.0).contains(&lo), "sustained {lo}");
    assert!(hi <= 21_000.0, "failed {hi}");
    assert!(found.probes.len() as u32 <= c.probes);
    for p in &found.probes {
        // A held rate ran every close; a failed one stopped at its first late close.
        let late = p
            .persist_secs
            .iter()
            .filter(|s| **s > c.interval_secs)
            .count();
        if p.sustained {
            assert_eq!(p.persist_secs.len(), 3);
        } else {
            assert!(late <= 1);
            if late == 1 {
                assert!(
                    p.persist_secs.last() > Some(&c.interval_secs),
                    "late is last"
                );
            }
        }
    }
    for p in &found.probes {
        assert_eq!(
            p.sustained,
            p.rate <= lo,
            "rate {} judged {}",
            p.rate,
            p.sustained
        );
    }
}

#[test]
fn a_search_cut_short_goes_on_from_its_probes_without_running_them_again() {
    // Judged without timing, so both searches meet the same verdicts.
    let judged = |rate: f64| -> Result<Probe, DriverError> {
        let held = rate <= 20_000.0;
        Ok(Probe {
            rate,
            rows_per_close: 1,
            persist_secs: Vec::new(),
            pending_compaction_bytes: Vec::new(),
            max_persist_secs: None,
            prefill_secs: None,
            copy_secs: None,
            sustained: held,
            why_not: (!held).then(|| "over 20,000".to_string()),
        })
    };
    let c = cfg();
    let (whole, _) = search(&c, Vec::new(), &mut |rate, _| judged(rate));
    // The first three probes kept; the rest run, each seeing all before it.
    let kept: Vec<Probe> = whole.probes[..3].to_vec();
    let mut ran = Vec::new();
    let (resumed, err) = search(&c, kept, &mut |rate, so_far| {
        assert_eq!(so_far.len(), 3 + ran.len(), "the probes so far come along");
        ran.push(rate);
        judged(rate)
    });
    assert!(err.is_none(), "{err:?}");
    let rates = |f: &Found| f.probes.iter().map(|p| p.rate).collect::<Vec<_>>();
    assert_eq!(
        ran,
        rates(&whole)[3..],
        "only the rates after the kept ones ran"
    );
    assert_eq!(rates(&resumed), rates(&whole));
    assert_eq!(
        (resumed.sustained, resumed.failed),
        (whole.sustained, whole.failed)
    );
}

#[test]
fn ends_of_the_search_are_reported_as_bounds() {
    let c = cfg();
    let fast = Slow {
        per_row: Duration::ZERO,
    };
    let (found, _) = search(&c, Vec::new(), &mut |rate, _| probe(&fast, &c, rate));
    assert_eq!((found.sustained, found.failed), (Some(200_000.0), None));
    let slow = Slow {
        per_row: Duration::from_millis(1),
    };
    let (found, _) = search(&c, Vec::new(), &mut |rate, _| probe(&slow, &c, rate));
    assert_eq!((found.sustained, found.failed), (None, Some(1_000.0)));
    assert_eq!(found.probes.len(), 1, "nothing above a rate that failed");
}

#[test]
fn growing_persist_time_or_compaction_debt_is_not_sustained() {
    let c = CapacityConfig {
        intervals: 4,
        ..cfg()
    };
    let growing = judge(&c, 10.0, 1, vec![0.001, 0.001, 0.03, 0.04], Vec::new());
    assert!(!growing.sustained);
    assert!(
        growing
            .why_not
            .as_deref()
            .unwrap_or_default()
            .contains("grew")
    );
    let debt = judge(
        &c,
        10.0,
        1,
        vec![0.001; 4],
        vec![0, 1 << 20, 100 << 20, 200 << 20],
    );
    assert!(
        debt.why_not
            .as_deref()
            .unwrap_or_default()
            .contains("compaction debt")
    );
    let steady = judge(&c, 10.0, 1, vec![0.01; 4], vec![5 << 20; 4]);
    assert!(steady.sustained && steady.max_persist_secs == Some(0.01));
}

#[test]
fn shred_rows_are_a_slot_by_index() {
    let c = CapacityConfig {
        rows: RowShape::Shred,
        ..cfg()
    };
    let mut k = Vec::new();
    key(&c, 7, 3, 10, &mut k);
    assert_eq!(k, [0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 3]);
    key(&cfg(), 7, 3, 10, &mut k);
    assert_eq!(k.len(), 32);
}

/// A store that keeps every key written, and whether it was flushed.
#[derive(Default)]
struct Keys {
    keys: std::sync::Mutex<std::collections::HashSet<Vec<u8>>>,
    flushed: std::sync::atomic::AtomicBool,
}

impl KvStore for Keys {
    fn engine(&self) -> &'static str {
        "keys"
    }
    fn path(&self) -> &Path {
        Path::new("/nonexistent")
    }
    fn get_into(&self, _: &[u8], _: &mut Vec<u8>) -> Result<bool> {
        Ok(false)
    }
    fn write(&self, batch: &Batch) -> Result<()> {
        let mut k = self.keys.lock().expect("keys");
        for op in batch.iter() {
            k.insert(op.key().to_vec());
        }
        Ok(())
    }
    fn scan(&self, _: &[u8], _: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        Ok(())
    }
    fn flush(&self) -> Result<()> {
        self.flushed
            .store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
    fn stats(&self) -> Result<EngineStats> {
        Ok(EngineStats::default())
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities::BTREE
    }
    fn close(self: Box<Self>) -> Result<()> {
        Ok(())
    }
}

#[test]
fn a_prefill_loads_its_rows_flushed_and_apart_from_every_probe_s() {
    let c = CapacityConfig {
        prefill_rows: 50_000,
        ..cfg()
    };
    let store = Keys::default();
    let mut heard = Vec::new();
    prefill(&store, &c, &mut |n| heard.push(n)).expect("prefill");
    // Progress after every batch of at most 1 MiB (rows of 48 bytes).
    assert_eq!(heard, [21_845, 43_690, 50_000]);
    assert!(store.flushed.load(std::sync::atomic::Ordering::Relaxed));
    let loaded = store.keys.lock().expect("keys").clone();
    assert_eq!(loaded.len(), 50_000);
    assert!(loaded.iter().all(|k| k.len() == 32));
    probe(&store, &c, 2_000.0).expect("probe");
    // 3 closes of 100 rows, none of them a prefilled key.
    assert_eq!(store.keys.lock().expect("keys").len(), 50_000 + 300);
    // The same seed, the same rows.
    let again = Keys::default();
    prefill(&again, &c, &mut |_| {}).expect("prefill");
    assert_eq!(*again.keys.lock().expect("keys"), loaded);
}

//! A store grown batch by batch, with random-hash lookups measured at
//! chosen batch counts: the cost of a lookup that must look in every
//! partition of a store that opens a database per batch, against stores
//! that keep one tree.

use std::time::Instant;

use hdrhistogram::Histogram;
use ledgerbench_core::{Batch, EngineStats, KvStore};
use ledgerbench_meter::blockdev::BlockStat;
use ledgerbench_meter::rusage::Usage;
use ledgerbench_rng::{Rng, stream};

use crate::DriverError;
use crate::observe::Observer;
use crate::results::Latency;

pub use ledgerbench_results::fanout::{
    Checkpoint, FanOutConfig, FanOutResults, FanOutRun, Held, PassCost, Passes,
};

const TAG_PICK: u64 = 0x666f;
const TAG_MISS: u64 = 0x666d;

fn store_err(source: ledgerbench_core::Error) -> DriverError {
    DriverError::Store {
        store: "fan-out".into(),
        source,
    }
}

/// Writes batch number `batch` (keys `batch * keys_per_batch` onwards) and
/// flushes it: the flush that seals a partition of a partitioned store.
/// Returns seconds taken.
pub fn load_batch(
    cfg: &FanOutConfig,
    store: &dyn KvStore,
    batch: u32,
    observer: &mut dyn Observer,
) -> Result<f64, DriverError> {
    let data = cfg.points();
    let t = Instant::now();
    let first = u64::from(batch) * cfg.keys_per_batch;
    let end = first + cfg.keys_per_batch;
    let mut b = Batch::with_capacity(
        cfg.write_batch as usize,
        cfg.write_batch as usize * (cfg.key_bytes + cfg.value_bytes),
    );
    let (mut k, mut v) = (Vec::new(), Vec::new());
    for i in first..end {
        data.key(i, &mut k);
        data.value(i, &mut v);
        b.put(&k, &v);
        if b.len() as u64 == cfg.write_batch || i + 1 == end {
            store.write(&b).map_err(store_err)?;
            b.clear();
        }
    }
    store.flush().map_err(store_err)?;
    observer.advanced(u64::from(batch) + 1, u64::from(cfg.last()));
    Ok(t.elapsed().as_secs_f64())
}

/// Which keys a pass looks up.
#[derive(Debug, Clone, Copy)]
pub struct PassKind {
    /// Existing keys (else random keys that were never written).
    pub found: bool,
    /// Pass number at this checkpoint: each draws other keys.
    pub round: u64,
}

/// Looks up keys of `kind` among the first `loaded` keys, until
/// `cfg.reads` (or `missing_reads`) GETs or `cfg.pass_secs` have passed.
/// `device` gives the private device's counters, when there is one.
pub fn pass(
    cfg: &FanOutConfig,
    loaded: u64,
    store: &dyn KvStore,
    device: &dyn Fn() -> Option<BlockStat>,
    kind: PassKind,
) -> Result<PassCost, DriverError> {
    let data = cfg.points();
    let want_gets = if kind.found {
        cfg.reads
    } else {
        cfg.missing_reads
    };
    let tag = if kind.found { TAG_PICK } else { TAG_MISS };
    let mut pick = Rng::new(stream(cfg.seed, tag, (loaded << 8) | kind.round));
    let mut hist = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3)
        .expect("constant bounds are valid");
    let (mut k, mut want, mut got) = (Vec::new(), Vec::new(), Vec::new());
    let engine0 = store.stats().map_err(store_err)?;
    let (dev0, ru0, t0) = (device(), Usage::now(), Instant::now());
    let (mut gets, mut mismatches, mut stopped_early) = (0u64, 0u64, false);
    while gets < want_gets {
        // The clock is read every 64 GETs, outside the timed call.
        if gets % 64 == 0 && t0.elapsed().as_secs_f64() >= cfg.pass_secs {
            stopped_early = true;
            break;
        }
        let i = pick.below(loaded.max(1));
        if kind.found {
            data.key(i, &mut k);
        } else {
            k.clear();
            pick.fill(&mut k, cfg.key_bytes);
        }
        let t = Instant::now();
        let found = store.get_into(&k, &mut got).map_err(store_err)?;
        let _ = hist.record(t.elapsed().as_nanos() as u64);
        if kind.found {
            data.value(i, &mut want);
            mismatches += u64::from(!found || got != want);
        } else {
            mismatches += u64::from(found);
        }
        gets += 1;
    }
    let secs = t0.elapsed().as_secs_f64();
    let (dev1, ru1) = (device(), Usage::now());
    let engine1 = store.stats().map_err(store_err)?;
    // Per-GET figures of a pass that made none are absent, not 0.
    let n = (gets > 0).then_some(gets as f64);
    let dev = dev0.zip(dev1).map(|(a, b)| b.since(&a)).zip(n);
    let cpu = ru1.since(&ru0);
    let per = |name: &str| per_get(&engine0, &engine1, name, n?);
    Ok(PassCost {
        gets,
        secs,
        stopped_early,
        latency: Latency::from_histogram(&hist),
        cpu_us_per_get: n.map(|n| (cpu.user_secs + cpu.sys_secs) * 1e6 / n),
        device_reads_per_get: dev.map(|(d, n)| d.read_ios as f64 / n),
        device_kib_per_get: dev.map(|(d, n)| d.read_bytes() as f64 / 1024.0 / n),
        probes_per_get: per("partition_probes"),
        filter_negatives_per_get: per("bloom_useful"),
        filter_positives_per_get: per("bloom_full_positive"),
        filter_misses_per_get: per("block_cache_filter_misses"),
        index_misses_per_get: per("block_cache_index_misses"),
        data_misses_per_get: per("block_cache_data_misses"),
        mismatches,
    })
}

/// Growth of the engine counter `name` per GET; absent when the engine
/// does not keep it.
fn per_get(a: &EngineStats, b: &EngineStats, name: &str, n: f64) -> Option<f64> {
    let (x, y) = (a.extra.get(name)?, b.extra.get(name)?);
    Some(y.saturating_sub(*x) as f64 / n)
}

/// Waits until the store has no compaction running or pending (polling
/// every 200 ms, at most `limit_secs`); returns the seconds waited and the
/// bytes still pending if the wait gave up. Stores that report neither
/// figure have nothing to wait for.
pub fn settle(store: &dyn KvStore, limit_secs: f64) -> Result<(f64, Option<u64>), DriverError> {
    let t = Instant::now();
    loop {
        let s = store.stats().map_err(store_err)?;
        let running = s.running_compactions.unwrap_or(0)
            + s.extra.get("num_running_flushes").copied().unwrap_or(0);
        let pending = s.pending_compaction_bytes.unwrap_or(0);
        if running == 0 && pending == 0 {
            return Ok((t.elapsed().as_secs_f64(), None));
        }
        if t.elapsed().as_secs_f64() >= limit_secs {
            return Ok((t.elapsed().as_secs_f64(), Some(pending)));
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// File descriptors this process has open now; absent off Linux.
pub fn open_fds() -> Option<u64> {
    Some(std::fs::read_dir("/proc/self/fd").ok()?.count() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ledgerbench_mem::{Mem, MemConfig};

    fn small() -> FanOutConfig {
        FanOutConfig {
            keys_per_batch: 500,
            write_batch: 128,
            checkpoints: vec![2, 4],
            reads: 300,
            missing_reads: 200,
            ..FanOutConfig::default()
        }
    }

    #[test]
    fn batches_load_their_own_keys_and_passes_check_every_answer() {
        use ledgerbench_core::KvBackend;
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = small();
        let store = Mem::open(&dir.path().join("s"), &MemConfig::default()).expect("open");
        for b in 0..2 {
            load_batch(&cfg, &store, b, &mut ()).expect("load");
        }
        let loaded = 2 * cfg.keys_per_batch;
        let none = || None;
        let found = PassKind {
            found: true,
            round: 0,
        };
        let f = pass(&cfg, loaded, &store, &none, found).expect("pass");
        assert_eq!((f.gets, f.mismatches, f.stopped_early), (300, 0, false));
        assert_eq!(f.latency.expect("latency").count, 300);
        assert!(f.device_reads_per_get.is_none(), "no device, no figure");
        assert!(f.probes_per_get.is_none(), "mem counts no probes");
        let missing = PassKind {
            found: false,
            round: 0,
        };
        let m = pass(&cfg, loaded, &store, &none, missing).expect("pass");
        assert_eq!((m.gets, m.mismatches), (200, 0));
        // Keys beyond what was loaded are not there: asking for them as
        // found counts every GET a mismatch, so the check can fail.
        let beyond = pass(&cfg, 4 * cfg.keys_per_batch, &store, &none, found).expect("pass");
        assert!(beyond.mismatches > 100, "{}", beyond.mismatches);
        // A pass out of time stops with what it made.
        let hurried = FanOutConfig {
            pass_secs: 1e-9,
            ..cfg
        };
        let h = pass(&hurried, loaded, &store, &none, found).expect("pass");
        assert!(h.stopped_early && h.gets < 300, "{h:?}");
        if h.gets == 0 {
            assert!(h.cpu_us_per_get.is_none() && h.latency.is_none(), "{h:?}");
        }
    }
}

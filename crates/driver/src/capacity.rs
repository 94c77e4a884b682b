//! Capacity at a fixed close interval: the highest rate of rows an engine
//! persists in time, close after close, found by bisection.
//!
//! A probe offers one rate: every `interval` a close commits the rows that
//! arrived since the last one at the store's durability level (in write
//! batches of at most [`CHUNK_BYTES`]; the close's persist time is their
//! writes together), and waits for the next close (the engine's background work gets
//! the rest of the interval, as on a node). The rate holds when every close
//! persisted within the interval and neither the persist time nor the
//! engine's compaction debt grew over the probe. The search probes both
//! ends, then the geometric middle of the last rate that held and the
//! first that did not, until they are within 5% or the probes run out.

use std::time::{Duration, Instant};

use ledgerbench_core::{Batch, KvStore};
use ledgerbench_rng::{Rng, stream};

use crate::DriverError;
pub use ledgerbench_results::capacity::{CapacityConfig, Probe, RowShape};

const TAG_KEY: u64 = 0x6361;
const TAG_VALUE: u64 = 0x6376;
const TAG_PREFILL: u64 = 0x6370;

/// Bytes of rows per write batch at most: a close of many rows is written
/// as several batches, so the harness's memory stays small inside the
/// memory limit the engine is measured under (64 MiB batches, copied once
/// more into the engine's own batch, got RocksDB OOM-killed under 256 MiB).
pub const CHUNK_BYTES: u64 = 16 << 20;

/// Where the search stops narrowing: the bracket's high end within 5%
/// of its low end.
const NARROW: f64 = 1.05;

/// Row `row` of close `close`'s key.
fn key(cfg: &CapacityConfig, close: u64, row: u64, n: u64, out: &mut Vec<u8>) {
    out.clear();
    match cfg.rows {
        RowShape::TxHash => Rng::new(stream(cfg.seed, TAG_KEY, close * n + row)).fill(out, 32),
        // A close is a slot; its shreds by index.
        RowShape::Shred => {
            out.extend_from_slice(&close.to_be_bytes());
            out.extend_from_slice(&row.to_be_bytes());
        }
    }
}

/// Offers `rate` rows per second to `store` (an empty one: every probe
/// starts afresh) for `cfg.intervals` closes.
pub fn probe(store: &dyn KvStore, cfg: &CapacityConfig, rate: f64) -> Result<Probe, DriverError> {
    let err = |source| DriverError::Store {
        store: "rows".into(),
        source,
    };
    let n = cfg.rows_per_close(rate);
    let interval = Duration::from_secs_f64(cfg.interval_secs);
    let row_bytes = 32 + cfg.value_bytes as u64;
    let chunk = (CHUNK_BYTES / row_bytes).clamp(1, n);
    let mut batch = Batch::with_capacity(chunk as usize, (chunk * row_bytes) as usize);
    let (mut k, mut v) = (Vec::new(), Vec::new());
    let mut persist_secs = Vec::new();
    let mut pending = Vec::new();
    let start = Instant::now();
    for i in 0..u64::from(cfg.intervals) {
        let close = i;
        let due = start + interval * (i as u32 + 1);
        if let Some(w) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(w);
        }
        // The close's rows, a write batch of at most CHUNK_BYTES at a time;
        // only the writes are timed, not the making of the rows.
        let mut secs = 0.0;
        for first in (0..n).step_by(chunk as usize) {
            batch.clear();
            for row in first..(first + chunk).min(n) {
                key(cfg, close, row, n, &mut k);
                v.clear();
                Rng::new(stream(cfg.seed, TAG_VALUE, close * n + row))
                    .fill(&mut v, cfg.value_bytes);
                batch.put(&k, &v);
            }
            let t = Instant::now();
            store.write(&batch).map_err(err)?;
            secs += t.elapsed().as_secs_f64();
            if secs > cfg.interval_secs {
                // Already late: the rate has failed, and the rest of the
                // close (or of the probe) would only cost time.
                break;
            }
        }
        persist_secs.push(secs);
        // Each close is progress to the watchdog, which otherwise ends a
        // search of many probes after its floor of quiet.
        crate::heartbeat::beat(None);
        if let Some(p) = store.stats().map_err(err)?.pending_compaction_bytes {
            pending.push(p);
        }
        if secs > cfg.interval_secs {
            break;
        }
    }
    Ok(judge(cfg, rate, n, persist_secs, pending))
}

/// Bytes of rows per write batch of a prefill: small, as a node's blocks
/// are, so the load's own batches do not weigh on the memory limit (16 MiB
/// batches got goleveldb's load of 1.25 GiB OOM-killed under 128 MiB,
/// where the same state in batches of 1,000 keys loaded).
pub const PREFILL_CHUNK_BYTES: u64 = 1 << 20;

/// Loads `cfg.prefill_rows` rows into `store` (random 32-byte keys of
/// their own stream, so no probe's key is among them) in write batches of
/// at most [`PREFILL_CHUNK_BYTES`], then flushes it: the state a probe then
/// starts from. `loaded` hears the rows written so far after each batch
/// (a load of many minutes shows its progress). Returns the seconds it
/// took (not the probe's).
pub fn prefill(
    store: &dyn KvStore,
    cfg: &CapacityConfig,
    loaded: &mut dyn FnMut(u64),
) -> Result<f64, DriverError> {
    let err = |source| DriverError::Store {
        store: "rows".into(),
        source,
    };
    let n = cfg.prefill_rows;
    let row_bytes = 32 + cfg.value_bytes as u64;
    let chunk = (PREFILL_CHUNK_BYTES / row_bytes).clamp(1, n.max(1));
    let mut batch = Batch::with_capacity(chunk as usize, (chunk * row_bytes) as usize);
    let (mut k, mut v) = (Vec::new(), Vec::new());
    let start = Instant::now();
    for first in (0..n).step_by(chunk as usize) {
        batch.clear();
        for row in first..(first + chunk).min(n) {
            prefill_row(cfg, row, &mut k, &mut v);
            batch.put(&k, &v);
        }
        store.write(&batch).map_err(err)?;
        // A load of many minutes (a B-tree ten times its memory limit) is
        // progress, not a stall, to the supervisor's watchdog.
        crate::heartbeat::beat(None);
        loaded((first + chunk).min(n));
    }
    store.flush().map_err(err)?;
    Ok(start.elapsed().as_secs_f64())
}

/// Row `row` of the prefill, key and value: regenerated from its position
/// (one stream a row), whatever the prefill's size.
pub fn prefill_row(cfg: &CapacityConfig, row: u64, k: &mut Vec<u8>, v: &mut Vec<u8>) {
    let mut r = Rng::new(stream(cfg.seed, TAG_PREFILL, row));
    k.clear();
    r.fill(k, 32);
    v.clear();
    r.fill(v, cfg.value_bytes);
}

/// Whether the closes of a probe held: each within the interval, and no
/// growth of persist time or compaction debt from the first half to the last.
fn judge(
    cfg: &CapacityConfig,
    rate: f64,
    n: u64,
    persist_secs: Vec<f64>,
    pending: Vec<u64>,
) -> Probe {
    let max = persist_secs.iter().copied().fold(0.0, f64::max);
    let half = persist_secs.len() / 2;
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len().max(1) as f64;
    let (first, last) = (mean(&persist_secs[..half]), mean(&persist_secs[half..]));
    let why_not = if max > cfg.interval_secs {
        Some(format!(
            "a close took {max:.3} s, over the {:.3} s interval",
            cfg.interval_secs
        ))
    } else if half >= 2 && last > 2.0 * first && last > cfg.interval_secs / 2.0 {
        Some(format!(
            "persist time grew from {first:.3} s to {last:.3} s a close"
        ))
    } else if let (Some(&a), Some(&b)) = (pending.first(), pending.last())
        && b > 2 * a + (64 << 20)
    {
        Some(format!(
            "compaction debt grew from {} to {} MiB",
            a >> 20,
            b >> 20
        ))
    } else {
        None
    };
    Probe {
        rate,
        rows_per_close: n,
        persist_secs,
        pending_compaction_bytes: pending,
        max_persist_secs: Some(max),
        prefill_secs: None,
        copy_secs: None,
        sustained: why_not.is_none(),
        why_not,
    }
}

/// Runs one probe at a rate, given the probes so far.
pub type TryRate<'a> = dyn FnMut(f64, &[Probe]) -> Result<Probe, DriverError> + 'a;

/// What a search found: every probe, the highest rate that held and the
/// lowest that did not (each absent when the search's end was not reached).
#[derive(Debug, Default)]
pub struct Found {
    /// Probes in the order tried.
    pub probes: Vec<Probe>,
    /// The highest rate sustained.
    pub sustained: Option<f64>,
    /// The lowest rate that failed.
    pub failed: Option<f64>,
}

/// Bisects between `cfg.min_rate` and `cfg.max_rate` with `try_rate`,
/// which runs one probe given the probes so far (to keep them before it
/// runs, in case it does not come back); an error ends the search with what
/// it found. `known` are the probes of an earlier search of the same
/// settings that was cut short, in its order: the search is deterministic,
/// so it asks for their rates again first and takes them as they were.
pub fn search(
    cfg: &CapacityConfig,
    known: Vec<Probe>,
    try_rate: &mut TryRate<'_>,
) -> (Found, Option<DriverError>) {
    let mut found = Found::default();
    let mut known = known.into_iter().peekable();
    let mut tried = |rate: f64, found: &mut Found| -> Result<bool, DriverError> {
        let p = match known.next_if(|p| (p.rate / rate - 1.0).abs() < 1e-9) {
            Some(p) => p,
            None => try_rate(rate, &found.probes)?,
        };
        let ok = p.sustained;
        found.probes.push(p);
        Ok(ok)
    };
    let mut run = |found: &mut Found| -> Result<(), DriverError> {
        if !tried(cfg.min_rate, found)? {
            found.failed = Some(cfg.min_rate);
            return Ok(());
        }
        found.sustained = Some(cfg.min_rate);
        if tried(cfg.max_rate, found)? {
            found.sustained = Some(cfg.max_rate);
            return Ok(());
        }
        let (mut lo, mut hi) = (cfg.min_rate, cfg.max_rate);
        found.failed = Some(hi);
        while (found.probes.len() as u32) < cfg.probes && hi / lo > NARROW {
            let mid = (lo * hi).sqrt();
            if tried(mid, found)? {
                lo = mid;
                found.sustained = Some(lo);
            } else {
                hi = mid;
                found.failed = Some(hi);
            }
        }
        Ok(())
    };
    let e = run(&mut found).err();
    (found, e)
}

#[cfg(test)]
mod tests;

//! Readings taken at the end of each segment (a batch, a trace mark): engine
//! counter deltas, private-device bytes after `syncfs`, process bytes and
//! disk usage per store; and the totals over a run. Shared by every
//! workload, so each gets the same meters from the same sources.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use ledgerbench_core::{EngineStats, KvStore, counter_delta};
use ledgerbench_meter::blockdev::BlockStat;
use ledgerbench_meter::loopdev::Device;
use ledgerbench_meter::proc_io::ProcIo;

use crate::DriverError;
use crate::results::{
    Latency, MemoryRecord, OpLatency, Sample, StoreBatch, StoreSummary, TotalSummary,
};

/// An HDR histogram of nanoseconds, 1 ns to 1 h at 3 significant digits.
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("constant bounds are valid")
}

/// Records `d` and returns it in seconds.
pub fn record(h: &mut Histogram<u64>, d: std::time::Duration) -> f64 {
    // Saturates at the histogram's bound (1 h) rather than dropping a sample.
    h.saturating_record(d.as_nanos().min(u128::from(u64::MAX)) as u64);
    d.as_secs_f64()
}

/// HDR histograms of one store's operations.
pub struct OpHists {
    /// Batch commits.
    pub commit: Histogram<u64>,
    /// Flushes.
    pub flush: Histogram<u64>,
    /// Compactions.
    pub compaction: Histogram<u64>,
    /// Point reads.
    pub get: Histogram<u64>,
    /// Point reads timed from when each was due (paced runs only).
    pub get_corrected: Histogram<u64>,
    /// Range scans.
    pub scan: Histogram<u64>,
    /// Waits for the writer's turn (threads sharing a one-writer engine).
    pub commit_wait: Histogram<u64>,
}

impl Default for OpHists {
    fn default() -> Self {
        Self {
            commit: histogram(),
            flush: histogram(),
            compaction: histogram(),
            get: histogram(),
            get_corrected: histogram(),
            scan: histogram(),
            commit_wait: histogram(),
        }
    }
}

impl OpHists {
    /// Percentiles of each kind that ran.
    pub fn latency(&self) -> OpLatency {
        OpLatency {
            commit: Latency::from_histogram(&self.commit),
            flush: Latency::from_histogram(&self.flush),
            compaction: Latency::from_histogram(&self.compaction),
            get: Latency::from_histogram(&self.get),
            get_corrected: Latency::from_histogram(&self.get_corrected),
            scan: Latency::from_histogram(&self.scan),
            commit_wait: Latency::from_histogram(&self.commit_wait),
        }
    }

    /// Empties every histogram (a soak's next interval).
    pub fn reset(&mut self) {
        for h in [
            &mut self.commit,
            &mut self.flush,
            &mut self.compaction,
            &mut self.get,
            &mut self.get_corrected,
            &mut self.scan,
            &mut self.commit_wait,
        ] {
            h.reset();
        }
    }

    /// Adds `other`'s counts to these (another thread's, same bounds).
    pub fn add(&mut self, other: &OpHists) {
        // Every histogram has the bounds of `histogram()`, so adding cannot fail.
        let _ = self.commit.add(&other.commit);
        let _ = self.flush.add(&other.flush);
        let _ = self.compaction.add(&other.compaction);
        let _ = self.get.add(&other.get);
        let _ = self.get_corrected.add(&other.get_corrected);
        let _ = self.scan.add(&other.scan);
        let _ = self.commit_wait.add(&other.commit_wait);
    }
}

/// Takes the readings at segment ends.
pub struct SegmentMeter<'a> {
    names: Vec<String>,
    stores: &'a [&'a dyn KvStore],
    devices: &'a [Option<&'a Device>],
    prev: Vec<EngineStats>,
    prev_dev: Vec<Option<BlockStat>>,
    prev_io: Option<ProcIo>,
}

impl<'a> SegmentMeter<'a> {
    /// Takes the starting readings.
    pub fn new(
        names: &[String],
        stores: &'a [&'a dyn KvStore],
        devices: &'a [Option<&'a Device>],
    ) -> Result<Self, DriverError> {
        let mut m = SegmentMeter {
            names: names.to_vec(),
            stores,
            devices,
            prev: Vec::with_capacity(stores.len()),
            prev_dev: vec![None; stores.len()],
            prev_io: ProcIo::now().ok(),
        };
        for (i, s) in stores.iter().enumerate() {
            m.prev.push(s.stats().map_err(m.store_err(i))?);
        }
        for (i, d) in devices.iter().enumerate() {
            if let Some(d) = d {
                d.sync().map_err(m.device_err(i))?;
                m.prev_dev[i] = Some(d.stat().map_err(m.device_err(i))?);
            }
        }
        Ok(m)
    }

    /// The error of store `i`.
    pub fn store_err(&self, i: usize) -> impl Fn(ledgerbench_core::Error) -> DriverError + use<> {
        let store = self.names.get(i).cloned().unwrap_or_default();
        move |source| DriverError::Store {
            store: store.clone(),
            source,
        }
    }

    fn device_err(
        &self,
        i: usize,
    ) -> impl Fn(ledgerbench_meter::MeterError) -> DriverError + use<> {
        let store = self.names.get(i).cloned().unwrap_or_default();
        move |source| DriverError::Meter {
            store: store.clone(),
            source,
        }
    }

    /// Empty records of a new segment, one per store.
    pub fn fresh(&self) -> Vec<StoreBatch> {
        self.names
            .iter()
            .map(|s| StoreBatch {
                store: s.clone(),
                entries: 0,
                logical_bytes: 0,
                raw_bytes: 0,
                write_secs: 0.0,
                flush_secs: 0.0,
                compact_secs: None,
                flush_bytes: None,
                compact_read_bytes: None,
                compact_write_bytes: None,
                engine_write_bytes: None,
                device_write_bytes: None,
                device_read_bytes: None,
                sync_secs: None,
                engine: EngineStats::default(),
                disk: Default::default(),
                latency: None,
            })
            .collect()
    }

    /// Ends a segment: fills each store's readings into `recs` and returns
    /// the process's written bytes since the last segment.
    pub fn close(&mut self, recs: &mut [StoreBatch]) -> Result<Option<u64>, DriverError> {
        for (i, d) in self.devices.iter().enumerate() {
            let Some(d) = d else { continue };
            // syncfs first, so writeback the engine left to the kernel (mmap
            // pages, unsynced files) is counted in the segment that caused it.
            let t = Instant::now();
            d.sync().map_err(self.device_err(i))?;
            let now = d.stat().map_err(self.device_err(i))?;
            let r = &mut recs[i];
            r.sync_secs = Some(t.elapsed().as_secs_f64());
            if let Some(p) = self.prev_dev[i] {
                let delta = now.since(&p);
                r.device_write_bytes = Some(delta.write_bytes());
                r.device_read_bytes = Some(delta.read_bytes());
            }
            self.prev_dev[i] = Some(now);
        }
        let io_now = ProcIo::now().ok();
        let process = self
            .prev_io
            .zip(io_now)
            .map(|(a, b)| b.since(&a).write_bytes);
        self.prev_io = io_now;
        for (i, store) in self.stores.iter().enumerate() {
            let now = store.stats().map_err(self.store_err(i))?;
            let p = &self.prev[i];
            let r = &mut recs[i];
            r.flush_bytes = counter_delta(now.flush_write_bytes, p.flush_write_bytes);
            r.compact_read_bytes =
                counter_delta(now.compaction_read_bytes, p.compaction_read_bytes);
            r.compact_write_bytes =
                counter_delta(now.compaction_write_bytes, p.compaction_write_bytes);
            r.engine_write_bytes = counter_delta(now.engine_write_bytes(), p.engine_write_bytes());
            r.disk = store.disk_usage().map_err(self.store_err(i))?;
            r.engine = now.clone();
            self.prev[i] = now;
        }
        Ok(process)
    }
}

/// What space amplification divides the bytes on disk by.
#[derive(Debug, Clone, Copy)]
pub enum Live<'a> {
    /// Each store's live bytes, counted by a scan.
    Counted(&'a [u64]),
    /// The bytes written: every key is written once (Stellar ingestion).
    Written,
    /// Not known (deletes and overwrites, and no scan): no space amplification.
    Unknown,
}

/// Per-store totals and the totals over all stores, from the segments'
/// records (`segments[k][i]` is store `i` in segment `k`), the process
/// bytes of each segment, and what each store holds live.
pub fn summarize_stores(
    names: &[String],
    segments: &[&[StoreBatch]],
    process_bytes: &[Option<u64>],
    hists: &[OpHists],
    live: Live<'_>,
) -> Option<(BTreeMap<String, StoreSummary>, TotalSummary)> {
    let last = segments.last()?;
    let mut stores = BTreeMap::new();
    for (i, name) in names.iter().enumerate() {
        let per = |f: &dyn Fn(&StoreBatch) -> f64| segments.iter().map(|b| f(&b[i])).sum::<f64>();
        let logical: u64 = segments.iter().map(|b| b[i].logical_bytes).sum();
        let compacts: Vec<f64> = segments.iter().filter_map(|b| b[i].compact_secs).collect();
        let engine_bytes: Option<u64> = segments.iter().map(|b| b[i].engine_write_bytes).sum();
        let device_bytes: Option<u64> = segments.iter().map(|b| b[i].device_write_bytes).sum();
        let end = &last[i];
        let live_bytes = match live {
            Live::Counted(l) => l.get(i).copied(),
            _ => None,
        };
        let base = match live {
            Live::Written => Some(logical),
            _ => live_bytes,
        };
        // Only set when a compaction ran, so presence says it all.
        let compact_secs = (!compacts.is_empty()).then(|| compacts.iter().sum());
        stores.insert(
            name.clone(),
            StoreSummary {
                logical_bytes: logical,
                raw_bytes: segments.iter().map(|b| b[i].raw_bytes).sum(),
                write_secs: per(&|s| s.write_secs),
                flush_secs: per(&|s| s.flush_secs),
                compact_secs,
                compact_first_last_secs: compact_secs
                    .and(compacts.first().zip(compacts.last()).map(|(a, b)| (*a, *b))),
                disk_allocated_bytes: end.disk.allocated_bytes,
                disk_apparent_bytes: end.disk.apparent_bytes,
                write_amp_engine: engine_bytes.map(|e| e as f64 / logical.max(1) as f64),
                write_amp_device: device_bytes.map(|e| e as f64 / logical.max(1) as f64),
                space_amp: base.map(|b| end.disk.allocated_bytes as f64 / b.max(1) as f64),
                live_bytes,
                final_entries: None,
                content_sha256: None,
                latency: hists.get(i).map(OpHists::latency).unwrap_or_default(),
            },
        );
    }
    let logical: u64 = stores.values().map(|s| s.logical_bytes).sum();
    let ratio = |b: u64| b as f64 / logical.max(1) as f64;
    // Every store's base, or none.
    let live_total: Option<u64> = match live {
        Live::Counted(_) => stores.values().map(|s| s.live_bytes).sum(),
        Live::Written => Some(logical),
        Live::Unknown => None,
    };
    let all = |f: fn(&StoreBatch) -> Option<u64>| -> Option<u64> {
        segments.iter().flat_map(|b| b.iter().map(f)).sum()
    };
    let total = TotalSummary {
        logical_bytes: logical,
        write_amp_engine: all(|s| s.engine_write_bytes).map(ratio),
        write_amp_device: all(|s| s.device_write_bytes).map(ratio),
        write_amp_process: process_bytes
            .iter()
            .copied()
            .sum::<Option<u64>>()
            .map(ratio),
        space_amp: live_total.map(|l| {
            last.iter().map(|s| s.disk.allocated_bytes).sum::<u64>() as f64 / l.max(1) as f64
        }),
        // Stores open fresh for a run, so the counter's last value is the total.
        stall_secs: last
            .iter()
            .filter_map(|s| s.engine.stall_micros)
            .reduce(|a, b| a + b)
            .map(|m| m as f64 / 1e6),
    };
    Some((stores, total))
}

/// Progress counters the writer bumps and the sampler reads.
#[derive(Default)]
pub struct Counters {
    /// Whether the workload commits ledgers (Stellar); when not, samples
    /// leave the ledger count absent rather than 0.
    pub counts_ledgers: bool,
    /// Ledgers committed.
    pub ledgers: AtomicU64,
    /// Lookups (gets) completed.
    pub lookups: AtomicU64,
    /// Logical bytes committed.
    pub bytes: AtomicU64,
}

impl Counters {
    /// Counters of a workload that commits ledgers.
    pub fn for_ledgers() -> Self {
        Self {
            counts_ledgers: true,
            ..Self::default()
        }
    }
}

/// Sets its flag when dropped. A scope's helper threads (the sampler, the
/// generators) stop on that flag, so with one of these held by the scope's
/// own work they stop even when that work panics: the scope then ends and
/// the panic reaches the user instead of a run that waits forever.
pub struct SetOnDrop<'a>(pub &'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Samples throughput and engine state once a second until `done`.
pub fn sample_every_second(
    stores: &[&dyn KvStore],
    counters: &Counters,
    done: &AtomicBool,
    started: Instant,
) -> Vec<Sample> {
    let mut samples = Vec::new();
    let (mut pl, mut pc, mut pb) = (0, 0, 0);
    let mut tick = Instant::now();
    while !done.load(Ordering::Relaxed) {
        // Short sleeps, so the sampler notices the end of a phase quickly.
        std::thread::sleep(Duration::from_millis(50));
        if tick.elapsed() < Duration::from_secs(1) {
            continue;
        }
        tick = Instant::now();
        let (l, c, b) = (
            counters.lookups.load(Ordering::Relaxed),
            counters.ledgers.load(Ordering::Relaxed),
            counters.bytes.load(Ordering::Relaxed),
        );
        let stats: Vec<EngineStats> = stores.iter().filter_map(|s| s.stats().ok()).collect();
        let sum = |f: fn(&EngineStats) -> Option<u64>| -> Option<u64> {
            stats.iter().filter_map(f).reduce(|a, b| a + b)
        };
        samples.push(Sample {
            t: started.elapsed().as_secs_f64(),
            lookups: l - pl,
            ledgers: counters.counts_ledgers.then_some(c - pc),
            bytes: b - pb,
            stall_micros: sum(|s| s.stall_micros),
            pending_compaction_bytes: sum(|s| s.pending_compaction_bytes),
            write_stopped: stats
                .iter()
                .filter_map(|s| s.write_stopped)
                .reduce(|a, b| a || b),
            running_compactions: sum(|s| s.running_compactions),
            rss_bytes: rss_bytes(),
            harness_heap_bytes: ledgerbench_meter::memory::heap_bytes(),
        });
        (pl, pc, pb) = (l, c, b);
    }
    samples
}

/// Resident set size of this process now.
pub fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf only reads a constant of the running system.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    (page > 0).then(|| pages * page as u64)
}

/// Memory at the end of a batch or segment: the harness's heap peak since
/// the last call (a new window starts), resident memory by kind, and the
/// run cgroup's charge. `None` when nothing at all could be read.
pub fn memory_now() -> Option<MemoryRecord> {
    use ledgerbench_meter::{cgroup, memory};
    let peak = memory::take_heap_peak();
    let heap = memory::heap_bytes();
    let engine_peak = memory::take_engine_heap_peak();
    let engine_heap = memory::engine_heap_bytes();
    // Freed heap stays resident in malloc's arenas until trimmed; without
    // this the anonymous RSS (and so the engine's share) would count
    // memory nobody holds. Outside every timed span.
    // SAFETY: malloc_trim only returns free arena memory to the kernel.
    unsafe { libc::malloc_trim(0) };
    let rss = memory::Resident::now();
    let cg = cgroup::own_charged();
    let rec = MemoryRecord {
        harness_heap_peak_bytes: peak,
        harness_heap_bytes: heap,
        engine_heap_peak_bytes: engine_peak,
        engine_heap_bytes: engine_heap,
        rss_anon_bytes: rss.map(|r| r.anon),
        rss_file_bytes: rss.map(|r| r.file),
        // Allocated heap not yet touched is not resident: when the heap
        // exceeds the anonymous RSS the difference says nothing, and a
        // clamped 0 would read as a measurement.
        engine_anon_bytes: rss.zip(heap).and_then(|(r, h)| r.anon.checked_sub(h)),
        cgroup_usage_bytes: cg.map(|c| c.usage),
        cgroup_page_cache_bytes: cg.map(|c| c.page_cache),
    };
    (rec != MemoryRecord::default()).then_some(rec)
}

//! A soak's guards: after each interval, the run stops itself, saying why,
//! before a store's disk or the process's memory runs out, so the engine
//! is not killed mid-write and the next backend still runs. What the run
//! measured until then is kept.

use ledgerbench_driver::observe::Observer;
use ledgerbench_driver::results::SegmentRecord;

/// Intervals of the fastest recent growth that must still fit.
pub const HEADROOM_INTERVALS: u64 = 3;
/// How many of the latest intervals "recent" is: a store that ramped up
/// and then held steady (retention at work) is not stopped for its ramp.
pub const RECENT: usize = 6;
/// The share of a private device its filesystem can hold (ext4 keeps the rest).
pub const DEVICE_USABLE: f64 = 0.90;
/// The share of the memory limit the process's own memory may reach.
pub const MEMORY_USABLE: f64 = 0.90;

/// Watches the disk and memory a soak's intervals report.
pub struct Guard {
    /// Each store's private device size, bytes; `None`: the run
    /// directory's filesystem, by its free space.
    device: Option<u64>,
    /// Where the stores are when they have no device of their own.
    dir: std::path::PathBuf,
    memory_limit: Option<u64>,
    /// Each store's footprint.
    disk: Vec<Growth>,
    /// The memory the run holds.
    held: Growth,
    why: Option<String>,
}

impl Guard {
    /// Guards stores on devices of `device` bytes each (or under `dir`)
    /// in a process held to `memory_limit`.
    pub fn new(device: Option<u64>, dir: &std::path::Path, memory_limit: Option<u64>) -> Self {
        Self {
            device,
            dir: dir.to_path_buf(),
            memory_limit,
            disk: Vec::new(),
            held: Growth::default(),
            why: None,
        }
    }

    fn check_disk(&mut self, rec: &SegmentRecord) -> Option<String> {
        self.disk.resize(rec.stores.len(), Growth::default());
        for (i, s) in rec.stores.iter().enumerate() {
            let used = s.disk.allocated_bytes;
            // The first reading has nothing to grow from: the store's
            // creation (a preallocated log, a map) is no growth rate.
            let Some(fastest) = self.disk[i].observe(used) else {
                continue;
            };
            let need = fastest * HEADROOM_INTERVALS;
            let free = match self.device {
                Some(size) => ((size as f64 * DEVICE_USABLE) as u64).saturating_sub(used),
                None => ledgerbench_core::fsutil::free_bytes(&self.dir).ok()?,
            };
            if free < need {
                let place = match self.device {
                    Some(size) => format!("{} MiB used of its {} MiB device", mib(used), mib(size)),
                    None => format!("{} MiB free where it is", mib(free)),
                };
                return Some(format!(
                    "store `{}`'s disk would run out within {HEADROOM_INTERVALS} intervals: {place}, growing by up to {} MiB an interval; give a larger --device-size, a shorter retention or a shorter --duration",
                    s.store,
                    mib(fastest)
                ));
            }
        }
        None
    }

    fn check_memory(&mut self, rec: &SegmentRecord) -> Option<String> {
        let limit = self.memory_limit?;
        let m = rec.memory.as_ref()?;
        // The cgroup's charge less its page cache (which the kernel takes
        // back before it kills), else the process's anonymous memory.
        let held = match (m.cgroup_usage_bytes, m.cgroup_page_cache_bytes) {
            (Some(u), Some(c)) => u.saturating_sub(c),
            _ => m.rss_anon_bytes?,
        };
        // What the interval held for a while above its end (an engine that
        // copies its data to flush it), where the heap meters saw it.
        let above = |peak: Option<u64>, now: Option<u64>| {
            peak.zip(now).map_or(0, |(p, n)| p.saturating_sub(n))
        };
        let transient = above(m.engine_heap_peak_bytes, m.engine_heap_bytes)
            + above(m.harness_heap_peak_bytes, m.harness_heap_bytes);
        let fastest = self.held.observe(held).unwrap_or(0);
        let need = held + transient + fastest * HEADROOM_INTERVALS;
        (need as f64 >= limit as f64 * MEMORY_USABLE).then(|| {
            format!(
                "memory would run out: the run holds {} MiB besides page cache under its {} MiB --memory-limit, up to {} MiB more for moments (the engine's heap peak) and growing by up to {} MiB an interval, over {:.0}% of the limit, where the kernel kills it; give a larger --memory-limit, a smaller --engine-memory or a shorter retention",
                mib(held),
                mib(limit),
                mib(transient),
                mib(fastest),
                MEMORY_USABLE * 100.0
            )
        })
    }
}

/// A reading's growth from one interval to the next.
#[derive(Debug, Clone, Default)]
struct Growth {
    last: Option<u64>,
    /// The growth over the latest [`RECENT`] intervals.
    recent: std::collections::VecDeque<u64>,
}

impl Growth {
    /// Takes this interval's reading; the fastest recent growth, or `None`
    /// at the first reading (nothing to grow from).
    fn observe(&mut self, now: u64) -> Option<u64> {
        let before = self.last.replace(now)?;
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(now.saturating_sub(before));
        self.recent.iter().copied().max()
    }
}

fn mib(b: u64) -> u64 {
    b >> 20
}

impl Observer for Guard {
    fn segment_done(&mut self, rec: &SegmentRecord, _progress: Option<(u64, u64)>) {
        if self.why.is_none() {
            self.why = self.check_disk(rec).or_else(|| self.check_memory(rec));
        }
    }
    fn stop(&self) -> Option<String> {
        self.why.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(used_mib: u64, anon_mib: Option<u64>) -> SegmentRecord {
        let memory = anon_mib.map(|a| serde_json::json!({"rss_anon_bytes": a << 20}));
        serde_json::from_value(serde_json::json!({
            "segment": 1, "mark": "batch 1", "ops": 1, "gets": 0, "total_secs": 10.0,
            "memory": memory,
            "stores": [{
                "store": "blobs", "entries": 1, "logical_bytes": 1, "raw_bytes": 1,
                "write_secs": 0.0, "flush_secs": 0.0, "engine": {},
                "disk": {"allocated_bytes": used_mib << 20, "apparent_bytes": 0, "files": 1},
            }],
        }))
        .expect("a segment")
    }

    #[test]
    fn a_disk_that_would_fill_within_three_intervals_stops_the_run() {
        let mut g = Guard::new(Some(1000 << 20), std::path::Path::new("/"), None);
        // 100 MiB an interval on a 1000 MiB device (900 usable); the first
        // reading (500 MiB at creation) is no growth.
        for used in [500, 500, 500, 600] {
            g.segment_done(&interval(used, None), None);
            assert_eq!(g.stop(), None, "at {used} MiB");
        }
        // 600 + 3 x 100 just fits the 900 usable; 610 + 300 does not.
        g.segment_done(&interval(610, None), None);
        let why = g.stop().expect("610 + 300 does not fit in 900");
        assert!(why.contains("store `blobs`'s disk would run out"), "{why}");
        assert!(why.contains("610 MiB used of its 1000 MiB device"), "{why}");
        assert!(why.contains("up to 100 MiB an interval"), "{why}");
        // A ramp to a steady footprint (retention at work) near the top
        // stops nothing once the ramp is out of the recent intervals.
        let mut g = Guard::new(Some(1000 << 20), std::path::Path::new("/"), None);
        for used in [100, 200, 300, 400, 500] {
            g.segment_done(&interval(used, None), None);
        }
        for _ in 0..RECENT {
            g.segment_done(&interval(500, None), None);
        }
        assert_eq!(g.stop(), None);
        g.segment_done(&interval(800, None), None);
        assert!(g.stop().is_some(), "a jump of 300 MiB at 800 MiB used");
    }

    #[test]
    fn memory_near_the_limit_stops_the_run_and_no_limit_never_does() {
        let mut g = Guard::new(Some(1 << 40), std::path::Path::new("/"), Some(1000 << 20));
        g.segment_done(&interval(1, Some(899)), None);
        assert_eq!(g.stop(), None);
        g.segment_done(&interval(1, Some(900)), None);
        let why = g.stop().expect("90% of the limit");
        assert!(
            why.contains("900 MiB besides page cache under its 1000 MiB"),
            "{why}"
        );
        // A flush's copy of the data counts while it lasts, and growth
        // must leave room for three more intervals.
        let mut g = Guard::new(Some(1 << 40), std::path::Path::new("/"), Some(1000 << 20));
        let mut with_peak = interval(1, Some(500));
        let m = with_peak.memory.as_mut().expect("memory");
        (m.engine_heap_bytes, m.engine_heap_peak_bytes) = (Some(400 << 20), Some(800 << 20));
        g.segment_done(&with_peak, None);
        assert!(
            g.stop()
                .expect("500 + 400 of peak")
                .contains("up to 400 MiB more")
        );
        let mut g = Guard::new(Some(1 << 40), std::path::Path::new("/"), Some(1000 << 20));
        for held in [500, 600, 700] {
            g.segment_done(&interval(1, Some(held)), None);
        }
        assert!(
            g.stop()
                .expect("700 + 3 x 100")
                .contains("growing by up to 100 MiB")
        );
        let mut g = Guard::new(Some(1 << 40), std::path::Path::new("/"), None);
        g.segment_done(&interval(1, Some(100_000)), None);
        assert_eq!(g.stop(), None);
    }
}

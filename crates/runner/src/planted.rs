//! A slowdown planted on purpose, to show that the timing gate
//! (`ledgerbench ab`) catches a regression of known size: with
//! `LEDGERBENCH_PLANT_SLOWDOWN_PCT=5` every call into a store takes 5%
//! longer than it did. Runs record it (`planted_slowdown_pct`), and say so
//! when they start, so it cannot pass for a real result. And a stall, to
//! test the watchdog: with `LEDGERBENCH_PLANT_STALL=put` (or `flush`,
//! `get`, `scan`, `compact`; `put:ENGINE` for one engine only) that call
//! blocks forever.

use std::path::Path;
use std::time::{Duration, Instant};

use ledgerbench_core::{Batch, Capabilities, DiskUsage, EngineStats, KvStore, Result};

mod stall;
pub use stall::{Call, STALL_ENV, Stall, stall};

/// The variable that plants the slowdown, in percent of each call.
pub const ENV: &str = "LEDGERBENCH_PLANT_SLOWDOWN_PCT";

/// The planted slowdown, percent, when the variable holds a number above
/// 0 and at most 100; anything else plants nothing (and says so).
pub fn percent() -> Option<f64> {
    // Read once: every run and store asks, and a bad value is said once.
    static PCT: std::sync::OnceLock<Option<f64>> = std::sync::OnceLock::new();
    *PCT.get_or_init(|| {
        let v = std::env::var(ENV).ok()?;
        match v.trim().parse::<f64>() {
            Ok(p) if p > 0.0 && p <= 100.0 => Some(p),
            _ => {
                ledgerbench_core::note!(
                    "ledgerbench: {ENV}={v} ignored: give a percentage above 0, at most 100"
                );
                None
            }
        }
    })
}

/// `store`, slowed or stalled as planted (itself when nothing is).
pub fn wrap(store: Box<dyn KvStore>) -> Box<dyn KvStore> {
    let factor = percent().map(|p| p / 100.0);
    let stall = stall().filter(|s| s.applies_to(store.engine()));
    if factor.is_none() && stall.is_none() {
        return store;
    }
    let at = store.path().display();
    if let Some(f) = factor {
        ledgerbench_core::note!(
            "ledgerbench: {ENV}: every call into store {at} takes {}% longer, on purpose",
            f * 100.0
        );
    }
    if let Some(s) = &stall {
        ledgerbench_core::note!(
            "ledgerbench: {STALL_ENV}: the first {} into store {at} blocks forever, on purpose",
            s.call
        );
    }
    Box::new(Planted {
        inner: store,
        factor,
        stall,
    })
}

/// A store whose every call takes `factor` of its own time longer, and
/// whose `stall` call never returns.
struct Planted {
    inner: Box<dyn KvStore>,
    factor: Option<f64>,
    stall: Option<Stall>,
}

impl Planted {
    fn timed<T>(&self, kind: Call, call: impl FnOnce() -> T) -> T {
        if self.stall.as_ref().is_some_and(|s| s.call == kind) {
            stall::forever();
        }
        let Some(factor) = self.factor else {
            return call();
        };
        let start = Instant::now();
        let r = call();
        let until = Instant::now() + start.elapsed().mul_f64(factor);
        // A sleep overshoots by tens of microseconds; the rest is spun, so
        // short calls get their share too.
        let slack = Duration::from_micros(200);
        if let Some(long) = until.checked_duration_since(Instant::now() + slack) {
            std::thread::sleep(long);
        }
        while Instant::now() < until {
            std::hint::spin_loop();
        }
        r
    }
}

impl KvStore for Planted {
    fn engine(&self) -> &'static str {
        self.inner.engine()
    }
    fn path(&self) -> &Path {
        self.inner.path()
    }
    fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        self.timed(Call::Get, || self.inner.get_into(key, out))
    }
    fn get_many(&self, keys: &[Vec<u8>], out: &mut Vec<Option<Vec<u8>>>) -> Result<()> {
        self.timed(Call::Get, || self.inner.get_many(keys, out))
    }
    fn write(&self, batch: &Batch) -> Result<()> {
        self.timed(Call::Put, || self.inner.write(batch))
    }
    fn scan(&self, start: &[u8], visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        self.timed(Call::Scan, || self.inner.scan(start, visit))
    }
    fn flush(&self) -> Result<()> {
        self.timed(Call::Flush, || self.inner.flush())
    }
    fn compact(&self) -> Result<()> {
        self.timed(Call::Compact, || self.inner.compact())
    }
    fn stats(&self) -> Result<EngineStats> {
        self.inner.stats()
    }
    fn disk_usage(&self) -> Result<DiskUsage> {
        self.inner.disk_usage()
    }
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }
    fn close(self: Box<Self>) -> Result<()> {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store whose writes take a fixed time.
    struct Fixed(std::path::PathBuf);
    impl KvStore for Fixed {
        fn engine(&self) -> &'static str {
            "fixed"
        }
        fn path(&self) -> &Path {
            &self.0
        }
        fn get_into(&self, _: &[u8], _: &mut Vec<u8>) -> Result<bool> {
            Ok(false)
        }
        fn write(&self, _: &Batch) -> Result<()> {
            std::thread::sleep(Duration::from_millis(20));
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
            Capabilities {
                ordered_iteration: false,
                manual_compaction: false,
                evicts_oldest: false,
                persistent: false,
                discards_writes: true,
                writers: None,
                range_delete: None,
            }
        }
        fn close(self: Box<Self>) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_slowed_call_takes_its_share_longer() {
        let s = Planted {
            inner: Box::new(Fixed("/".into())),
            factor: Some(0.5),
            stall: None,
        };
        let t = Instant::now();
        s.write(&Batch::default()).expect("write");
        let took = t.elapsed();
        // 20 ms of work plus half of it; a sleep may overshoot a little.
        assert!(took >= Duration::from_millis(30), "{took:?}");
        assert!(took < Duration::from_millis(45), "{took:?}");
    }
}

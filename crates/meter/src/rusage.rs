//! `getrusage(RUSAGE_SELF)`: CPU time, peak RSS and page faults.

use serde::{Deserialize, Serialize};

/// Resource usage of this process so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// User CPU seconds.
    pub user_secs: f64,
    /// System CPU seconds.
    pub sys_secs: f64,
    /// Peak resident set size, bytes.
    pub max_rss_bytes: u64,
    /// Major page faults (a page read from storage: how mmap engines read).
    pub major_faults: u64,
    /// Minor page faults (page already in memory).
    pub minor_faults: u64,
}

impl Usage {
    /// This process's usage now.
    pub fn now() -> Self {
        // SAFETY: an all-zero rusage is a valid value and getrusage only writes into it.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `ru` is a valid, writable rusage; RUSAGE_SELF is always accepted.
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Self {
            user_secs: secs(ru.ru_utime),
            sys_secs: secs(ru.ru_stime),
            max_rss_bytes: ru.ru_maxrss as u64 * 1024,
            major_faults: ru.ru_majflt as u64,
            minor_faults: ru.ru_minflt as u64,
        }
    }

    /// Growth since `earlier` (peak RSS stays the current peak).
    pub fn since(&self, earlier: &Usage) -> Usage {
        Usage {
            user_secs: self.user_secs - earlier.user_secs,
            sys_secs: self.sys_secs - earlier.sys_secs,
            max_rss_bytes: self.max_rss_bytes,
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_time_and_rss_grow_with_work() {
        let a = super::Usage::now();
        let v: Vec<u8> = vec![1; 64 << 20];
        let mut x = 0u64;
        for i in 0..50_000_000u64 {
            x = x
                .wrapping_mul(31)
                .wrapping_add(i ^ u64::from(v[(i as usize) % v.len()]));
        }
        let d = super::Usage::now().since(&a);
        assert!(x != 1);
        assert!(d.user_secs > 0.0, "{d:?}");
        assert!(d.max_rss_bytes >= 64 << 20, "{d:?}");
        assert!(
            d.minor_faults > 1000,
            "touching 64 MiB faults pages in: {d:?}"
        );
    }
}

//! The watchdog of a supervised run: a worker that makes no progress for
//! `--stall-timeout` is ended and the stall recorded, instead of hanging
//! the run (a Badger store at its memory limit once spun for minutes with
//! no progress and had to be stopped by hand).
//!
//! Progress is what the run's progress display sees: a phase starting, a
//! batch or segment finishing, units of a phase done. The worker stamps a
//! heartbeat file in its run directory at most every [`BEAT_EVERY`]
//! ([`beat`]); the supervisor reads its time and phase.
//! By default a stall is [`MULTIPLE`] times the longest gap between two
//! beats seen so far in the worker, and never less than [`FLOOR`]: a run
//! whose batches slowly grow to twenty minutes is not a stall, one whose
//! beats stop is.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant, SystemTime};

pub use ledgerbench_driver::heartbeat::{BEAT_EVERY, HEARTBEAT, beat};

/// The default stall is this many times the longest gap seen...
pub const MULTIPLE: u32 = 10;
/// ...and at least this long.
pub const FLOOR: Duration = Duration::from_secs(600);

/// How long a worker may go without progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StallTimeout {
    /// [`MULTIPLE`] times the longest gap between beats, at least [`FLOOR`].
    #[default]
    Auto,
    /// A fixed time.
    After(Duration),
    /// No watchdog.
    Off,
}

/// A `--stall-timeout` that means no time: what was given and what to give.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadStallTimeout(String);

impl FromStr for StallTimeout {
    type Err = BadStallTimeout;
    fn from_str(s: &str) -> Result<Self, BadStallTimeout> {
        let t = s.trim();
        match t {
            "auto" => return Ok(Self::Auto),
            "off" => return Ok(Self::Off),
            _ => {}
        }
        let bad = || {
            BadStallTimeout(format!(
                "--stall-timeout {s}: give a time such as 90s, 15m or 2h (a bare number is seconds), `auto` (the default: {MULTIPLE}x the longest gap between progress reports, at least {} min) or `off`",
                FLOOR.as_secs() / 60
            ))
        };
        let (digits, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
        let n: u64 = digits.parse().map_err(|_| bad())?;
        let secs = match unit {
            "" | "s" => n,
            "m" => n.saturating_mul(60),
            "h" => n.saturating_mul(3600),
            _ => return Err(bad()),
        };
        if secs == 0 {
            return Err(BadStallTimeout(format!(
                "--stall-timeout {s}: a run cannot make progress in no time; give at least 1s, or `off` for no watchdog"
            )));
        }
        Ok(Self::After(Duration::from_secs(secs)))
    }
}

impl std::fmt::Display for StallTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Auto => write!(f, "auto"),
            Self::Off => write!(f, "off"),
            Self::After(d) => write!(f, "{}s", d.as_secs()),
        }
    }
}

/// A stall the supervisor found.
#[derive(Debug, Clone, PartialEq)]
pub struct Stalled {
    /// Time since the last progress.
    pub quiet: Duration,
    /// Where the worker last reported progress ("" before it did).
    pub phase: String,
    /// The timeout that applied.
    pub limit: Duration,
}

impl std::fmt::Display for Stalled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.phase.is_empty() {
            "starting up"
        } else {
            &self.phase
        };
        write!(
            f,
            "no progress for {} s, at: {at} (--stall-timeout: {} s); the worker was ended",
            self.quiet.as_secs(),
            self.limit.as_secs()
        )
    }
}

/// The supervisor's side: watches one worker's heartbeat.
pub struct Watch {
    timeout: StallTimeout,
    file: PathBuf,
    seen: Option<SystemTime>,
    last: Instant,
    longest: Duration,
}

impl Watch {
    /// Starts watching a worker started now, writing into `out`.
    pub fn new(timeout: StallTimeout, out: &Path) -> Self {
        let file = out.join(HEARTBEAT);
        let _ = std::fs::remove_file(&file);
        Self {
            timeout,
            file,
            seen: None,
            last: Instant::now(),
            longest: Duration::ZERO,
        }
    }

    /// The stall timeout in force now.
    pub fn limit(&self) -> Option<Duration> {
        match self.timeout {
            StallTimeout::Off => None,
            StallTimeout::After(d) => Some(d),
            StallTimeout::Auto => Some((self.longest * MULTIPLE).max(FLOOR)),
        }
    }

    /// Checks the heartbeat at `now`: `Some` when the worker has been quiet
    /// longer than the timeout.
    pub fn poll(&mut self, now: Instant) -> Option<Stalled> {
        let stamp = std::fs::metadata(&self.file)
            .and_then(|m| m.modified())
            .ok();
        if stamp.is_some() && stamp != self.seen {
            self.seen = stamp;
            self.longest = self.longest.max(now.saturating_duration_since(self.last));
            self.last = now;
        }
        let limit = self.limit()?;
        let quiet = now.saturating_duration_since(self.last);
        (quiet > limit).then(|| Stalled {
            quiet,
            phase: std::fs::read_to_string(&self.file).unwrap_or_default(),
            limit,
        })
    }

    /// Removes the heartbeat file (the worker is gone).
    pub fn finish(&self) {
        let _ = std::fs::remove_file(&self.file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_parse_with_units_and_refuse_nonsense() {
        assert_eq!("auto".parse(), Ok(StallTimeout::Auto));
        assert_eq!("off".parse(), Ok(StallTimeout::Off));
        let after = |s| StallTimeout::After(Duration::from_secs(s));
        assert_eq!("90".parse(), Ok(after(90)));
        assert_eq!("90s".parse(), Ok(after(90)));
        assert_eq!("15m".parse(), Ok(after(900)));
        assert_eq!("2h".parse(), Ok(after(7200)));
        for bad in ["", "0", "0s", "-5", "1.5m", "10 min", "soon"] {
            let e = bad.parse::<StallTimeout>().expect_err(bad).to_string();
            assert!(e.contains("--stall-timeout"), "{bad}: {e}");
        }
    }

    #[test]
    fn auto_grows_with_the_longest_gap_and_never_drops_under_the_floor() {
        let t = tempfile::tempdir().expect("tempdir");
        let mut w = Watch::new(StallTimeout::Auto, t.path());
        let start = w.last;
        assert_eq!(w.limit(), Some(FLOOR));
        // Quiet just under the floor: no stall; just over: a stall.
        assert!(w.poll(start + FLOOR).is_none());
        let s = w
            .poll(start + FLOOR + Duration::from_secs(1))
            .expect("stall");
        assert_eq!(s.phase, "");
        // A beat after 100 s of quiet: the allowance becomes 1,000 s.
        let mut w = Watch::new(StallTimeout::Auto, t.path());
        let start = w.last;
        std::fs::write(t.path().join(HEARTBEAT), "load").expect("beat");
        assert!(w.poll(start + Duration::from_secs(100)).is_none());
        assert_eq!(w.limit(), Some(Duration::from_secs(1000)));
        let quiet = start + Duration::from_secs(100 + 1001);
        let s = w.poll(quiet).expect("stall");
        assert_eq!((s.phase.as_str(), s.quiet.as_secs()), ("load", 1001));
        assert!(s.to_string().contains("no progress for 1001 s, at: load"));
        w.finish();
        assert!(!t.path().join(HEARTBEAT).exists());
    }

    #[test]
    fn a_fixed_timeout_holds_and_off_never_fires() {
        let t = tempfile::tempdir().expect("tempdir");
        let mut w = Watch::new(StallTimeout::After(Duration::from_secs(5)), t.path());
        let start = w.last;
        assert!(w.poll(start + Duration::from_secs(5)).is_none());
        assert!(w.poll(start + Duration::from_secs(6)).is_some());
        let mut off = Watch::new(StallTimeout::Off, t.path());
        assert!(off.poll(start + Duration::from_secs(1 << 30)).is_none());
    }
}

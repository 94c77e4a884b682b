//! When open-loop requests are due: fixed-rate or Poisson arrivals, each
//! due whether or not the ones before it have returned. One schedule for
//! the Stellar lookups and the paced op streams.

use std::time::{Duration, Instant};

use ledgerbench_rng::Rng;

pub use ledgerbench_results::workload::Arrival;

/// The due times of a stream of requests, the first one due now.
pub(crate) struct Schedule {
    due: Instant,
    mean: f64,
    arrival: Arrival,
    rng: Rng,
}

impl Schedule {
    /// `per_sec` requests a second arriving as `arrival` (`rng` draws the
    /// Poisson gaps).
    pub(crate) fn new(per_sec: f64, arrival: Arrival, rng: Rng) -> Self {
        Self {
            due: Instant::now(),
            mean: 1.0 / per_sec,
            arrival,
            rng,
        }
    }

    /// The same schedule, its first request due `offset` from now (client
    /// threads sharing a rate start a gap apart, not all at once).
    pub(crate) fn offset(mut self, offset: Duration) -> Self {
        self.due += offset;
        self
    }

    fn gap(&mut self) -> Duration {
        let secs = match self.arrival {
            Arrival::Fixed => self.mean,
            // Inverse transform of a uniform in (0, 1].
            Arrival::Poisson => {
                let u = (self.rng.below(1 << 53) as f64 + 1.0) / (1u64 << 53) as f64;
                -u.ln() * self.mean
            }
        };
        Duration::from_secs_f64(secs)
    }

    /// Moves every request not yet issued `d` later: while the harness
    /// holds the stream (metering a segment, a barrier at a mark) no client
    /// would have been waiting, so that time does not make the requests
    /// after it late. A stream already behind stays as far behind.
    pub(crate) fn postpone(&mut self, d: Duration) {
        self.due += d;
    }

    /// Sleeps until the next request is due (not at all when behind) and
    /// returns when it was due.
    pub(crate) fn wait(&mut self) -> Instant {
        let due = self.due;
        let gap = self.gap();
        self.due += gap;
        if let Some(w) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(w);
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_postponed_schedule_moves_its_next_request_and_keeps_its_rate() {
        let mut s = Schedule::new(1000.0, Arrival::Fixed, Rng::new(0));
        let first = s.wait();
        s.postpone(Duration::from_millis(30));
        let second = s.wait();
        let gap = second.duration_since(first);
        assert!(
            gap >= Duration::from_millis(31) && gap < Duration::from_millis(32),
            "{gap:?}"
        );
        let next = s.wait().duration_since(second);
        assert!(
            next.abs_diff(Duration::from_millis(1)) < Duration::from_micros(1),
            "{next:?}"
        );
    }
}

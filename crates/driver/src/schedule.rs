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

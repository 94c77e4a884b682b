//! The lookup bound: a `txdata` design is recommended only if a random-hash
//! GET, of a transaction that exists and of one that does not (a client
//! polling for a transaction not yet applied), stays within a stated p99
//! at the month's batch count, measured by `ledgerbench run fan-out`. Ingestion
//! cost alone would favour a design whose lookups fan out over every batch.

use ledgerbench_results::StoreSetup;
use ledgerbench_results::fanout::FanOutRun;

use super::MONTH_BATCHES;

/// A design's GET cost at the month's batch count.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct MonthLookup {
    /// p99 of a GET of an existing key, microseconds (steady pass).
    pub(super) found_p99_us: f64,
    /// p99 of a GET of a missing key, when measured (a month run looks
    /// up existing keys only).
    pub(super) missing_p99_us: Option<f64>,
    /// Databases a GET looked in, when the store counts them.
    pub(super) probes: Option<f64>,
    /// The run it comes from: a fan-out run, or a month run that timed
    /// lookups as it went.
    pub(super) source: String,
    /// The batch count it was measured at.
    pub(super) batch: u32,
}

impl MonthLookup {
    /// The worse of the two p99s (of the one, when only existing keys
    /// were looked up).
    pub(super) fn worst_us(&self) -> f64 {
        self.found_p99_us.max(self.missing_p99_us.unwrap_or(0.0))
    }

    /// `found / missing` in milliseconds, or `found ms (existing keys)`.
    pub(super) fn text(&self) -> String {
        match self.missing_p99_us {
            Some(m) => format!("{:.1} / {:.1} ms", self.found_p99_us / 1e3, m / 1e3),
            None => format!("{:.1} ms (existing keys)", self.found_p99_us / 1e3),
        }
    }
}

/// The month's lookup cost of the store set up as `setup`, from the first
/// fan-out run of the same backend with the same config (settings, memory
/// budget) that measured the month's batch count with both kinds of GET: a
/// figure of other settings would not be this design's.
pub(super) fn month_lookup(
    fanouts: &[(String, &FanOutRun)],
    setup: &StoreSetup,
) -> Option<MonthLookup> {
    fanouts
        .iter()
        .filter(|(_, r)| r.backend == setup.backend && r.config == setup.config)
        .find_map(|(label, r)| {
            let c = r.checkpoints.iter().find(|c| c.batches == MONTH_BATCHES)?;
            let (f, m) = (&c.passes.steady_found, &c.passes.steady_missing);
            Some(MonthLookup {
                found_p99_us: f.latency.as_ref()?.p99_us,
                missing_p99_us: Some(m.latency.as_ref()?.p99_us),
                probes: f.probes_per_get,
                source: label.clone(),
                batch: MONTH_BATCHES,
            })
        })
}

/// The worse (higher worst p99) of two measurements of a design's lookups
/// at the month, or the one there is.
pub(super) fn worse(a: Option<MonthLookup>, b: Option<MonthLookup>) -> Option<MonthLookup> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.worst_us() > a.worst_us() { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// How a candidate stands against the bound.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Standing {
    /// The store is not one the bound applies to.
    NotApplied,
    /// No fan-out run measured the design at the month's count.
    NotMeasured,
    /// Measured within the bound.
    Within(MonthLookup),
    /// Measured over it: not recommended.
    Over(MonthLookup),
}

impl Standing {
    /// Weighs `lookup` (for a store the bound applies to) against `bound_us`.
    pub(super) fn of(applies: bool, lookup: Option<MonthLookup>, bound_us: f64) -> Self {
        match (applies, lookup) {
            (false, _) => Self::NotApplied,
            (true, None) => Self::NotMeasured,
            (true, Some(l)) if l.worst_us() <= bound_us => Self::Within(l),
            (true, Some(l)) => Self::Over(l),
        }
    }

    /// The answer table's cell.
    pub(super) fn cell(&self) -> String {
        match self {
            Self::NotApplied => "n/a".into(),
            Self::NotMeasured => "not measured".into(),
            Self::Within(l) | Self::Over(l) => l.text(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(found: f64, missing: f64) -> MonthLookup {
        MonthLookup {
            found_p99_us: found,
            missing_p99_us: Some(missing),
            probes: None,
            source: "f/x".into(),
            batch: MONTH_BATCHES,
        }
    }

    #[test]
    fn the_worse_of_found_and_missing_meets_the_bound() {
        assert_eq!(
            Standing::of(false, Some(l(1.0, 1.0)), 10.0),
            Standing::NotApplied
        );
        assert_eq!(Standing::of(true, None, 10.0), Standing::NotMeasured);
        assert_eq!(
            Standing::of(true, Some(l(9.0, 10.0)), 10.0),
            Standing::Within(l(9.0, 10.0))
        );
        assert_eq!(
            Standing::of(true, Some(l(2.0, 11.0)), 10.0),
            Standing::Over(l(2.0, 11.0))
        );
        assert_eq!(Standing::Over(l(2500.0, 11000.0)).cell(), "2.5 / 11.0 ms");
        // A month run's lookups: existing keys only, and said so.
        let existing = MonthLookup {
            missing_p99_us: None,
            ..l(12_000.0, 0.0)
        };
        assert_eq!(existing.worst_us(), 12_000.0);
        assert_eq!(existing.text(), "12.0 ms (existing keys)");
        assert!(matches!(
            Standing::of(true, Some(existing.clone()), 10_000.0),
            Standing::Over(_)
        ));
        // A fan-out within the bound does not hide a month over it.
        assert_eq!(
            worse(Some(l(5_000.0, 4_000.0)), Some(existing.clone())),
            Some(existing.clone())
        );
        assert_eq!(
            worse(Some(l(15_000.0, 4_000.0)), Some(existing.clone())),
            Some(l(15_000.0, 4_000.0))
        );
        assert_eq!(worse(None, Some(existing.clone())), Some(existing));
        assert_eq!(worse(None, None), None);
    }
}

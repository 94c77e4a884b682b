//! The statistics ledgerbench's verdicts rest on, in one place with one
//! quantile definition: medians and percentiles, the normal distribution,
//! the exact signed-rank test and Hodges-Lehmann estimate (`ledgerbench
//! ab`, the compaction-debt rule), trend tests for series sampled over a
//! run (Mann-Kendall with Hamed and Rao's correction, Theil-Sen), change
//! points (PELT), the drift verdict built on them with its trials, and the
//! fits of a workload's distributions from a trace (value sizes, access
//! skew, key-range hotness).
//!
//! Each is checked against an independent implementation (scipy,
//! pymannkendall, ruptures): `scripts/golden-stats.py` computed the
//! vectors in `fixtures/stats/`, and `tests/golden.rs` holds this crate to
//! them.

pub mod changepoint;
pub mod drift;
pub mod fit;
pub mod normal;
pub mod quantile;
pub mod rank;
pub mod trend;
pub mod trials;

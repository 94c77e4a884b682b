//! Seeded, position-addressed workload generators.
//!
//! Every key and value is a pure function of (seed, position), so a run
//! never holds its data set in memory and any value read back can be
//! regenerated and checked.

pub mod shape;
pub mod stellar;

//! Crash testing: the batches a crashed writer commits, what a recovered
//! store must hold, and the results of many crash cycles.
//!
//! A worker process commits numbered batches and acknowledges each one; a
//! supervisor kills it (kill -9, or a simulated power cut) at a random
//! point, then a fresh process reopens the store and [`verify`] checks it
//! against what was acknowledged: every batch the durability level promises
//! is there byte for byte, no batch is partly there, and what is there is a
//! prefix of the commit order. Every key and value is regenerated from
//! (seed, store, batch, index), so nothing is kept in memory but counts.

pub mod shape;
mod verify;

pub use ledgerbench_results::crash::{CrashResults, CrashRun, CrashSummary, Cycle};
pub use shape::{CrashShape, KeyKind, StoreShape};
pub use verify::{Recovered, verify};

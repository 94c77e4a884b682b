//! Seeded, position-addressed workload generators: Stellar ledger
//! ingestion (with the shape of real ledgers, for calibration) and the
//! generated operation streams (YCSB, Solana blockstore, TTL blobs,
//! account state).
//!
//! Every key and value is a pure function of (seed, position), so a run
//! never holds its data set in memory and any value read back can be
//! regenerated and checked.

pub mod accounts;
pub mod blobs;
mod generated;
pub mod shape;
pub mod solana;
pub mod stellar;
pub mod synth;
pub mod ycsb;
pub mod zipf;

pub use generated::{GenError, NAMES, by_name, live_bytes, load_mark, split_of, threads, timed};

//! The `KvBackend` trait family shared by every ledgerbench backend, driver and meter.
//!
//! Dependency rule: this crate names no storage engine and links no native
//! library. Backends depend on it, never the other way round, so the driver,
//! workloads and reports build without compiling RocksDB or MDBX.

mod batch;
mod error;
pub mod fsutil;
pub mod quantile;
pub mod ranges;
mod stats;
mod store;
mod tuning;

pub use batch::{Batch, BatchOp, Len};
pub use error::{Error, Op, Result};
pub use ranges::RangeDelete;
pub use stats::{DiskUsage, EngineStats, PageOps, counter_delta};
pub use store::{
    Capabilities, CrashKind, Durability, KvBackend, KvStore, UnknownDurability, WriterModel,
};
pub use tuning::{ReadPath, Tuning};

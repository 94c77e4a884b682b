//! The `KvBackend` trait family shared by every ledgerbench backend, driver and meter.
//!
//! Dependency rule: this crate names no storage engine and links no native
//! library. Backends depend on it, never the other way round, so the driver,
//! workloads and reports build without compiling RocksDB or MDBX.

mod attributed;
mod batch;
mod error;
pub mod fsutil;
pub mod heap;
pub use ledgerbench_stats::quantile;
pub mod ranges;
mod stats;
mod store;
mod tuning;

pub use attributed::Attributed;
pub use batch::{Batch, BatchOp, Len};
pub use error::{Error, Op, Result};
pub use ranges::RangeDelete;
pub use stats::{DiskUsage, EngineStats, PageOps, counter_delta};
pub use store::{
    CallPath, Capabilities, CrashKind, Durability, KvBackend, KvStore, UnknownDurability,
    WriterModel,
};
pub use tuning::{ReadPath, Tuning};

/// Lower-case hex of `b` (digests, secrets and keys in messages).
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Like `eprintln!`, but a standard error whose reader went away (`2>&1 |
/// head`) is ignored instead of panicking: a progress line or a warning is
/// worth less than the run it describes, and a panic on a helper thread of
/// a scope would leave the run waiting forever.
#[macro_export]
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

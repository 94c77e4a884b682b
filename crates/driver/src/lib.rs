//! Runs workloads against stores and turns what happened into results.
//!
//! The driver knows stores only through `ledgerbench_core::KvStore`; the CLI
//! decides which engines those are. Results are data first: every report is
//! rendered from the files this crate writes, whose schema is the
//! `ledgerbench-results` crate (re-exported here as `results`).

pub use ledgerbench_results as results;

pub mod capacity;
pub mod crash;
pub mod env;
pub mod fanout;
pub mod heartbeat;
pub mod interrupt;
pub mod micro;
pub mod observe;
pub mod ops;
pub mod pointreads;
pub mod rundir;
mod schedule;
pub mod segment;
pub mod stellar;
pub mod timefmt;
pub mod trie;

/// Errors of a run.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// A store operation failed.
    #[error("store `{store}`: {source}")]
    Store {
        /// Store name (`ledgers`, `txdata`, ...).
        store: String,
        /// The backend's error.
        #[source]
        source: ledgerbench_core::Error,
    },
    /// A filesystem operation of the harness failed (results, run dir).
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// Path involved.
        path: std::path::PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A store's device meter failed.
    #[error("device meter of store `{store}`: {source}")]
    Meter {
        /// Store name.
        store: String,
        /// The meter's error.
        #[source]
        source: ledgerbench_meter::MeterError,
    },
    /// The run's configuration is wrong.
    #[error("{0}")]
    Config(String),
    /// A value read back differs from what was written.
    #[error("verification failed: {0}")]
    Verify(String),
    /// A generator thread panicked or hung up.
    #[error("generator thread failed: {0}")]
    Generator(String),
    /// A guard ended the run before it could fail worse (a soak's disk or
    /// memory about to run out); what it measured is kept.
    #[error("stopped: {0}")]
    Stopped(String),
}

impl From<ledgerbench_results::InvalidConfig> for DriverError {
    fn from(e: ledgerbench_results::InvalidConfig) -> Self {
        DriverError::Config(e.0)
    }
}

impl DriverError {
    /// True when the disk or a store's size cap ran out.
    pub fn is_full(&self) -> bool {
        match self {
            DriverError::Store { source, .. } => source.is_full(),
            DriverError::Io { source, .. } => source.raw_os_error() == Some(libc::ENOSPC),
            _ => false,
        }
    }
}

//! Reports, comparisons and exports, rendered from ledgerbench results files
//! alone: nothing here runs a benchmark.

pub mod ab;
pub mod bencher;
pub mod compare;
pub mod crash;
pub mod crash_matrix;
mod csv_out;
pub mod doc;
pub mod export;
pub mod html;
pub mod metrics;
pub mod model;
pub mod render;
pub mod soak;
pub mod svg;
pub mod table;

use std::path::PathBuf;

/// What can go wrong reading results or writing a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A file is not a results file this ledgerbench reads.
    #[error("{}: {why}", path.display())]
    BadResults {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The results compared differ in what was measured.
    #[error("refusing to compare results that differ in what was measured (pass --force to compare anyway):\n  {}", .0.join("\n  "))]
    Incomparable(Vec<String>),
    /// The arguments make no sense.
    #[error("{0}")]
    Usage(String),
}

use std::fmt;
use std::path::PathBuf;

/// Result of every fallible ledgerbench storage call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The operation that failed, named in every [`Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Opening or creating a store.
    Open,
    /// A point read.
    Get,
    /// Committing a write batch.
    Write,
    /// Ordered iteration.
    Iterate,
    /// Flushing buffered writes to the store's files.
    Flush,
    /// A manual full-range compaction.
    Compact,
    /// Reading engine statistics.
    Stats,
    /// Measuring the store's on-disk size.
    DiskUsage,
    /// Closing the store.
    Close,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Open => "open",
            Op::Get => "get",
            Op::Write => "write batch",
            Op::Iterate => "iterate",
            Op::Flush => "flush",
            Op::Compact => "compact",
            Op::Stats => "read statistics",
            Op::DiskUsage => "measure disk usage",
            Op::Close => "close",
        })
    }
}

/// One error type for every backend: it names the operation, the store's
/// path, the engine and the engine's own message, and where it can, what to
/// change.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The engine itself reported an error.
    #[error("{engine}: {op} failed on {}: {message}", path.display())]
    Engine {
        /// Engine name, e.g. `rocksdb`.
        engine: &'static str,
        /// Operation that failed.
        op: Op,
        /// Store directory.
        path: PathBuf,
        /// The engine's own error text (with its native code where it has one).
        message: String,
    },
    /// The store reached a configured size limit.
    #[error(
        "{engine}: {op} failed on {}: the store is full ({message}); raise `{setting}` in the backend config",
        path.display()
    )]
    Full {
        /// Engine name.
        engine: &'static str,
        /// Operation that failed.
        op: Op,
        /// Store directory.
        path: PathBuf,
        /// The config setting that bounds the store's size.
        setting: &'static str,
        /// The engine's own error text.
        message: String,
    },
    /// The engine does not offer this operation (see [`crate::Capabilities`]).
    #[error("{engine}: {op} is not supported by this engine")]
    Unsupported {
        /// Engine name.
        engine: &'static str,
        /// Operation asked for.
        op: Op,
    },
    /// The store path cannot be used (a file, a foreign store, not writable...).
    #[error("{engine}: cannot {op} {}: {reason}", path.display())]
    BadPath {
        /// Engine name.
        engine: &'static str,
        /// Operation that failed.
        op: Op,
        /// Offending path.
        path: PathBuf,
        /// What is wrong and what to do about it.
        reason: String,
    },
    /// A filesystem call failed.
    #[error("{engine}: {op} failed on {}: {source}", path.display())]
    Io {
        /// Engine name.
        engine: &'static str,
        /// Operation that failed.
        op: Op,
        /// Path the call was made on.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A key longer than the engine can store.
    #[error(
        "{engine}: {op} failed on {}: a key of {len} bytes is longer than the engine's limit of {max} bytes; use shorter keys (hash long ones)",
        path.display()
    )]
    KeyTooLong {
        /// Engine name.
        engine: &'static str,
        /// Operation that failed.
        op: Op,
        /// Store directory.
        path: PathBuf,
        /// Length of the key, bytes.
        len: usize,
        /// The engine's limit, bytes.
        max: usize,
    },
    /// A config value is out of range.
    #[error("{engine}: invalid config: {message}")]
    Config {
        /// Engine name.
        engine: &'static str,
        /// What is wrong and the accepted values.
        message: String,
    },
}

impl Error {
    /// An engine's own failure of `op` on the store at `path`, in its words.
    pub fn engine(
        engine: &'static str,
        op: Op,
        path: &std::path::Path,
        message: impl std::fmt::Display,
    ) -> Self {
        Error::Engine {
            engine,
            op,
            path: path.to_path_buf(),
            message: message.to_string(),
        }
    }

    /// A failed write's error when its `key` is longer than the engine's
    /// `max`: engines check only after a write failed, so the hot path pays nothing.
    pub fn key_too_long(
        engine: &'static str,
        path: &std::path::Path,
        key: &[u8],
        max: usize,
    ) -> Option<Self> {
        (key.len() > max).then(|| Error::KeyTooLong {
            engine,
            op: Op::Write,
            path: path.to_path_buf(),
            len: key.len(),
            max,
        })
    }

    /// The operation this error came from, where it names one.
    pub fn op(&self) -> Option<Op> {
        match self {
            Error::Engine { op, .. }
            | Error::Full { op, .. }
            | Error::Unsupported { op, .. }
            | Error::BadPath { op, .. }
            | Error::Io { op, .. }
            | Error::KeyTooLong { op, .. } => Some(*op),
            Error::Config { .. } => None,
        }
    }

    /// True when the error says the store ran out of space (a map size or
    /// geometry cap, or a full disk).
    pub fn is_full(&self) -> bool {
        match self {
            Error::Full { .. } => true,
            Error::Io { source, .. } => source.raw_os_error() == Some(libc::ENOSPC),
            Error::Engine { message, .. } => {
                let m = message.to_ascii_lowercase();
                m.contains("no space left") || m.contains("enospc")
            }
            _ => false,
        }
    }
}

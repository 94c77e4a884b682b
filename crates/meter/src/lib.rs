//! Operating-system meters, each saying where its number came from.
//!
//! - [`proc_io`]: the process's own I/O counters (`/proc/self/io`); they miss
//!   writeback of mmap'd pages, which is how LMDB and MDBX write.
//! - [`rusage`]: CPU time, peak RSS and page faults (`getrusage`); major
//!   faults are the reads of an mmap engine.
//! - [`blockdev`]: a block device's request counters (`/sys/block/*/stat`):
//!   what really reached the disk, whoever issued it.
//! - [`loopdev`]: a private ext4 image on a loop device, so a block device's
//!   counters belong to one store alone.
//! - [`cgroup`]: a memory cgroup (v1 or v2) capping page cache and heap together.
//! - [`memory`]: the harness's own heap (a counting allocator) and resident
//!   memory split into anonymous and file-mapped pages.
//! - [`mounts`]: the mount table.
//! - [`clean`]: finds and removes what a killed ledgerbench left behind.

pub mod blockdev;
pub mod cgroup;
pub mod clean;
pub mod fio;
pub mod loopdev;
pub mod memory;
pub mod mounts;
pub mod proc_io;
pub mod rusage;

/// Errors of the meters.
#[derive(Debug, thiserror::Error)]
pub enum MeterError {
    /// A meter is not available on this machine; the text says why.
    #[error("{meter} unavailable: {why}")]
    Unavailable {
        /// Meter name.
        meter: &'static str,
        /// Why, and what would make it available.
        why: String,
    },
    /// A file read or write failed.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// Path.
        path: String,
        /// OS error.
        #[source]
        source: std::io::Error,
    },
    /// A helper command failed.
    #[error("`{cmd}` failed: {stderr}")]
    Command {
        /// The command line.
        cmd: String,
        /// What it printed.
        stderr: String,
    },
    /// A counter file did not have the expected shape.
    #[error("cannot parse {path}: {why}")]
    Parse {
        /// Path.
        path: String,
        /// What was wrong.
        why: String,
    },
}

/// Result of meter calls.
pub type Result<T> = std::result::Result<T, MeterError>;

pub(crate) fn read(path: &str) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| MeterError::Io {
        what: "reading",
        path: path.to_string(),
        source,
    })
}

pub(crate) fn write(path: &str, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|source| MeterError::Io {
        what: "writing",
        path: path.to_string(),
        source,
    })
}

/// True when the process runs as root (loop devices and cgroups need it).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

pub(crate) fn run(cmd: &str, args: &[&str]) -> Result<String> {
    let line = format!("{cmd} {}", args.join(" "));
    let out = std::process::Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| MeterError::Command {
            cmd: line.clone(),
            stderr: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(MeterError::Command {
            cmd: line,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The memory page size, bytes (`None` when the system cannot say).
pub fn page_size() -> Option<u64> {
    // SAFETY: sysconf reads a constant of the running system.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(p).ok().filter(|&p| p > 0)
}

//! A memory cgroup (v1) around this process: caps page cache and heap
//! together, so a data set larger than the limit really is read from disk.

use std::path::PathBuf;

use crate::{MeterError, Result, is_root, read, write};

const ROOT: &str = "/sys/fs/cgroup/memory";

/// This process, placed in a new memory cgroup with a limit.
#[derive(Debug)]
pub struct MemoryLimit {
    dir: PathBuf,
    limit: u64,
}

impl MemoryLimit {
    /// Says why a memory cgroup cannot be used here, if it cannot.
    pub fn available() -> Result<()> {
        if !is_root() {
            return Err(MeterError::Unavailable {
                meter: "memory limit",
                why: "needs root to create a memory cgroup".into(),
            });
        }
        if !std::path::Path::new(ROOT)
            .join("memory.limit_in_bytes")
            .exists()
        {
            return Err(MeterError::Unavailable {
                meter: "memory limit",
                why: format!("no cgroup v1 memory controller at {ROOT}"),
            });
        }
        Ok(())
    }

    /// Creates a cgroup limited to `bytes` and moves this whole process into it.
    pub fn enter(bytes: u64) -> Result<Self> {
        Self::available()?;
        let dir = PathBuf::from(ROOT).join(format!("kvbench-{}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|source| MeterError::Io {
            what: "creating cgroup",
            path: dir.display().to_string(),
            source,
        })?;
        let g = MemoryLimit { dir, limit: bytes };
        g.file_write("memory.limit_in_bytes", &bytes.to_string())?;
        g.file_write("cgroup.procs", &std::process::id().to_string())?;
        Ok(g)
    }

    fn file_write(&self, name: &str, value: &str) -> Result<()> {
        write(&self.dir.join(name).display().to_string(), value)
    }

    /// The limit, bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Peak memory charged to the cgroup (page cache included), bytes.
    pub fn max_usage(&self) -> Result<u64> {
        let p = self
            .dir
            .join("memory.max_usage_in_bytes")
            .display()
            .to_string();
        read(&p)?.trim().parse().map_err(|_| MeterError::Parse {
            path: p,
            why: "not a number".into(),
        })
    }
}

impl Drop for MemoryLimit {
    fn drop(&mut self) {
        // Back to the root group, then remove ours (its page-cache charges
        // move to the parent).
        let _ = write(
            &format!("{ROOT}/cgroup.procs"),
            &std::process::id().to_string(),
        );
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Writes back dirty pages and drops the page cache, so the next reads come
/// from the device (needs root).
pub fn drop_caches() -> Result<()> {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    write("/proc/sys/vm/drop_caches", "3")
}

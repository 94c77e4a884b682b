//! A memory cgroup capping page cache and heap together, so a data set
//! larger than the limit really is read from disk. cgroup v1 (the
//! `memory` hierarchy) and v2 (the unified hierarchy's `memory.max`).

use std::path::{Path, PathBuf};

use crate::{MeterError, Result, is_root, read, write};

const V1_ROOT: &str = "/sys/fs/cgroup/memory";
const V2_ROOT: &str = "/sys/fs/cgroup";

/// Every cgroup ledgerbench makes is named `ledgerbench-PID` or `ledgerbench-PID-TAG`
/// after the process that made it, so `ledgerbench clean` can tell its own.
pub const PREFIX: &str = "ledgerbench-";

/// Which cgroup interface this machine offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V1,
    V2,
}

impl Version {
    fn detect() -> Option<Self> {
        if Path::new(V1_ROOT).join("memory.limit_in_bytes").exists() {
            Some(Version::V1)
        } else if std::fs::read_to_string(Path::new(V2_ROOT).join("cgroup.controllers"))
            .is_ok_and(|c| c.split_whitespace().any(|w| w == "memory"))
        {
            Some(Version::V2)
        } else {
            None
        }
    }

    fn root(self) -> &'static str {
        match self {
            Version::V1 => V1_ROOT,
            Version::V2 => V2_ROOT,
        }
    }

    fn limit_file(self) -> &'static str {
        match self {
            Version::V1 => "memory.limit_in_bytes",
            Version::V2 => "memory.max",
        }
    }
}

/// A memory cgroup with a limit, removed on drop.
#[derive(Debug)]
pub struct MemoryLimit {
    dir: PathBuf,
    limit: u64,
    version: Version,
}

/// The roots under which ledgerbench makes cgroups on this machine.
pub fn roots() -> Vec<PathBuf> {
    [V1_ROOT, V2_ROOT]
        .into_iter()
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .collect()
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
        Self::version().map(|_| ())
    }

    fn version() -> Result<Version> {
        Version::detect().ok_or_else(|| MeterError::Unavailable {
            meter: "memory limit",
            why: format!(
                "no memory controller: neither cgroup v1 at {V1_ROOT} nor cgroup v2 with `memory` in {V2_ROOT}/cgroup.controllers"
            ),
        })
    }

    /// Creates a cgroup limited to `bytes` and moves this whole process into it.
    pub fn enter(bytes: u64) -> Result<Self> {
        let g = Self::make(bytes, format!("{PREFIX}{}", std::process::id()))?;
        g.add(std::process::id())?;
        Ok(g)
    }

    /// Creates a cgroup limited to `bytes` named after this process and
    /// `tag`, with no process in it yet: a supervisor puts its workers in
    /// with [`MemoryLimit::add`] and stays outside the limit itself.
    pub fn create(bytes: u64, tag: &str) -> Result<Self> {
        Self::make(bytes, format!("{PREFIX}{}-{tag}", std::process::id()))
    }

    fn make(bytes: u64, name: String) -> Result<Self> {
        Self::available()?;
        let version = Self::version()?;
        if version == Version::V2 {
            // Children get a memory controller only when the parent hands it down.
            let ctl = format!("{V2_ROOT}/cgroup.subtree_control");
            if !read(&ctl)?.split_whitespace().any(|w| w == "memory") {
                write(&ctl, "+memory")?;
            }
        }
        let dir = PathBuf::from(version.root()).join(name);
        std::fs::create_dir(&dir).map_err(|source| MeterError::Io {
            what: "creating cgroup",
            path: dir.display().to_string(),
            source,
        })?;
        let g = MemoryLimit {
            dir,
            limit: bytes,
            version,
        };
        g.file_write(version.limit_file(), &bytes.to_string())?;
        if version == Version::V2 {
            // No swap here, but where there is, the limit must not leak into it.
            let _ = g.file_write("memory.swap.max", "0");
        }
        Ok(g)
    }

    /// The file a process writes `0` to to enter the cgroup itself (how a
    /// child joins between fork and exec, before it can open anything).
    pub fn procs_file(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// Moves process `pid` into the cgroup.
    pub fn add(&self, pid: u32) -> Result<()> {
        self.file_write("cgroup.procs", &pid.to_string())
    }

    fn file_write(&self, name: &str, value: &str) -> Result<()> {
        write(&self.dir.join(name).display().to_string(), value)
    }

    /// The limit, bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Peak memory charged to the cgroup (page cache included), bytes. On
    /// cgroup v2 this needs `memory.peak` (Linux 5.19 and later).
    pub fn max_usage(&self) -> Result<u64> {
        let name = match self.version {
            Version::V1 => "memory.max_usage_in_bytes",
            Version::V2 => "memory.peak",
        };
        let p = self.dir.join(name).display().to_string();
        read(&p)?.trim().parse().map_err(|_| MeterError::Parse {
            path: p,
            why: "not a number".into(),
        })
    }

    /// Processes the kernel's OOM killer ended in this cgroup, where the
    /// kernel reports it (`oom_kill` in memory.oom_control or memory.events).
    pub fn oom_kills(&self) -> Option<u64> {
        snapshot(&self.dir).oom_kills
    }
}

impl Drop for MemoryLimit {
    fn drop(&mut self) {
        // Back to the root group (if this process is in ours), then remove
        // ours; its page-cache charges move to the parent.
        let root = self.version.root();
        let mine = std::fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
        let me = std::process::id().to_string();
        if mine.lines().any(|l| l.trim() == me) {
            let _ = write(&format!("{root}/cgroup.procs"), &me);
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// What a memory cgroup's files say, v1 or v2; each figure absent where
/// the kernel does not give it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// The limit, bytes.
    pub limit: Option<u64>,
    /// Peak usage (page cache included), bytes.
    pub peak: Option<u64>,
    /// Processes the OOM killer ended in it.
    pub oom_kills: Option<u64>,
}

/// Reads the cgroup at `dir`, whichever version made it (the supervisor
/// reads its dead worker's cgroup this way before removing it).
pub fn snapshot(dir: &Path) -> Snapshot {
    let num = |names: [&str; 2]| {
        names.iter().find_map(|n| {
            std::fs::read_to_string(dir.join(n))
                .ok()?
                .trim()
                .parse()
                .ok()
        })
    };
    let events = ["memory.oom_control", "memory.events"]
        .iter()
        .find_map(|n| std::fs::read_to_string(dir.join(n)).ok())
        .unwrap_or_default();
    Snapshot {
        limit: num(["memory.limit_in_bytes", "memory.max"]),
        peak: num(["memory.max_usage_in_bytes", "memory.peak"]),
        oom_kills: events
            .lines()
            .find_map(|l| l.strip_prefix("oom_kill "))
            .and_then(|n| n.trim().parse().ok()),
    }
}

/// Writes back dirty pages and drops the page cache, so the next reads come
/// from the device (needs root).
pub fn drop_caches() -> Result<()> {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    write("/proc/sys/vm/drop_caches", "3")
}

/// What the memory cgroup this process is in holds, when it is one of
/// ledgerbench's (a limited run); absent otherwise (the root cgroup's figures
/// are the whole machine's, not the run's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Charged {
    /// Bytes charged to the cgroup (heap, page cache, kernel memory).
    pub usage: u64,
    /// Page cache charged to it (v1 `cache`, v2 `file`): store files read
    /// or written, mmap'd store pages included.
    pub page_cache: u64,
}

/// The [`Charged`] figures of this process's own memory cgroup.
pub fn own_charged() -> Option<Charged> {
    let version = Version::detect()?;
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = own.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let wanted = match version {
            Version::V1 => controllers.split(',').any(|c| c == "memory"),
            Version::V2 => controllers.is_empty(),
        };
        wanted.then(|| path.trim_start_matches('/').to_string())
    })?;
    if !rel
        .rsplit('/')
        .next()
        .is_some_and(|n| n.starts_with(PREFIX))
    {
        return None;
    }
    let dir = Path::new(version.root()).join(rel);
    let usage_file = match version {
        Version::V1 => "memory.usage_in_bytes",
        Version::V2 => "memory.current",
    };
    let text = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    let usage = text(usage_file)?.trim().parse().ok()?;
    let stat = text("memory.stat")?;
    let key = match version {
        Version::V1 => "cache ",
        Version::V2 => "file ",
    };
    let page_cache = stat
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|n| n.trim().parse().ok())?;
    Some(Charged { usage, page_cache })
}

#[cfg(test)]
mod charged_tests {
    /// Set in the child this test starts inside a cgroup.
    const CHILD: &str = "LEDGERBENCH_CGROUP_TEST_CHILD";

    #[test]
    #[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
    fn a_limited_process_sees_its_cgroup_and_others_see_none() {
        if std::env::var_os(CHILD).is_some() {
            return inside_a_limit();
        }
        // Outside a ledgerbench cgroup there is nothing of the run's to report.
        assert_eq!(super::own_charged(), None, "test runner is not limited");
        if !ledgerbench_testkit::can_run(super::MemoryLimit::available()) {
            return;
        }
        // The same test again, in a child process it puts in a cgroup.
        let child = std::process::Command::new(std::env::current_exe().expect("exe"))
            .args([
                "--exact",
                "cgroup::charged_tests::a_limited_process_sees_its_cgroup_and_others_see_none",
                "--include-ignored",
                "--nocapture",
            ])
            .env(CHILD, "1")
            .output()
            .expect("child runs");
        let out = String::from_utf8_lossy(&child.stdout);
        assert!(
            child.status.success() && out.contains("charged ok"),
            "{out}"
        );
    }

    fn inside_a_limit() {
        let _g = super::MemoryLimit::enter(256 << 20).expect("enter");
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("f"), vec![1u8; 8 << 20]).expect("write");
        let c = super::own_charged().expect("inside a ledgerbench cgroup");
        assert!(c.page_cache >= 4 << 20 && c.usage >= c.page_cache, "{c:?}");
        println!("charged ok");
    }
}

//! Where a run ran: the machine, the data directory's mount, the build.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

pub use ledgerbench_results::env::{EnvInfo, MountInfo};
use ledgerbench_results::{RunHeader, SCHEMA_VERSION};

/// Git commit of this build (`-dirty` when its tree had changes).
pub const GIT_COMMIT: &str = env!("LEDGERBENCH_GIT");

/// The header of a results file for a run of `workload` starting now, with
/// its output in `out` (which must exist).
pub fn header(
    workload: &str,
    seed: u64,
    out: &Path,
    durability: Option<ledgerbench_core::Durability>,
) -> RunHeader {
    RunHeader {
        schema_version: SCHEMA_VERSION,
        ledgerbench_version: env!("CARGO_PKG_VERSION").to_string(),
        workload: workload.to_string(),
        seed,
        started_at: crate::timefmt::now_rfc3339(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        env: capture(out),
        durability,
        cell: None,
        scheduler: ledgerbench_results::Scheduled::from_env(|k| std::env::var(k).ok()),
    }
}

/// Reads the environment of this process; `data_dir` must exist.
pub fn capture(data_dir: &Path) -> EnvInfo {
    EnvInfo {
        host: fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|s| s.trim().to_string()),
        cpu_model: fs::read_to_string("/proc/cpuinfo").ok().and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        }),
        cores: std::thread::available_parallelism().map(|n| n.get()).ok(),
        ram_bytes: fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
                .map(|kb| kb * 1024)
        }),
        kernel: fs::read_to_string("/proc/sys/kernel/osrelease")
            .ok()
            .map(|s| s.trim().to_string()),
        data_fs: mount_of(data_dir),
        rustc: env!("LEDGERBENCH_RUSTC").to_string(),
        git_commit: GIT_COMMIT.to_string(),
        build_profile: env!("LEDGERBENCH_PROFILE").to_string(),
        debug_assertions: cfg!(debug_assertions),
        engine_versions: BTreeMap::new(),
    }
}

/// The mount holding `path`: the longest mount point that prefixes it.
pub fn mount_of(path: &Path) -> Option<MountInfo> {
    let path = fs::canonicalize(path).ok()?;
    let mut best: Option<MountInfo> = None;
    for m in ledgerbench_meter::mounts::table() {
        if path.starts_with(&m.mount_point)
            && best
                .as_ref()
                .is_none_or(|b| m.mount_point.len() >= b.mount_point.len())
        {
            best = Some(m);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_this_machine() {
        let e = capture(Path::new("/tmp"));
        assert!(e.cores.is_some_and(|c| c >= 1));
        assert!(e.ram_bytes.is_some_and(|r| r > 1 << 28));
        assert!(e.rustc.starts_with("rustc "), "{}", e.rustc);
        let fs = e.data_fs.expect("/tmp is on some mount");
        assert!(!fs.fs_type.is_empty() && fs.mount_point.starts_with('/'));
    }
}

//! The environment a result was measured in.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Where and how a run was measured. Fields the harness could not read are absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EnvInfo {
    /// Host name (the machine dimension when results of several machines merge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// CPU model name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    /// Logical CPUs available to the process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cores: Option<usize>,
    /// Total RAM, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ram_bytes: Option<u64>,
    /// Kernel release.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// Filesystem of the data directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_fs: Option<MountInfo>,
    /// `rustc --version` of the build.
    pub rustc: String,
    /// Git commit of the build (`-dirty` when the tree had changes).
    pub git_commit: String,
    /// Cargo profile of the build (`release`, `debug`).
    pub build_profile: String,
    /// True when debug assertions were on: numbers from such a build mislead.
    pub debug_assertions: bool,
    /// Engine library versions by engine name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub engine_versions: BTreeMap<String, String>,
}

/// A mount, as `/proc/self/mountinfo` gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountInfo {
    /// Mount point.
    pub mount_point: String,
    /// Filesystem type (`ext4`, `xfs`, `tmpfs`...).
    pub fs_type: String,
    /// Device or source.
    pub source: String,
    /// Mount options, per-mount and per-superblock.
    pub options: String,
}

impl EnvInfo {
    /// Reads the environment; `data_dir` must exist.
    pub fn capture(data_dir: &Path) -> Self {
        Self {
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
            rustc: env!("KVBENCH_RUSTC").to_string(),
            git_commit: env!("KVBENCH_GIT").to_string(),
            build_profile: env!("KVBENCH_PROFILE").to_string(),
            debug_assertions: cfg!(debug_assertions),
            engine_versions: BTreeMap::new(),
        }
    }
}

/// The mount holding `path`: the longest mount point that prefixes it.
pub fn mount_of(path: &Path) -> Option<MountInfo> {
    let path = fs::canonicalize(path).ok()?;
    let info = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<MountInfo> = None;
    for line in info.lines() {
        // id parent major:minor root mount_point mount_opts [optional...] - fstype source super_opts
        let mut halves = line.splitn(2, " - ");
        let (left, right) = (halves.next()?, halves.next()?);
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        if l.len() < 6 || r.len() < 3 {
            continue;
        }
        let mp = l[4].replace("\\040", " ");
        if path.starts_with(&mp)
            && best
                .as_ref()
                .is_none_or(|b| mp.len() >= b.mount_point.len())
        {
            best = Some(MountInfo {
                mount_point: mp,
                fs_type: r[0].to_string(),
                source: r[1].to_string(),
                options: format!("{},{}", l[5], r[2]),
            });
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_this_machine() {
        let e = EnvInfo::capture(Path::new("/tmp"));
        assert!(e.cores.is_some_and(|c| c >= 1));
        assert!(e.ram_bytes.is_some_and(|r| r > 1 << 28));
        assert!(e.rustc.starts_with("rustc "), "{}", e.rustc);
        let fs = e.data_fs.expect("/tmp is on some mount");
        assert!(!fs.fs_type.is_empty() && fs.mount_point.starts_with('/'));
    }
}

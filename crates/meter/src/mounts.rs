//! This machine's mount table, as `/proc/self/mountinfo` gives it: one
//! parser for every caller (the data filesystem a result names, leftover
//! crash mounts, the mounts a crash worker drops from its namespace).

use serde::{Deserialize, Serialize};

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

/// The mounts this process sees, in the table's order (empty when
/// `/proc/self/mountinfo` cannot be read).
pub fn table() -> Vec<MountInfo> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    info.lines().filter_map(parse).collect()
}

/// One line: `ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTS [OPTIONAL...] - FSTYPE
/// SOURCE SUPER_OPTS`; spaces in the mount point are written `\040`.
fn parse(line: &str) -> Option<MountInfo> {
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    if l.len() < 6 || r.len() < 3 {
        return None;
    }
    Some(MountInfo {
        mount_point: l[4].replace("\\040", " "),
        fs_type: r[0].to_string(),
        source: r[1].to_string(),
        options: format!("{},{}", l[5], r[2]),
    })
}

/// The processes holding a file, working directory or mapping under
/// `mount`, as `pid N (name)` joined by commas, or `no process we can see`
/// (another mount namespace's copy of the mount holds it then).
pub fn holders(mount: &std::path::Path) -> String {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return "no process we can see".into();
    };
    let under = |p: &std::path::Path| p.starts_with(mount);
    let mut who = Vec::new();
    for e in procs.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let dir = e.path();
        let fds = std::fs::read_dir(dir.join("fd"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|f| std::fs::read_link(f.path()).ok());
        let cwd = std::fs::read_link(dir.join("cwd")).ok();
        let maps = std::fs::read_to_string(dir.join("maps")).unwrap_or_default();
        let mapped = maps
            .lines()
            .filter_map(|l| l.split_whitespace().nth(5))
            .any(|p| under(std::path::Path::new(p)));
        if mapped || fds.chain(cwd).any(|p| under(&p)) {
            let name = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
            who.push(format!("pid {pid} ({})", name.trim()));
        }
    }
    if who.is_empty() {
        "no process we can see".into()
    } else {
        who.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_with_optional_fields_and_a_space_in_its_mount_point() {
        let m = parse("36 35 98:0 / /mnt/my\\040disk rw,noatime master:1 shared:2 - ext4 /dev/loop3 rw,errors=continue")
            .expect("parsed");
        assert_eq!(m.mount_point, "/mnt/my disk");
        assert_eq!(
            (m.fs_type.as_str(), m.source.as_str()),
            ("ext4", "/dev/loop3")
        );
        assert_eq!(m.options, "rw,noatime,rw,errors=continue");
        assert!(parse("garbage").is_none());
        assert!(!table().is_empty(), "this process sees its root mount");
    }
}

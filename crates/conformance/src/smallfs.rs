//! A small private tmpfs for the full-disk cases, unmounted on drop, and
//! reaped by the next case when a killed test process could not drop it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The mount's source name, which marks the suite's mounts in /proc/mounts.
const SOURCE: &str = "ledgerbench-conformance";
/// Beside the mount point: the pid of the test process that mounted it.
const OWNER: &str = "ledgerbench-conformance.pid";

/// A private tmpfs, unmounted on drop.
pub(crate) struct SmallFs {
    /// The mount point.
    pub(crate) dir: PathBuf,
}

impl SmallFs {
    /// Mounts a `mib` MiB tmpfs on `dir`; `None` when mounting is not
    /// allowed here (not root).
    pub(crate) fn mount(dir: &Path, mib: u64) -> Option<Self> {
        reap_orphans();
        std::fs::create_dir_all(dir).ok()?;
        let parent = dir.parent()?;
        std::fs::write(parent.join(OWNER), std::process::id().to_string()).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), SOURCE])
            .arg(dir)
            .status()
            .ok()?
            .success();
        ok.then(|| SmallFs {
            dir: dir.to_path_buf(),
        })
    }

    /// Gives the filesystem `mib` MiB.
    pub(crate) fn grow(&self, mib: u64) {
        let _ = Command::new("mount")
            .args(["-o", &format!("remount,size={mib}m")])
            .arg(&self.dir)
            .status();
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        unmount(&self.dir);
    }
}

fn unmount(dir: &Path) {
    let _ = Command::new("umount").arg("-l").arg(dir).status();
}

/// Unmounts and removes the suite's mounts whose test process is gone (a
/// test killed before it could unmount). A mount without the owner file
/// beside it is not the suite's to touch.
fn reap_orphans() {
    let Ok(mounts) = std::fs::read_to_string("/proc/self/mounts") else {
        return;
    };
    for line in mounts.lines() {
        let mut f = line.split_whitespace();
        let (Some(SOURCE), Some(point)) = (f.next(), f.next()) else {
            continue;
        };
        let point = Path::new(point);
        let Some(parent) = point.parent() else {
            continue;
        };
        let owner = std::fs::read_to_string(parent.join(OWNER))
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok());
        let Some(pid) = owner else { continue };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        unmount(point);
        let _ = std::fs::remove_dir_all(parent);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mounted(dir: &Path) -> bool {
        let mounts = std::fs::read_to_string("/proc/self/mounts").expect("mounts");
        let dir = dir.to_str().expect("utf-8");
        mounts
            .lines()
            .any(|l| l.split_whitespace().nth(1) == Some(dir))
    }

    #[test]
    #[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
    fn a_dead_owners_mount_is_reaped_and_a_live_ones_kept() {
        if !ledgerbench_testkit::can_run(ledgerbench_testkit::root()) {
            return;
        }
        let t = tempfile::Builder::new()
            .prefix("ledgerbench-conf-")
            .tempdir()
            .expect("tempdir");
        let store = t.path().join("store");
        let fs = SmallFs::mount(&store, 1).expect("mounting a 1 MiB tmpfs as root");
        reap_orphans();
        assert!(mounted(&store), "the live owner's mount was reaped");
        // As if the mounting process had been killed: no process has this
        // pid (above the kernel's pid_max).
        std::fs::write(t.path().join(OWNER), "4194305").expect("owner");
        std::mem::forget(fs);
        reap_orphans();
        assert!(!mounted(&store), "a dead owner's mount was kept");
        assert!(!t.path().exists(), "its directory was kept");
    }
}

//! What a killed ledgerbench left behind (mounted loop devices, their images,
//! memory cgroups, crash filesystem mounts), found by ledgerbench's own
//! markers and removed only when the process that made it is gone.

use std::path::{Path, PathBuf};

use crate::loopdev::owner_marker;
use crate::{Result, run};

/// Something a ledgerbench process made and did not remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leftover {
    /// A loop device over a ledgerbench image, maybe still mounted.
    Loop {
        /// The device, e.g. `/dev/loop3`.
        device: String,
        /// Its backing image.
        image: PathBuf,
        /// Where it is mounted, if it is.
        mount: Option<PathBuf>,
        /// The process that made it.
        pid: u32,
    },
    /// A crash filesystem (FUSE) mount whose serving process is gone: its
    /// mount point answers "transport endpoint is not connected".
    CrashMount {
        /// Where it is mounted.
        mount: PathBuf,
        /// The process that served it.
        pid: u32,
    },
    /// A memory cgroup named after its maker.
    Cgroup {
        /// Its directory.
        dir: PathBuf,
        /// The process that made it.
        pid: u32,
    },
    /// A scratch directory on tmpfs (`/dev/shm/ledgerbench-*`, the timing
    /// gate's stores) holding an owner marker, whose maker is gone.
    Scratch {
        /// Its directory.
        dir: PathBuf,
        /// The process that made it.
        pid: u32,
    },
}

impl std::fmt::Display for Leftover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Leftover::Loop {
                device,
                image,
                mount,
                pid,
            } => {
                write!(
                    f,
                    "loop device {device} over {} (made by pid {pid}){}",
                    image.display(),
                    mount
                        .as_ref()
                        .map_or(String::new(), |m| format!(", mounted at {}", m.display()))
                )?;
                match image.ancestors().nth(3).filter(|_| checkpointed(image)) {
                    Some(run) => write!(
                        f,
                        "; the image stays for `ledgerbench run stellar --resume {}`",
                        run.display()
                    ),
                    None => Ok(()),
                }
            }
            Leftover::CrashMount { mount, pid } => write!(
                f,
                "crash filesystem mounted at {} (served by pid {pid})",
                mount.display()
            ),
            Leftover::Cgroup { dir, pid } => {
                write!(f, "memory cgroup {} (made by pid {pid})", dir.display())
            }
            Leftover::Scratch { dir, pid } => {
                write!(f, "scratch directory {} (made by pid {pid})", dir.display())
            }
        }
    }
}

/// Whether process `pid` runs (a zombie does not).
pub fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(pid as i32, 0) };
    let exists = rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    // A process that has exited but not been reaped yet (a zombie: a killed
    // supervisor's worker until init collects it) still answers signal 0,
    // yet will never remove what it made.
    exists && !exited(pid)
}

/// True when `/proc` says `pid` has exited (state Z or X) but is not reaped.
fn exited(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the command name, which is in parentheses and may
    // itself hold spaces or parentheses.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .is_some_and(|state| state == "Z" || state == "X")
}

/// The name this tool had before it became ledgerbench: leftovers of a
/// killed `kvbench` (its cgroups, its image markers) are still its own.
const OLD_NAME: &str = "kvbench";

/// The owner marker a `kvbench` of before the rename wrote beside an image.
fn old_marker(image: &Path) -> PathBuf {
    PathBuf::from(format!("{}.{OLD_NAME}-owner", image.display()))
}

fn owner_pid(image: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(owner_marker(image))
        .or_else(|_| std::fs::read_to_string(old_marker(image)))
        .ok()?;
    let text = text.trim();
    text.strip_prefix("ledgerbench pid=")
        .or_else(|| text.strip_prefix(&format!("{OLD_NAME} pid=")))?
        .parse()
        .ok()
}

/// The maker's pid in the label ledgerbench gives the ext4 filesystem of
/// each image (`lb-PID`), read from the device's superblock.
fn label_pid(device: &str) -> Option<u32> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(device).ok()?;
    let mut sb = [0u8; SUPERBLOCK_BYTES];
    f.seek(SeekFrom::Start(1024)).ok()?;
    f.read_exact(&mut sb).ok()?;
    pid_in_superblock(&sb)
}

/// The ext4 superblock up to the end of its volume name.
const SUPERBLOCK_BYTES: usize = 0x88;

/// `lb-PID` from an ext4 superblock's volume name (at 0x78, 16 bytes), when
/// its magic (0xEF53 at 0x38) says it is one.
fn pid_in_superblock(sb: &[u8; SUPERBLOCK_BYTES]) -> Option<u32> {
    if u16::from_le_bytes([sb[0x38], sb[0x39]]) != 0xEF53 {
        return None;
    }
    let name = &sb[0x78..0x88];
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    std::str::from_utf8(&name[..end])
        .ok()?
        .strip_prefix(crate::loopdev::LABEL_PREFIX)?
        .parse()
        .ok()
}

/// The filesystem name of a crash filesystem mount (crates/crashfs),
/// followed in the mount table by `:PID` of the process serving it.
pub const CRASH_FS_NAME: &str = "ledgerbench-crashfs";

/// Crash filesystem mounts in this machine's mount table: (mount point,
/// pid serving it), whether or not that process still runs.
pub fn crash_mounts() -> Vec<(PathBuf, u32)> {
    crate::mounts::table()
        .into_iter()
        .filter_map(|m| {
            let pid = m
                .source
                .strip_prefix(CRASH_FS_NAME)?
                .strip_prefix(':')?
                .parse()
                .ok()?;
            Some((PathBuf::from(m.mount_point), pid))
        })
        .collect()
}

/// Leftovers of ledgerbench processes that are no longer running, in the
/// order to remove them: cgroups (their processes killed hold the mounts),
/// crash mounts (they sit on loop mounts), loop devices.
pub fn find() -> Vec<Leftover> {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/sys/block")
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = e.file_name().to_string_lossy().to_string();
        if !name.starts_with("loop") {
            continue;
        }
        let Ok(backing) = std::fs::read_to_string(e.path().join("loop/backing_file")) else {
            continue;
        };
        let deleted = backing.trim().ends_with(" (deleted)");
        let image = PathBuf::from(backing.trim().trim_end_matches(" (deleted)"));
        let device = format!("/dev/{name}");
        // A deleted run directory takes the marker with it: the device's
        // own label still names its maker.
        let pid = match owner_pid(&image) {
            Some(pid) => pid,
            None if deleted => match label_pid(&device) {
                Some(pid) => pid,
                None => continue,
            },
            None => continue,
        };
        if alive(pid) {
            continue;
        }
        let mount = mounts.lines().find_map(|l| {
            let mut f = l.split_whitespace();
            (f.next() == Some(device.as_str()))
                .then(|| f.next().map(PathBuf::from))
                .flatten()
        });
        out.push(Leftover::Loop {
            device,
            image,
            mount,
            pid,
        });
    }
    for root in crate::cgroup::roots() {
        for e in std::fs::read_dir(&root).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let Some(rest) = name
                .strip_prefix(crate::cgroup::PREFIX)
                .or_else(|| name.strip_prefix(&format!("{OLD_NAME}-")))
            else {
                continue;
            };
            let Ok(pid) = rest.split('-').next().unwrap_or("").parse::<u32>() else {
                continue;
            };
            if e.path().is_dir() && !alive(pid) {
                out.push(Leftover::Cgroup { dir: e.path(), pid });
            }
        }
    }
    for (mount, pid) in crash_mounts() {
        if !alive(pid) {
            out.push(Leftover::CrashMount { mount, pid });
        }
    }
    out.extend(scratch_in(Path::new(SCRATCH_ROOT)));
    out.sort_by_key(|l| match l {
        Leftover::Cgroup { .. } => 0,
        Leftover::CrashMount { .. } => 1,
        Leftover::Loop { .. } => 2,
        Leftover::Scratch { .. } => 3,
    });
    out
}

/// Where scratch directories on tmpfs are made (`scripts/bin.sh`).
pub const SCRATCH_ROOT: &str = "/dev/shm";

/// `ledgerbench-*` directories in `root` whose owner marker
/// ([`owner_marker`] of the directory, inside it) names a process gone.
pub fn scratch_in(root: &Path) -> Vec<Leftover> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let dir = e.path();
        let ours = e.file_name().to_string_lossy().starts_with("ledgerbench-");
        if !ours || !dir.is_dir() {
            continue;
        }
        let Some(pid) = owner_pid(&dir.join(SCRATCH_OWNER)) else {
            continue;
        };
        if !alive(pid) {
            out.push(Leftover::Scratch { dir, pid });
        }
    }
    out
}

/// The stem of a scratch directory's owner marker (`owner_marker` adds its
/// suffix): `DIR/.scratch.ledgerbench-owner`.
pub const SCRATCH_OWNER: &str = ".scratch";

/// The file in a run directory that names its checkpointed run in
/// progress; while it exists the run's images are kept for `--resume`.
pub const CHECKPOINT: &str = ".ledgerbench-checkpoint";

/// Whether `image` (`RUN/devices/TAG/NAME.img`) belongs to a checkpointed
/// run that can still be resumed.
pub fn checkpointed(image: &Path) -> bool {
    image
        .ancestors()
        .nth(3)
        .is_some_and(|run| run.join(CHECKPOINT).is_file())
}

/// Unmounts `m`, lazily when something still holds it (a dead process's
/// open files, a mount inside it).
fn unmount(m: &Path) -> Result<()> {
    let m = m.display().to_string();
    if run("umount", &[&m]).is_err() {
        run("umount", &["-l", &m])?;
    }
    Ok(())
}

/// Removes one leftover: unmounts, detaches and deletes the image and its
/// marker (and the mount point, when empty); or kills what still runs in a
/// cgroup (workers of a dead supervisor) and removes the cgroup.
pub fn remove(l: &Leftover) -> Result<()> {
    match l {
        Leftover::Loop {
            device,
            image,
            mount,
            ..
        } => {
            if let Some(m) = mount {
                unmount(m)?;
                let _ = std::fs::remove_dir(m);
            }
            run("losetup", &["-d", device])?;
            if checkpointed(image) {
                // Hours of a run a user may resume: kept, with its marker.
                return Ok(());
            }
            let _ = std::fs::remove_file(image);
            let _ = std::fs::remove_file(owner_marker(image));
            let _ = std::fs::remove_file(old_marker(image));
            Ok(())
        }
        Leftover::CrashMount { mount, .. } => unmount(mount),
        // Made and marked by ledgerbench's scripts, its maker gone.
        Leftover::Scratch { dir, .. } => {
            std::fs::remove_dir_all(dir).map_err(|source| crate::MeterError::Io {
                what: "removing scratch directory",
                path: dir.display().to_string(),
                source,
            })
        }
        Leftover::Cgroup { dir, .. } => {
            let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
            for pid in procs.lines().filter_map(|p| p.trim().parse::<i32>().ok()) {
                // SAFETY: kill has no memory preconditions.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            // A killed process leaves the cgroup a moment after the signal.
            for _ in 0..50 {
                if std::fs::remove_dir(dir).is_ok() {
                    return Ok(());
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            std::fs::remove_dir(dir).map_err(|source| crate::MeterError::Io {
                what: "removing cgroup",
                path: dir.display().to_string(),
                source,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_scratch_directory_is_found_only_with_a_dead_makers_marker() {
        let t = tempfile::tempdir().expect("tempdir");
        let mk = |name: &str, marker: Option<String>| {
            let d = t.path().join(name);
            std::fs::create_dir(&d).expect("dir");
            if let Some(m) = marker {
                let at = crate::loopdev::owner_marker(&d.join(super::SCRATCH_OWNER));
                std::fs::write(at, m).expect("marker");
            }
        };
        // A pid above the kernel's limit never runs.
        mk(
            "ledgerbench-ab.dead",
            Some("ledgerbench pid=4194305\n".into()),
        );
        mk(
            "ledgerbench-ab.live",
            Some(format!("ledgerbench pid={}\n", std::process::id())),
        );
        mk("ledgerbench-ab.unmarked", None);
        mk("someone-else", Some("ledgerbench pid=4194305\n".into()));
        let found = super::scratch_in(t.path());
        assert_eq!(found.len(), 1, "{found:?}");
        let super::Leftover::Scratch { dir, pid } = &found[0] else {
            panic!("{found:?}");
        };
        assert!(dir.ends_with("ledgerbench-ab.dead"));
        assert_eq!(*pid, 4_194_305);
        super::remove(&found[0]).expect("removed");
        assert!(!dir.exists());
        assert!(t.path().join("ledgerbench-ab.unmarked").exists());
    }

    #[test]
    fn the_makers_pid_is_read_from_an_ext4_label_and_nothing_else() {
        let mut sb = [0u8; super::SUPERBLOCK_BYTES];
        let label = crate::loopdev::owner_label(4_194_304);
        sb[0x78..0x78 + label.len()].copy_from_slice(label.as_bytes());
        assert_eq!(super::pid_in_superblock(&sb), None, "no ext4 magic");
        sb[0x38..0x3a].copy_from_slice(&0xEF53u16.to_le_bytes());
        assert_eq!(super::pid_in_superblock(&sb), Some(4_194_304));
        sb[0x78..0x88].copy_from_slice(b"my-backup-disk\0\0");
        assert_eq!(super::pid_in_superblock(&sb), None, "a user's label");
    }

    #[test]
    fn a_zombie_is_not_alive() {
        // A child that exited and is not reaped yet is a zombie.
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("spawn true");
        let pid = child.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !super::exited(pid) {
            assert!(std::time::Instant::now() < deadline, "no zombie seen");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(!super::alive(pid), "a zombie must count as gone");
        child.wait().expect("reap");
        assert!(super::alive(std::process::id()), "this process is alive");
    }
}

//! A private ext4 filesystem on a loop device, so a device's counters
//! belong to one store alone.
//!
//! Created and removed by ledgerbench: the image file, the loop device and the
//! mount point are all new, and `Drop` undoes them in reverse order. A
//! process killed by a signal cannot run `Drop`; beside each image a marker
//! names the process that made it, and `ledgerbench clean` removes what a dead
//! process left.

use std::path::{Path, PathBuf};

use crate::blockdev::BlockStat;
use crate::{MeterError, Result, is_root, run};

/// An ext4 image mounted through a loop device with direct I/O.
#[derive(Debug)]
pub struct LoopFs {
    image: PathBuf,
    device: String,
    mount: PathBuf,
    mounted: bool,
    view: Device,
    /// Leave the image when dropped: a checkpointed run's, until it is
    /// mounted again (a failed attach must not lose hours of a run).
    keep_image: bool,
}

/// A mounted block device seen from a process that does not own it (a
/// worker measuring the device its supervisor made): counters and syncs,
/// no unmounting.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Device {
    /// The device, e.g. `/dev/loop3`.
    pub device: String,
    /// Where its filesystem is mounted.
    pub mount: PathBuf,
}

impl Device {
    /// The device's counters now.
    pub fn stat(&self) -> Result<BlockStat> {
        BlockStat::read(&self.stat_path())
    }

    /// The device's counters file kept open, for reading around every GET.
    pub fn stat_file(&self) -> Result<crate::blockdev::StatFile> {
        crate::blockdev::StatFile::open(&self.stat_path())
    }

    fn stat_path(&self) -> String {
        let name = self.device.trim_start_matches("/dev/");
        format!("/sys/block/{name}/stat")
    }

    /// Writes back everything dirty on the filesystem (`syncfs`), so the
    /// device counters include it.
    pub fn sync(&self) -> Result<()> {
        let dir = std::fs::File::open(&self.mount).map_err(|source| MeterError::Io {
            what: "opening",
            path: self.mount.display().to_string(),
            source,
        })?;
        use std::os::fd::AsRawFd;
        // SAFETY: the fd is valid for the life of `dir`.
        if unsafe { libc::syncfs(dir.as_raw_fd()) } != 0 {
            return Err(MeterError::Io {
                what: "syncfs",
                path: self.mount.display().to_string(),
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(())
    }

    /// The device name, e.g. `/dev/loop3`.
    pub fn device(&self) -> &str {
        &self.device
    }
}

impl LoopFs {
    /// Says why loop devices cannot be used here, if they cannot.
    pub fn available() -> Result<()> {
        let unavailable = |why: &str| {
            Err(MeterError::Unavailable {
                meter: "loop-device meter",
                why: why.to_string(),
            })
        };
        if !is_root() {
            return unavailable("needs root to attach loop devices and mount them");
        }
        if !Path::new("/dev/loop-control").exists() {
            return unavailable("/dev/loop-control is missing (no loop driver)");
        }
        for tool in ["losetup", "mkfs.ext4", "tune2fs", "mount", "umount"] {
            if run("sh", &["-c", &format!("command -v {tool}")]).is_err() {
                return unavailable(&format!("`{tool}` is not installed"));
            }
        }
        Ok(())
    }

    /// Creates a sparse image of `size` bytes at `image` (which must not
    /// exist), attaches it with direct I/O, makes ext4 on it and mounts it at
    /// `mount` (which must not exist). Read-ahead is set to `read_ahead_kb`,
    /// or left as the kernel sets it for a new device when `None` (what a
    /// node's disk has unless someone tuned it).
    pub fn create(
        image: &Path,
        mount: &Path,
        size: u64,
        read_ahead_kb: Option<u32>,
    ) -> Result<Self> {
        Self::available()?;
        for p in [image, mount] {
            if p.exists() {
                return Err(MeterError::Unavailable {
                    meter: "loop-device meter",
                    why: format!(
                        "{} already exists; ledgerbench only uses paths it creates",
                        p.display()
                    ),
                });
            }
        }
        let io = |what, p: &Path| {
            let path = p.display().to_string();
            move |source| MeterError::Io { what, path, source }
        };
        // The marker names this process, so `ledgerbench clean` can tell an
        // image a killed ledgerbench left from one a live run still uses.
        let owner = owner_marker(image);
        std::fs::write(&owner, format!("ledgerbench pid={}\n", std::process::id()))
            .map_err(io("writing owner marker", &owner))?;
        let f = std::fs::File::create(image).map_err(io("creating image", image))?;
        f.set_len(size).map_err(io("sizing image", image))?;
        drop(f);
        let img = image.display().to_string();
        let device = match run("losetup", &["--find", "--show", "--direct-io=on", &img]) {
            Ok(d) => d,
            Err(e) => {
                let _ = std::fs::remove_file(image);
                let _ = std::fs::remove_file(&owner);
                return Err(e);
            }
        };
        let mut fs = LoopFs::unmounted(image, device, mount);
        // Lazy init off: background inode-table zeroing would write to the
        // device during the run and be counted as the store's writes. The
        // label names this process on the device itself, for `clean` to
        // find it after its run directory (and marker) was deleted.
        run(
            "mkfs.ext4",
            &[
                "-q",
                "-F",
                "-L",
                &owner_label(std::process::id()),
                "-E",
                "lazy_itable_init=0,lazy_journal_init=0,nodiscard",
                &fs.device,
            ],
        )?;
        std::fs::create_dir(mount).map_err(io("creating mount point", mount))?;
        let m = mount.display().to_string();
        run("mount", &["-o", "noatime", &fs.device, &m])?;
        fs.mounted = true;
        if let Some(kb) = read_ahead_kb {
            crate::write(&fs.read_ahead_path(), &kb.to_string())?;
        }
        Ok(fs)
    }

    /// Attaches an image a checkpointed run kept (`image` must exist, and
    /// `mount` must not) and mounts it; ext4 replays its journal, as after
    /// a reboot. The owner marker then names this process.
    pub fn attach(image: &Path, mount: &Path, read_ahead_kb: Option<u32>) -> Result<Self> {
        Self::available()?;
        let missing = |why: String| MeterError::Unavailable {
            meter: "loop-device meter",
            why,
        };
        if !image.is_file() {
            return Err(missing(format!("{} is gone", image.display())));
        }
        // After a reboot the empty mount point is still there.
        let empty_dir = std::fs::read_dir(mount).is_ok_and(|mut d| d.next().is_none());
        if mount.exists() && !empty_dir {
            return Err(missing(format!(
                "{} is in use: is the run still going? `ledgerbench clean` removes what a dead one left",
                mount.display()
            )));
        }
        let owner = owner_marker(image);
        std::fs::write(&owner, format!("ledgerbench pid={}\n", std::process::id())).map_err(
            |source| MeterError::Io {
                what: "writing owner marker",
                path: owner.display().to_string(),
                source,
            },
        )?;
        let img = image.display().to_string();
        let device = run("losetup", &["--find", "--show", "--direct-io=on", &img])?;
        let mut fs = LoopFs::unmounted(image, device, mount);
        fs.keep_image = true;
        run(
            "tune2fs",
            &["-L", &owner_label(std::process::id()), &fs.device],
        )?;
        if !empty_dir {
            std::fs::create_dir(mount).map_err(|source| MeterError::Io {
                what: "creating mount point",
                path: mount.display().to_string(),
                source,
            })?;
        }
        run(
            "mount",
            &["-o", "noatime", &fs.device, &mount.display().to_string()],
        )?;
        fs.mounted = true;
        fs.keep_image = false;
        if let Some(kb) = read_ahead_kb {
            crate::write(&fs.read_ahead_path(), &kb.to_string())?;
        }
        Ok(fs)
    }

    /// An attached device, not mounted yet: its `Drop` detaches it.
    fn unmounted(image: &Path, device: String, mount: &Path) -> Self {
        LoopFs {
            image: image.to_path_buf(),
            view: Device {
                device: device.clone(),
                mount: mount.to_path_buf(),
            },
            device,
            mount: mount.to_path_buf(),
            mounted: false,
            keep_image: false,
        }
    }

    fn read_ahead_path(&self) -> String {
        let name = self.device.trim_start_matches("/dev/");
        format!("/sys/block/{name}/queue/read_ahead_kb")
    }

    /// The device's read-ahead now, KiB (`None` when sysfs cannot say).
    pub fn read_ahead_kb(&self) -> Option<u32> {
        std::fs::read_to_string(self.read_ahead_path())
            .ok()
            .and_then(|s| s.trim().parse().ok())
    }

    /// The mounted filesystem's root.
    pub fn path(&self) -> &Path {
        &self.mount
    }

    /// The loop device, e.g. `/dev/loop3`.
    pub fn device(&self) -> &str {
        &self.device
    }

    /// The device's counters now.
    pub fn stat(&self) -> Result<BlockStat> {
        self.view.stat()
    }

    /// Writes back everything dirty on this filesystem (`syncfs`), so the
    /// device counters include it.
    pub fn sync(&self) -> Result<()> {
        self.view.sync()
    }

    /// The device as a non-owning view, for meters and worker processes.
    pub fn view(&self) -> &Device {
        &self.view
    }

    /// Simulates a power cut: shuts the filesystem down without flushing
    /// its journal (`EXT4_IOC_SHUTDOWN` with `EXT4_GOING_FLAGS_NOLOGFLUSH`,
    /// as xfstests' godown does). From here on every I/O on it fails; what
    /// the device had not made stable is gone once [`LoopFs::remount`] runs.
    pub fn power_cut(&self) -> Result<()> {
        // _IOR('X', 125, __u32)
        const EXT4_IOC_SHUTDOWN: libc::c_ulong = 0x8004_587d;
        const EXT4_GOING_FLAGS_NOLOGFLUSH: u32 = 2;
        let dir = std::fs::File::open(&self.mount).map_err(|source| MeterError::Io {
            what: "opening",
            path: self.mount.display().to_string(),
            source,
        })?;
        use std::os::fd::AsRawFd;
        let flags = EXT4_GOING_FLAGS_NOLOGFLUSH;
        // SAFETY: the fd is valid for the life of `dir`; the ioctl reads one u32.
        if unsafe { libc::ioctl(dir.as_raw_fd(), EXT4_IOC_SHUTDOWN, &flags) } != 0 {
            return Err(MeterError::Io {
                what: "EXT4_IOC_SHUTDOWN",
                path: self.mount.display().to_string(),
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(())
    }

    /// Empties the page cache of this filesystem alone: synced, unmounted
    /// (its file pages, inodes and directory entries go with the mount, and
    /// the device's own cache with its last close) and mounted again, so the
    /// next reads come from the device. Nobody else's cache is touched, as
    /// dropping the machine's would. Every file on it must be closed first.
    pub fn evict_cache(&self) -> Result<()> {
        self.sync()?;
        unmount_when_free(&self.mount, UNMOUNT_PATIENCE)?;
        let m = self.mount.display().to_string();
        run("mount", &["-o", "noatime", &self.device, &m]).map(drop)
    }

    /// Unmounts and mounts the filesystem again (ext4 replays its journal),
    /// as a machine does when it boots after a power cut. Every process that
    /// had files open on it must be gone first.
    pub fn remount(&mut self) -> Result<()> {
        let m = self.mount.display().to_string();
        // A mount namespace made while the old mount existed (another
        // run's worker) keeps its superblock, shut down, alive; mounting the
        // device again would then bring back that one. Such a namespace
        // drops its copies of foreign mounts within milliseconds, so try
        // again until a fresh filesystem answers.
        for _ in 0..50 {
            unmount_when_free(&self.mount, UNMOUNT_PATIENCE)?;
            self.mounted = false;
            run("mount", &["-o", "noatime", &self.device, &m])?;
            self.mounted = true;
            let probe = self.mount.join(".ledgerbench-probe");
            if std::fs::write(&probe, b"")
                .and_then(|()| std::fs::remove_file(&probe))
                .is_ok()
            {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        Err(MeterError::Unavailable {
            meter: "power-cut simulation",
            why: format!(
                "{m} stayed shut down after 50 remounts: another process still holds the old mount"
            ),
        })
    }
}

/// How long a remount waits for a busy filesystem to be let go.
const UNMOUNT_PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

/// Unmounts `mount`, waiting (up to `patience`) while it is busy: a killed
/// process blocked in I/O on it (an fsync on a loaded machine) holds its
/// files until the kernel lets it exit. Still busy, the error names who
/// holds it.
fn unmount_when_free(mount: &Path, patience: std::time::Duration) -> Result<()> {
    let m = mount.display().to_string();
    let t = std::time::Instant::now();
    loop {
        match run("umount", &[&m]) {
            Err(MeterError::Command { cmd, stderr }) if stderr.contains("busy") => {
                if t.elapsed() >= patience {
                    let who = crate::mounts::holders(mount);
                    return Err(MeterError::Command {
                        cmd,
                        stderr: format!("{stderr} (after {patience:?}; held by {who})"),
                    });
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            other => return other.map(drop),
        }
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        let m = self.mount.display().to_string();
        if self.mounted && run("umount", &[&m]).is_err() {
            // Busy (an open file): detach lazily so the device can still go.
            let _ = run("umount", &["-l", &m]);
        }
        let _ = std::fs::remove_dir(&self.mount);
        let _ = run("losetup", &["-d", &self.device]);
        if !self.keep_image {
            let _ = std::fs::remove_file(&self.image);
            let _ = std::fs::remove_file(owner_marker(&self.image));
        }
    }
}

/// What the ext4 label of a ledgerbench image starts with; the maker's pid
/// follows (ext4 labels hold 16 bytes).
pub const LABEL_PREFIX: &str = "lb-";

/// A warning when the disk holding `dir` cannot hold `images` device
/// images of `size` bytes each at their full size, which a long run with
/// churn reaches: the ext4 inside frees blocks without returning them to
/// the image (no discard, so the device's writes are the store's alone),
/// and a disk that runs out under an image fails the store with I/O errors.
pub fn room_warning(dir: &Path, images: usize, size: u64) -> Option<String> {
    let free = ledgerbench_core::fsutil::free_bytes(dir).ok()?;
    short_of_room(free, images, size).map(|w| format!("{w} ({})", dir.display()))
}

/// [`room_warning`]'s arithmetic, `free` bytes on the disk.
fn short_of_room(free: u64, images: usize, size: u64) -> Option<String> {
    let need = size.saturating_mul(images as u64);
    let gib = |b: u64| format!("{:.1} GiB", b as f64 / f64::from(1u32 << 30));
    (need > free).then(|| {
        format!(
            "warning: {images} device image(s) of {} can grow to {} over a long run (the filesystem inside does not return freed blocks), but their disk has {} free: a long run may fail with I/O errors; give a smaller --device-size or put --out on a larger disk",
            gib(size),
            gib(need),
            gib(free)
        )
    })
}

/// The label of an image made by process `pid`.
pub fn owner_label(pid: u32) -> String {
    format!("{LABEL_PREFIX}{pid}")
}

/// The file beside an image that says which ledgerbench process made it.
pub fn owner_marker(image: &Path) -> PathBuf {
    let mut name = image.as_os_str().to_owned();
    name.push(".ledgerbench-owner");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_that_could_outgrow_their_disk_are_warned_of() {
        assert_eq!(short_of_room(100 << 30, 2, 48 << 30), None);
        let w = short_of_room(68 << 30, 3, 48 << 30).expect("a warning");
        assert!(
            w.contains("3 device image(s) of 48.0 GiB can grow to 144.0 GiB"),
            "{w}"
        );
        assert!(
            w.contains("68.0 GiB free") && w.contains("--device-size"),
            "{w}"
        );
    }

    #[test]
    #[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
    fn an_unmount_still_busy_after_its_patience_names_who_holds_it() {
        if !ledgerbench_testkit::can_run(LoopFs::available()) {
            return;
        }
        let t = tempfile::tempdir().expect("tempdir");
        let fs = LoopFs::create(
            &t.path().join("img"),
            &t.path().join("mnt"),
            64 << 20,
            Some(0),
        )
        .expect("loop fs");
        let held = std::fs::File::create(fs.path().join("held")).expect("create");
        let e = unmount_when_free(fs.path(), std::time::Duration::from_millis(200))
            .expect_err("a held filesystem stays mounted")
            .to_string();
        assert!(e.contains(&format!("pid {} ", std::process::id())), "{e}");
        drop(held);
    }

    #[test]
    #[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
    fn a_kept_image_that_will_not_mount_is_left_as_it_was() {
        if !ledgerbench_testkit::can_run(LoopFs::available()) {
            return;
        }
        let t = tempfile::tempdir().expect("tempdir");
        let image = t.path().join("img");
        // No filesystem on it: the mount fails after the device is attached.
        std::fs::write(&image, vec![0u8; 1 << 20]).expect("image");
        let e = LoopFs::attach(&image, &t.path().join("mnt"), None).expect_err("no ext4");
        assert!(!e.to_string().is_empty());
        assert_eq!(std::fs::metadata(&image).expect("kept").len(), 1 << 20);
        let losetup = run("losetup", &["-j", &image.display().to_string()]).unwrap_or_default();
        assert!(losetup.is_empty(), "still attached: {losetup}");
    }
}

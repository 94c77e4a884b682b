//! A private ext4 filesystem on a loop device, so a device's counters
//! belong to one store alone.
//!
//! Created and removed by kvbench: the image file, the loop device and the
//! mount point are all new, and `Drop` undoes them in reverse order. A
//! process killed by a signal cannot run `Drop`; `kvbench` prints the image
//! and device so they can be removed by hand (`umount`, `losetup -d`).

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
        for tool in ["losetup", "mkfs.ext4", "mount", "umount"] {
            if run("sh", &["-c", &format!("command -v {tool}")]).is_err() {
                return unavailable(&format!("`{tool}` is not installed"));
            }
        }
        Ok(())
    }

    /// Creates a sparse image of `size` bytes at `image` (which must not
    /// exist), attaches it with direct I/O, makes ext4 on it and mounts it at
    /// `mount` (which must not exist). Read-ahead is set to `read_ahead_kb`.
    pub fn create(image: &Path, mount: &Path, size: u64, read_ahead_kb: u32) -> Result<Self> {
        Self::available()?;
        for p in [image, mount] {
            if p.exists() {
                return Err(MeterError::Unavailable {
                    meter: "loop-device meter",
                    why: format!(
                        "{} already exists; kvbench only uses paths it creates",
                        p.display()
                    ),
                });
            }
        }
        let io = |what, p: &Path| {
            let path = p.display().to_string();
            move |source| MeterError::Io { what, path, source }
        };
        let f = std::fs::File::create(image).map_err(io("creating image", image))?;
        f.set_len(size).map_err(io("sizing image", image))?;
        drop(f);
        let img = image.display().to_string();
        let device = match run("losetup", &["--find", "--show", "--direct-io=on", &img]) {
            Ok(d) => d,
            Err(e) => {
                let _ = std::fs::remove_file(image);
                return Err(e);
            }
        };
        let mut fs = LoopFs {
            image: image.to_path_buf(),
            device,
            mount: mount.to_path_buf(),
            mounted: false,
        };
        // Lazy init off: background inode-table zeroing would write to the
        // device during the run and be counted as the store's writes.
        run(
            "mkfs.ext4",
            &[
                "-q",
                "-F",
                "-E",
                "lazy_itable_init=0,lazy_journal_init=0,nodiscard",
                &fs.device,
            ],
        )?;
        std::fs::create_dir(mount).map_err(io("creating mount point", mount))?;
        let m = mount.display().to_string();
        run("mount", &["-o", "noatime", &fs.device, &m])?;
        fs.mounted = true;
        let name = fs.device.trim_start_matches("/dev/");
        crate::write(
            &format!("/sys/block/{name}/queue/read_ahead_kb"),
            &read_ahead_kb.to_string(),
        )?;
        Ok(fs)
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
        let name = self.device.trim_start_matches("/dev/");
        BlockStat::read(&format!("/sys/block/{name}/stat"))
    }

    /// Writes back everything dirty on this filesystem (`syncfs`), so the
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
        let _ = std::fs::remove_file(&self.image);
    }
}

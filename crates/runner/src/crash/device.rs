//! A crash cell's private device: its loop filesystem, memory cgroup and
//! (for the crash filesystem's kinds) the FUSE mount the stores live on,
//! with what the cycles carry from one to the next.

use std::path::{Path, PathBuf};

use anyhow::Context;
use ledgerbench_core::CrashKind;
use ledgerbench_crashfs::{Fault, Mounted};
use ledgerbench_driver::rundir::{RunDir, sanitize};
use ledgerbench_meter::cgroup::MemoryLimit;
use ledgerbench_meter::loopdev::LoopFs;
use ledgerbench_rng::Rng;

use super::reboot::Boot;

/// The crash filesystem of a cell whose kind it plays: the stores live in
/// `backing` and are seen through a mount at the stores' directory.
pub(super) struct CrashMount {
    pub(super) mounted: Option<Mounted>,
    pub(super) backing: PathBuf,
    pub(super) scratch: PathBuf,
    pub(super) fault: Fault,
}

/// A cell's private device and what its cycles carry from one to the next.
/// Fields drop in order: the crash mount before the device it lives on, the
/// device before its cgroup, all after every worker (each is reaped inside
/// a cycle).
pub(super) struct Device {
    pub(super) crash_fs: Option<CrashMount>,
    pub(super) fs: LoopFs,
    pub(super) limit: Option<MemoryLimit>,
    /// The stores' directory on the device (absolute: a worker in its own
    /// mount namespace keeps only the loop mount holding this path).
    pub(super) dir: PathBuf,
    /// The workers' log.
    pub(super) log: PathBuf,
    /// Per store, batches acknowledged and batches present after the last check.
    pub(super) acked: Vec<u64>,
    pub(super) present: Vec<u64>,
    /// The boot id once a power cut "rebooted" the machine.
    pub(super) boot: Option<Boot>,
}

impl Device {
    /// Makes the cell's private device and cgroup under the run directory
    /// (and the crash filesystem's directories on it, for its kinds).
    pub(super) fn create(
        rundir: &RunDir,
        tag: &str,
        kind: CrashKind,
        stores: usize,
        memory_limit: Option<u64>,
        device_size: u64,
    ) -> anyhow::Result<Device> {
        let root = rundir.path().join("devices");
        std::fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
        let name = sanitize(tag);
        let limit = memory_limit
            .map(|b| MemoryLimit::create(b, &name))
            .transpose()?;
        let fs = LoopFs::create(
            &root.join(format!("{name}.img")),
            &root.join(&name),
            device_size,
            None,
        )?;
        let dir = std::path::absolute(fs.path().join("stores")).context("store path")?;
        let fault = match kind {
            CrashKind::Lose => Some(Fault::Lose),
            CrashKind::Reorder => Some(Fault::Reorder),
            CrashKind::Torn => Some(Fault::Torn),
            CrashKind::Kill | CrashKind::PowerCut => None,
        };
        let crash_fs = match fault {
            Some(fault) => {
                // Absolute, as `dir`: the checker opens the stores here.
                let backing =
                    std::path::absolute(fs.path().join("backing")).context("store path")?;
                let scratch = fs.path().join("crashfs");
                for d in [&backing, &scratch, &dir] {
                    std::fs::create_dir_all(d)
                        .with_context(|| format!("creating {}", d.display()))?;
                }
                Some(CrashMount {
                    mounted: None,
                    backing,
                    scratch,
                    fault,
                })
            }
            None => None,
        };
        Ok(Device {
            crash_fs,
            fs,
            limit,
            dir,
            log: rundir.path().join(format!("{name}.worker.log")),
            acked: vec![0; stores],
            present: vec![0; stores],
            boot: None,
        })
    }

    /// Where the stores' files are while no worker runs: the crash
    /// filesystem's backing directory, else the stores' directory.
    pub(super) fn files(&self) -> &Path {
        self.crash_fs.as_ref().map_or(&self.dir, |c| &c.backing)
    }

    /// Mounts the crash filesystem (for its kinds) before a writer starts;
    /// its crash unmounts it.
    pub(super) fn mount(&mut self) -> anyhow::Result<()> {
        if let Some(c) = &mut self.crash_fs
            && c.mounted.is_none()
        {
            let m = Mounted::mount(&c.backing, &self.dir, &c.scratch).with_context(|| {
                format!("mounting the crash filesystem at {}", self.dir.display())
            })?;
            c.mounted = Some(m);
        }
        Ok(())
    }

    /// A simulated power loss is a reboot too: later workers see a new boot id.
    pub(super) fn reboot(&mut self, rng: &mut Rng) {
        self.boot = Some(Boot::new(self.log.with_extension("bootfs"), rng));
    }
}

/// Removes the stores a test made (and only those: each has ledgerbench's marker).
pub(super) fn remove_stores(
    dir: &Path,
    stores: &[ledgerbench_driver::crash::StoreShape],
) -> anyhow::Result<()> {
    for s in stores {
        let d = dir.join(&s.name);
        if d.join(ledgerbench_core::fsutil::STORE_MARKER).exists() {
            std::fs::remove_dir_all(&d).with_context(|| format!("removing {}", d.display()))?;
        }
    }
    Ok(())
}

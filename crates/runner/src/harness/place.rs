//! Store placement: a private ext4 loop device per store, or a directory
//! in the run directory, and what a run does with them after.

use std::fs;
use std::path::PathBuf;

use ledgerbench_driver::rundir::{RunDir, sanitize};
use ledgerbench_meter::loopdev::{Device, LoopFs};

use super::Placement;

/// A run's store directories: on private devices (unmounted and removed
/// when this drops) or in the run directory.
pub struct Placed {
    /// One directory per store, in the order of the names placed.
    pub dirs: Vec<PathBuf>,
    /// How the device figures were obtained (or why they are absent).
    pub meter: String,
    pub(super) devices: Vec<LoopFs>,
    /// `devices/TAG` in the run directory, made for the images: removed
    /// with them when empty.
    root: Option<PathBuf>,
}

impl Drop for Placed {
    fn drop(&mut self) {
        // The devices first (unmounted, images removed), then the
        // directories ledgerbench made for them, only if nothing else is there.
        self.devices.clear();
        if let Some(root) = &self.root {
            let _ = fs::remove_dir(root);
            if let Some(parent) = root.parent() {
                let _ = fs::remove_dir(parent);
            }
        }
    }
}

impl Placed {
    /// The read-ahead of the first private device as the kernel reports
    /// it, KiB (`None` without devices).
    pub fn read_ahead_kb(&self) -> Option<u32> {
        self.devices.first().and_then(LoopFs::read_ahead_kb)
    }

    /// How a store's GETs reach these devices: the engine's read mode,
    /// the first device's read-ahead and where it came from, the page size.
    pub fn read_path(
        &self,
        spec: &crate::registry::BackendSpec,
        place: &Placement,
    ) -> ledgerbench_driver::results::points::ReadPath {
        ledgerbench_driver::results::points::ReadPath {
            reads: spec.read_path().name().into(),
            read_ahead_kb: self.read_ahead_kb(),
            read_ahead_source: match place.read_ahead_kb {
                Some(_) => "--read-ahead-kb".into(),
                None => "the kernel's default".into(),
            },
            page_size_bytes: ledgerbench_meter::page_size(),
        }
    }

    /// The private device of each store, in store order.
    pub fn devices(&self) -> Vec<Option<&Device>> {
        (0..self.dirs.len())
            .map(|i| self.devices.get(i).map(LoopFs::view))
            .collect()
    }

    /// Flushes every private device's dirty pages, so dropping the page
    /// cache next leaves nothing of the stores in memory.
    pub fn sync(&self) -> anyhow::Result<()> {
        for d in &self.devices {
            d.sync()?;
        }
        Ok(())
    }

    /// Empties the stores' page cache (closed) so the next reads come from
    /// the device: [`crate::output::evict`].
    pub fn evict(&self, why: &str) -> anyhow::Result<()> {
        let private = !self.devices.is_empty() && self.devices.len() == self.dirs.len();
        crate::output::evict(private.then_some(self.devices.as_slice()), &self.dirs, why)
    }

    /// Unmounts and removes the devices now; returns the store directories.
    pub fn unmount(mut self) -> Vec<PathBuf> {
        std::mem::take(&mut self.dirs)
    }
}

/// Makes one directory per store name under `place`: a private ext4 loop
/// device each (`devices/TAG/NAME.img`, mounted at `devices/TAG/NAME`) or a
/// directory in the run directory. The one placement every run uses.
pub fn place_stores(
    place: &Placement,
    tag: &str,
    names: &[String],
    rundir: &RunDir,
) -> anyhow::Result<Placed> {
    let mut placed = Placed {
        dirs: Vec::new(),
        meter: String::new(),
        devices: Vec::new(),
        root: None,
    };
    if let (Some(size), false) = (place.device_size, place.reattach)
        && let Some(w) = ledgerbench_meter::loopdev::room_warning(rundir.path(), names.len(), size)
    {
        eprintln!("ledgerbench: {w}");
    }
    for name in names {
        let dir = match place.device_size {
            Some(size) => {
                let root = rundir.path().join("devices").join(sanitize(tag));
                placed.root = Some(root.clone());
                let (image, mount) = (
                    root.join(format!("{}.img", sanitize(name))),
                    root.join(sanitize(name)),
                );
                let dev = fs::create_dir_all(&root)
                    .map_err(anyhow::Error::from)
                    .and_then(|_| {
                        Ok(match place.reattach {
                            true => LoopFs::attach(&image, &mount, place.read_ahead_kb)?,
                            false => LoopFs::create(&image, &mount, size, place.read_ahead_kb)?,
                        })
                    })
                    .map_err(|e| e.context(format!("private device for store `{name}`")))?;
                let store = dev.path().join("store");
                placed.devices.push(dev);
                store
            }
            None if place.reattach => {
                let d = rundir.stores_of(tag).join(name);
                if !d.is_dir() {
                    anyhow::bail!("the checkpointed store {} is gone", d.display());
                }
                d
            }
            None => rundir.store_dir(tag, name)?,
        };
        placed.dirs.push(dir);
    }
    placed.meter = if placed.devices.is_empty() {
        "absent: stores share the data directory's filesystem (--device none, or no root/loop devices); process counters (/proc/self/io) stand in".into()
    } else {
        let ra = placed.read_ahead_kb().map_or("unknown".into(), |kb| {
            let how = match place.read_ahead_kb {
                Some(_) => "set by --read-ahead-kb",
                None => "the kernel's default",
            };
            format!("{kb} KiB ({how})")
        });
        format!(
            "private ext4 loop device per store ({}), direct I/O to the image, read-ahead {ra}",
            placed
                .devices
                .iter()
                .map(|d| d.device())
                .collect::<Vec<_>>()
                .join(", "),
        )
    };
    Ok(placed)
}

//! Places a run's stores: the memory cgroup, a private loop device per
//! store, opening and closing, and the cleanup after; the same for every
//! workload, so each gets the same meters and the same care with disks.

use std::fs;
use std::path::PathBuf;

use ledgerbench_core::{Durability, KvStore};
use ledgerbench_driver::DriverError;
use ledgerbench_driver::env::EnvInfo;
use ledgerbench_driver::results::{BackendRun, StoreSetup};
use ledgerbench_driver::rundir::{RunDir, sanitize};
use ledgerbench_meter::cgroup::MemoryLimit;
use ledgerbench_meter::loopdev::{Device, LoopFs};
use ledgerbench_meter::rusage::Usage;

use crate::registry::BackendSpec;

/// Where and under what limits a run's stores live.
pub struct Placement {
    /// Memory limit of the engine (heap and page cache), bytes.
    pub memory_limit: Option<u64>,
    /// Added to the cgroup's limit for the harness's own bounded heap, so
    /// it does not eat the engine's share (0 adds nothing).
    pub harness_allowance: u64,
    /// Size of each store's private loop device; `None` puts stores in the run directory.
    pub device_size: Option<u64>,
    /// Read-ahead of the private devices, KiB; `None` leaves the kernel's
    /// default for a new device.
    pub read_ahead_kb: Option<u32>,
    /// Keep store directories after the run (only without devices).
    pub keep_stores: bool,
    /// Use the stores a checkpointed run kept under the same tag (their
    /// images attached again, or their directories) instead of new ones.
    pub reattach: bool,
    /// Files (or directories of them) the run reads besides its stores: a
    /// memory-limited run empties their page cache before it starts.
    pub inputs: Vec<PathBuf>,
}

pub use crate::size::{MIN_MEMORY_LIMIT, memory_limit, memory_limit_of};

/// Scales `spec`'s engine memory to `bytes`, saying so when that is under
/// the engine's smallest budget: it then raises a cache or buffer to its
/// own minimum and uses more than it was given (the results' config
/// records what it ran with).
pub fn scale_memory(spec: &mut BackendSpec, bytes: u64) {
    spec.scale_memory(bytes);
    let floor = spec.memory_floor();
    if bytes < floor {
        ledgerbench_core::note!(
            "[{}] engine memory {} MiB is under its smallest budget of {} MiB: some of its caches and buffers were raised to their minimums (the results record the settings it ran with); give --engine-memory {}MiB or more to keep the budget as given",
            spec.name,
            bytes >> 20,
            floor >> 20,
            floor >> 20
        );
    }
}

/// Where stores live: `--device`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DeviceMode {
    /// A private loop device per store when root and loop devices allow it.
    Auto,
    /// A private loop device per store, or an error saying why not.
    Loop,
    /// The run directory's filesystem (device figures absent).
    None,
}

/// The private device size per store, or `None` when stores share the run
/// directory's filesystem (`none`, or `auto` where loop devices cannot be
/// used). `size` overrides `default`.
pub fn device_size(
    mode: DeviceMode,
    size: Option<&str>,
    default: u64,
) -> anyhow::Result<Option<u64>> {
    // Read whether or not devices are used: a bad value is refused on every
    // machine, not only where loop devices exist.
    let size = size
        .map(|s| crate::size::parse_named("--device-size", s))
        .transpose()?;
    match mode {
        DeviceMode::None => Ok(None),
        DeviceMode::Auto | DeviceMode::Loop => match LoopFs::available() {
            Ok(()) => Ok(Some(size.unwrap_or(default))),
            Err(e) if mode == DeviceMode::Loop => anyhow::bail!("--device loop: {e}"),
            Err(_) => Ok(None),
        },
    }
}

/// `--durability LEVEL`, shared by every run command.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct DurabilityArg {
    /// What a crash may cost, the same on every engine: none (a crash may
    /// lose or corrupt anything since the last flush), process (kill -9
    /// loses nothing committed; a power cut may lose the latest commits,
    /// never corrupt) or power (every commit survives a power cut).
    #[arg(long, value_name = "LEVEL", default_value = "process", value_parser = durability_parser())]
    pub durability: Durability,
}

/// `--durability`: the levels, listed in `--help` and completions.
pub fn durability_parser() -> impl clap::builder::TypedValueParser<Value = Durability> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(["none", "process", "power"])
        .map(|s| s.parse::<Durability>().expect("every listed level parses"))
}

/// The named backends at durability `level`, each with `memory` for its
/// engine and `--set` lines applied (which must not change the level).
pub fn specs(
    backends: &str,
    memory: &str,
    level: Durability,
    sets: &[String],
) -> anyhow::Result<Vec<BackendSpec>> {
    let memory = crate::size::parse_named("--engine-memory", memory)?;
    let mut specs = crate::registry::parse_list(backends, level)?;
    for s in &mut specs {
        scale_memory(s, memory);
    }
    crate::registry::apply_sets(&mut specs, sets)?;
    for s in &specs {
        s.check_durability(level)?;
    }
    Ok(specs)
}

/// An empty record of a run labelled `label`.
pub fn new_run(label: &str, memory_limit: Option<u64>) -> BackendRun {
    BackendRun {
        label: label.to_string(),
        repeat: 0,
        design: None,
        stores: Vec::new(),
        batches: Vec::new(),
        summary: None,
        usage: None,
        device_meter: None,
        memory_limit_bytes: memory_limit,
        harness_allowance_bytes: None,
        stopped_early: None,
        memory_peak_bytes: None,
        lookup_reads: None,
        streaming: None,
        ingest_samples: Vec::new(),
        phases: Vec::new(),
        replay: None,
        planted_slowdown_pct: crate::planted::percent(),
        planted_stall: crate::planted::stall().map(|s| s.to_string()),
        error: None,
        resumes: Vec::new(),
    }
}

/// The work done on a run's open stores (in store order) and their private
/// devices; returns the error that ended it, if any.
pub type Body<'a> = dyn FnMut(&[&dyn KvStore], &[Option<&Device>]) -> Option<DriverError> + 'a;

/// Opens one store per name with its spec under `place`, runs `body` on
/// them, closes them and cleans up, recording setup, usage, memory peak and
/// any error (with a hint when the disk filled) in `run`. `tag` names the
/// run's directories.
///
/// Long because open, run, close and clean up must happen in one place, so that whatever fails, nothing placed is left behind.
pub fn run_on_stores(
    place: &Placement,
    tag: &str,
    (names, specs): (&[String], &[BackendSpec]),
    rundir: &RunDir,
    env: &mut EnvInfo,
    run: &mut BackendRun,
    body: &mut Body<'_>,
) {
    // Entered before the stores open, so their caches are charged too;
    // left after they close (the guard drops last).
    if place.memory_limit.is_some() && place.harness_allowance > 0 {
        run.harness_allowance_bytes = Some(place.harness_allowance);
    }
    let limit = match place.memory_limit {
        // Pages cached before the run are charged to no limit: the run's
        // inputs (and a reattached store's files, below) start cold.
        Some(bytes) => {
            match crate::evict::files(&place.inputs, "--memory-limit starts each run cold")
                .and_then(|_| {
                    MemoryLimit::enter(bytes + place.harness_allowance).map_err(anyhow::Error::from)
                }) {
                Ok(g) => Some(g),
                Err(e) => {
                    run.error = Some(format!("--memory-limit: {e:#}"));
                    return;
                }
            }
        }
        None => None,
    };
    // Declared before the stores so that on an early return the stores
    // drop (close) first and the devices unmount after.
    let placed = match place_stores(place, tag, names, rundir) {
        Ok(p) => p,
        Err(e) => {
            run.error = Some(format!("{e:#}"));
            return;
        }
    };
    if place.reattach
        && limit.is_some()
        && let Err(e) = placed.evict("--memory-limit starts each run cold")
    {
        run.error = Some(format!("{e:#}"));
        return;
    }
    let mut opened: Vec<Box<dyn KvStore>> = Vec::new();
    for ((name, spec), dir) in names.iter().zip(specs).zip(&placed.dirs) {
        match spec.open(dir) {
            Ok(s) => opened.push(crate::planted::wrap(s)),
            Err(e) => {
                // Not a return: what was opened closes and what was placed
                // is removed below, as after a run.
                run.error = Some(format!("opening store `{name}`: {e}"));
                break;
            }
        }
        let version = opened
            .last()
            .and_then(|s| record_version(spec, dir, &**s, &mut env.engine_versions));
        let mut setup = store_setup(spec, name, version);
        let caps = opened.last().map(|s| s.capabilities());
        setup.writers = caps.and_then(|c| c.writers);
        setup.range_delete = caps.and_then(|c| c.range_delete);
        run.stores.push(setup);
    }
    if run.error.is_none() {
        run.device_meter = Some(placed.meter.clone());
        let stores: Vec<&dyn KvStore> = opened.iter().map(|s| &**s).collect();
        let devs = placed.devices();
        // No heap peak carries over from the backend that ran before.
        ledgerbench_meter::memory::reset_peaks();
        let usage0 = Usage::now();
        let err = body(&stores, &devs);
        run.usage = Some(Usage::now().since(&usage0));
        if let Some(e) = err {
            run.error = Some(format!("{e}{}", full_hint(&e, &placed, place.device_size)));
        }
    }
    for (name, s) in names.iter().zip(opened) {
        if let Err(e) = s.close() {
            run.error
                .get_or_insert(format!("closing store `{name}`: {e}"));
        }
    }
    if let Some(g) = &limit {
        run.memory_peak_bytes = g.max_usage().ok();
    }
    drop(limit);
    release_stores(place, placed, rundir);
}

/// The engine version of `store`, which `spec` opened in `dir`, also put
/// in `versions` (a results header's map, which the report's engines
/// column reads) under the store's engine.
pub fn record_version(
    spec: &crate::registry::BackendSpec,
    dir: &std::path::Path,
    store: &dyn KvStore,
    versions: &mut std::collections::BTreeMap<String, String>,
) -> Option<String> {
    let v = spec.engine_version(dir)?;
    versions.insert(store.engine().to_string(), v.clone());
    Some(v)
}

/// After a run's stores closed: unmounts and removes the private devices
/// and, unless the run keeps its stores, removes the store directories it
/// made in the run directory, so a results folder holds results, not data.
pub fn release_stores(place: &Placement, placed: Placed, rundir: &RunDir) {
    let dirs = placed.unmount();
    if !place.keep_stores && place.device_size.is_none() {
        for d in &dirs {
            if let Err(e) = rundir.remove_store_dir(d) {
                ledgerbench_core::note!("warning: {e}");
            }
        }
    }
}

/// What to do when a run ended in an error that may be a full disk. Engines
/// do not all say ENOSPC (LMDB reports EIO when pwrite finds the disk
/// full), so the filesystems themselves are looked at too.
fn full_hint(
    e: &ledgerbench_driver::DriverError,
    placed: &Placed,
    device_size: Option<u64>,
) -> String {
    // A guard that stopped the run said why, with what to change.
    if matches!(e, ledgerbench_driver::DriverError::Stopped(_)) {
        return String::new();
    }
    let nearly_full = placed
        .dirs
        .iter()
        .filter_map(|d| ledgerbench_core::fsutil::free_bytes(d).ok())
        .min()
        .filter(|free| *free < 64 << 20);
    if nearly_full.is_none() && !e.is_full() {
        return String::new();
    }
    match (device_size.filter(|_| !placed.devices.is_empty()), nearly_full) {
        // A private device is full, however much the disk under it has.
        (Some(size), _) => format!(
            " (a store's private device of {} MiB is full: raise --device-size above it, or run a smaller workload; what finished is kept)",
            size >> 20
        ),
        (None, Some(free)) => format!(
            " (the filesystem holding the stores has {free} bytes free: free disk or run a smaller workload; what finished is kept)"
        ),
        (None, None) => " (out of space: raise the store's size setting or run a smaller workload; what finished is kept)".into(),
    }
}

/// A run's store directories: on private devices (unmounted and removed
/// when this drops) or in the run directory.
pub struct Placed {
    /// One directory per store, in the order of the names placed.
    pub dirs: Vec<PathBuf>,
    /// How the device figures were obtained (or why they are absent).
    pub meter: String,
    devices: Vec<LoopFs>,
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

/// What results record of a store's backend: its name, settings, level and
/// what the registry says it can do.
pub fn store_setup(spec: &BackendSpec, store: &str, version: Option<String>) -> StoreSetup {
    StoreSetup {
        store: store.to_string(),
        backend: spec.name.clone(),
        engine_version: version,
        config: serde_json::to_value(&spec.config).unwrap_or_default(),
        durability: Some(spec.durability()),
        evicts_oldest: Some(spec.evicts_oldest()),
        read_path: Some(spec.read_path()),
        writers: None,
        range_delete: None,
    }
}

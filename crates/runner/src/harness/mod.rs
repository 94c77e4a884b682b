//! Places a run's stores: the memory cgroup, a private loop device per
//! store, opening and closing, and the cleanup after; the same for every
//! workload, so each gets the same meters and the same care with disks.

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

mod place;
pub use place::{Placed, place_stores};

/// Where and under what limits a run's stores live.
#[derive(Clone)]
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
    /// Copy each store's contents from `DIR/NAME` before it opens (outside
    /// the memory limit, then its cache emptied): a run given a state.
    pub seed_from: Option<PathBuf>,
    /// Copy each closed store to `DIR/NAME` after the run (outside the
    /// memory limit), when it ended without an error.
    pub save_to: Option<PathBuf>,
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
    // A run given its stores' contents copies them in before it enters
    // its limit: the copy's pages are not the engine's. Declared before the
    // stores so that on an early return the stores drop (close) first and
    // the devices unmount after, and the guard drops last.
    let mut limit = None;
    if place.seed_from.is_none() {
        match enter_limit(place) {
            Ok(g) => limit = g,
            Err(e) => {
                run.error = Some(format!("{e:#}"));
                return;
            }
        }
    }
    let placed = match place_stores(place, tag, names, rundir) {
        Ok(p) => p,
        Err(e) => {
            run.error = Some(format!("{e:#}"));
            return;
        }
    };
    if let Some(from) = &place.seed_from {
        match seed(from, names, &placed).and_then(|()| enter_limit(place)) {
            Ok(g) => limit = g,
            Err(e) => {
                run.error = Some(format!("{e:#}"));
                // Its copy goes with it (a device goes with `placed`).
                release_stores(place, placed, rundir);
                return;
            }
        }
    }
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
    if let Some(to) = &place.save_to
        && run.error.is_none()
    {
        for (name, dir) in names.iter().zip(&placed.dirs) {
            if let Err(e) = crate::storecopy::copy_dir(dir, &to.join(sanitize(name))) {
                run.error = Some(format!("keeping a copy of store `{name}`: {e:#}"));
                break;
            }
        }
    }
    release_stores(place, placed, rundir);
}

/// Enters `place`'s memory limit, if any, after emptying the page cache of
/// the run's inputs: pages cached before the run are charged to no limit,
/// so they start cold.
fn enter_limit(place: &Placement) -> anyhow::Result<Option<MemoryLimit>> {
    let Some(bytes) = place.memory_limit else {
        return Ok(None);
    };
    crate::evict::files(&place.inputs, "--memory-limit starts each run cold")
        .and_then(|_| {
            MemoryLimit::enter(bytes + place.harness_allowance).map_err(anyhow::Error::from)
        })
        .map(Some)
        .map_err(|e| e.context("--memory-limit"))
}

/// Copies each store's contents from `from/NAME` into its placed
/// directory, then empties their page cache: the run opens them cold.
fn seed(from: &std::path::Path, names: &[String], placed: &Placed) -> anyhow::Result<()> {
    for (name, dir) in names.iter().zip(&placed.dirs) {
        crate::storecopy::copy_dir(&from.join(sanitize(name)), dir)
            .map_err(|e| e.context(format!("copying the given state of store `{name}`")))?;
    }
    placed.evict("a run given its initial state opens a cold copy of it")
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

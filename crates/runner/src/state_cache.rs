//! `run synth --state-cache DIR`: a model's initial state loaded once per
//! engine and settings and kept as a copy of the closed stores; every run
//! of the same settings after it is given a copy and opens it cold, as a
//! restarted node opens its data, instead of loading it again (MDBX had
//! not loaded 10.5 million random keys under 128 MiB after 14 minutes).
//!
//! An entry is a directory of the cache named by a hash of what the state
//! is of: the engine and its settings (durability included), the model and
//! its settings, the scale, the seed, the client threads, the memory limit
//! and the build. `state.json` in it says so in full (a hash that matched
//! another state would be refused by it), with the load's seconds; its
//! stores are beside it. An entry is made under a name of its own and
//! renamed whole, so a run stopped midway leaves none that looks made.
//! ledgerbench never removes an entry: the cache is the user's.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use anyhow::Context;
use ledgerbench_driver::results::GivenState;
use serde::{Deserialize, Serialize};

/// The environment variable naming the cache when `--state-cache` is not given.
pub const STATE_CACHE_ENV: &str = "LEDGERBENCH_STATE_CACHE";
/// An entry's description, beside its stores.
const ENTRY_FILE: &str = "state.json";

/// What `state.json` holds.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    /// What the state is of, in full (to read).
    key: serde_json::Value,
    /// The key as the hash took it: compared as text, since a float read
    /// back from JSON may differ from the one written in its last digit.
    key_text: String,
    /// Seconds the load took, its operations on stores just opened.
    load_secs: f64,
    /// When it was made (RFC 3339, UTC).
    made_at: String,
    /// The run directory of the run that made it.
    made_by: String,
}

/// A state cache directory.
pub struct Cache {
    dir: PathBuf,
}

/// What a run is given: the stores' contents (`DIR/NAME` each) and where
/// they came from.
pub struct Given {
    /// The directory holding one directory per store.
    pub stores: PathBuf,
    /// What the results record.
    pub state: GivenState,
}

impl Cache {
    /// The cache at `dir`, made if missing; an error saying what to do
    /// when it cannot be written.
    pub fn open(dir: &Path) -> anyhow::Result<Cache> {
        std::fs::create_dir_all(dir).with_context(|| {
            format!(
                "--state-cache {}: cannot make the directory; give one you can write",
                dir.display()
            )
        })?;
        let dir = std::fs::canonicalize(dir)?;
        Ok(Cache { dir })
    }

    /// The entry directory of `key`.
    fn path_of(&self, key: &serde_json::Value) -> PathBuf {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        key.to_string().hash(&mut h);
        self.dir.join(format!("state-{:016x}", h.finish()))
    }

    /// The state made for `key`, if the cache holds it.
    pub fn find(&self, key: &serde_json::Value) -> anyhow::Result<Option<Given>> {
        let path = self.path_of(key);
        let text = match std::fs::read_to_string(path.join(ENTRY_FILE)) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let entry: Entry = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a state cache entry", path.display()))?;
        let text = key.to_string();
        if entry.key_text != text {
            anyhow::bail!(
                "{}: holds the state of other settings under the same name; move it aside",
                path.display()
            );
        }
        let stores = path.join("stores");
        Ok(Some(Given {
            state: GivenState {
                entry: path.display().to_string(),
                made_here: false,
                load_secs: entry.load_secs,
                made_at: entry.made_at,
                bytes: ledgerbench_core::fsutil::dir_usage(&stores)?.allocated_bytes,
            },
            stores,
        }))
    }

    /// A new directory to load `key`'s state into (its stores go in
    /// `stores/` under it), named for this process alone.
    pub fn start(&self, key: &serde_json::Value) -> anyhow::Result<PathBuf> {
        let name = self.path_of(key);
        let stem = format!(
            "{}.partial-",
            name.file_name().and_then(|n| n.to_str()).unwrap_or("state")
        );
        self.clear_dead(&stem);
        let part = self.dir.join(format!("{stem}{}", std::process::id()));
        std::fs::create_dir_all(part.join("stores"))
            .with_context(|| format!("making {}", part.display()))?;
        Ok(part)
    }

    /// Makes `part` (from [`Cache::start`], its stores copied in) the
    /// entry of `key`; the entry as a run records it. Another process that
    /// made the same entry first wins, and `part` is removed.
    pub fn finish(
        &self,
        key: &serde_json::Value,
        part: &Path,
        load_secs: f64,
        made_by: &Path,
    ) -> anyhow::Result<Given> {
        let entry = Entry {
            key: key.clone(),
            key_text: key.to_string(),
            load_secs,
            made_at: ledgerbench_driver::timefmt::now_rfc3339(),
            made_by: made_by.display().to_string(),
        };
        crate::output::write_json(&part.join(ENTRY_FILE), &entry)?;
        let path = self.path_of(key);
        let made_here = match std::fs::rename(part, &path) {
            Ok(()) => true,
            // Made meanwhile by another run: ours goes (we made it), and
            // the entry is that run's.
            Err(_) if path.join(ENTRY_FILE).exists() => {
                std::fs::remove_dir_all(part)?;
                false
            }
            Err(e) => return Err(e).with_context(|| format!("renaming {}", part.display())),
        };
        let mut given = self.find(key)?.context("the entry just made is gone")?;
        given.state.made_here = made_here;
        Ok(given)
    }

    /// Removes the loads of this entry (`STEM<pid>`) left by a process
    /// that is gone (killed midway): ledgerbench made them, and no entry
    /// is ever taken from one.
    fn clear_dead(&self, stem: &str) {
        let Ok(list) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for e in list.flatten() {
            let name = e.file_name();
            let pid = name.to_str().and_then(|n| n.strip_prefix(stem));
            if let Some(pid) = pid.and_then(|p| p.parse::<u32>().ok())
                && !ledgerbench_meter::clean::alive(pid)
            {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }

    /// Removes `part`, a load that did not finish (we made it).
    pub fn abandon(&self, part: &Path) {
        if part.starts_with(&self.dir) {
            let _ = std::fs::remove_dir_all(part);
        }
    }
}

/// What a state is of: everything that makes two loads' stores differ.
pub fn key(
    spec: &crate::registry::BackendSpec,
    params: &serde_json::Value,
    seed: u64,
    threads: u64,
    memory_limit: Option<u64>,
) -> serde_json::Value {
    let mut params = params.clone();
    // How the state is come by, and what is played after it, are not
    // what it is.
    if let Some(p) = params.as_object_mut() {
        for after in [
            "initial",
            "length",
            "operations",
            "ops_per_segment",
            "periods",
        ] {
            p.remove(after);
        }
    }
    serde_json::json!({
        "format": 1,
        "backend": spec.name,
        "config": serde_json::to_value(&spec.config).unwrap_or_default(),
        "durability": spec.durability().name(),
        "params": params,
        "model": model_text(&params),
        "seed": seed,
        "threads": threads,
        "memory_limit_bytes": memory_limit,
        "build": build(),
    })
}

/// The model file's text (a file may change under the same name); a
/// preset's is its name in this build.
fn model_text(params: &serde_json::Value) -> Option<String> {
    let path = params.get("workload")?.as_str()?;
    std::fs::read_to_string(path).ok()
}

/// The build: its commit, and for a build with uncommitted changes the
/// executable's size and time too, so an edited build does not take a
/// state another one made.
pub(crate) fn build() -> String {
    let commit = ledgerbench_driver::env::GIT_COMMIT;
    if !commit.ends_with("-dirty") {
        return commit.to_string();
    }
    let exe = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|m| {
            use std::os::unix::fs::MetadataExt;
            format!("{} bytes, mtime {}.{}", m.len(), m.mtime(), m.mtime_nsec())
        })
        .unwrap_or_default();
    format!("{commit} ({exe})")
}

/// A run's use of the cache: the cache, and the workload's settings and
/// seed its keys are made of.
pub struct Use<'a> {
    /// The cache.
    pub cache: Cache,
    /// The workload's settings (`--param` and what the flags set).
    pub params: &'a serde_json::Value,
    /// The run's seed.
    pub seed: u64,
}

impl<'a> Use<'a> {
    /// The cache at `dir`, if one is given, for a workload of `params`
    /// and `seed`: made (or refused) before any run starts.
    pub fn open(
        dir: Option<&Path>,
        params: &'a serde_json::Value,
        seed: u64,
    ) -> anyhow::Result<Option<Self>> {
        let Some(dir) = dir else { return Ok(None) };
        Ok(Some(Use {
            cache: Cache::open(dir)?,
            params,
            seed,
        }))
    }
}

/// The state a run of `spec` on `n` threads is given: found in the cache,
/// or loaded now (placed, limited and metered as the run itself, the
/// workload played up to its `load` mark on fresh stores, closed, copied
/// into the cache) and then given.
pub(crate) fn given(
    u: &Use<'_>,
    (spec, n, label): (&crate::registry::BackendSpec, u64, &str),
    place: &crate::harness::Placement,
    (names, specs): (&[String], &[crate::registry::BackendSpec]),
    rundir: &ledgerbench_driver::rundir::RunDir,
    env: &ledgerbench_driver::env::EnvInfo,
    exec: &crate::stream::Exec<'_>,
) -> anyhow::Result<Given> {
    use ledgerbench_workloads::synth::Initial;
    let key = key(spec, u.params, u.seed, n, place.memory_limit);
    if let Some(g) = u.cache.find(&key)? {
        ledgerbench_core::note!(
            "[{label}] initial state given from {} (loaded in {:.1} s, {})",
            g.state.entry,
            g.state.load_secs,
            g.state.made_at
        );
        return Ok(g);
    }
    let part = u.cache.start(&key)?;
    ledgerbench_core::note!(
        "[{label}] loading the initial state once, kept in {}",
        u.cache.dir.display()
    );
    let mut load = place.clone();
    load.save_to = Some(part.join("stores"));
    load.seed_from = None;
    let mut scratch = crate::harness::new_run(label, place.memory_limit);
    let mut view = crate::observe::ProgressView::new(&format!("{label} initial state"));
    let mut secs = 0.0;
    crate::harness::run_on_stores(
        &load,
        &format!("{label}-state"),
        (names, specs),
        rundir,
        &mut env.clone(),
        &mut scratch,
        &mut |stores, devs| {
            let t = std::time::Instant::now();
            let r = exec(stores, devs, &mut view, n, Initial::Only);
            secs = t.elapsed().as_secs_f64();
            match r {
                Ok(mut o) => o.error.take(),
                Err(e) => Some(ledgerbench_driver::DriverError::Config(format!("{e:#}"))),
            }
        },
    );
    view.finish();
    if let Some(e) = scratch.error {
        u.cache.abandon(&part);
        anyhow::bail!("loading the initial state for --state-cache: {e}");
    }
    let g = u.cache.finish(&key, &part, secs, rundir.path())?;
    ledgerbench_core::note!(
        "[{label}] initial state loaded in {secs:.1} s ({} MiB), kept as {}",
        g.state.bytes >> 20,
        g.state.entry
    );
    Ok(g)
}

#[cfg(test)]
mod tests;

//! A capacity search's prefilled store, loaded once per backend and
//! copied onto each probe's device: a B-tree ten times its memory limit
//! takes half an hour to load with random keys (MDBX, 1.25 GiB under
//! 128 MiB: 32 minutes), a copy of its closed files seconds. Every probe then
//! starts from the same bytes, opened cold as a restarted node opens its
//! store, and the load is timed once.

use std::time::Instant;

use anyhow::Context;
use ledgerbench_driver::capacity::{self, CapacityConfig};
use ledgerbench_driver::rundir::RunDir;
use ledgerbench_meter::cgroup::MemoryLimit;

use crate::harness::{self, Placed, Placement};
use crate::registry::BackendSpec;

/// A backend's prefilled store, closed: on its own device (or directory)
/// when loaded by this worker, or an entry of `--state-cache`.
pub struct Template {
    /// The store made here; `None` when it is a cache entry's.
    placed: Option<Placed>,
    /// The directory probes copy from.
    from: std::path::PathBuf,
    /// Seconds the load and its flush took.
    pub secs: f64,
    /// Bytes its files hold on disk.
    pub bytes: u64,
    /// The cache entry it is (or was kept as), with `--state-cache`.
    pub given: Option<ledgerbench_driver::results::GivenState>,
}

/// What a capacity prefill is of, as a `--state-cache` key: everything
/// that makes two loads' stores differ.
pub fn key(spec: &BackendSpec, cfg: &CapacityConfig, limit: Option<u64>) -> serde_json::Value {
    serde_json::json!({
        "format": 1,
        "workload": "capacity prefill",
        "backend": spec.name,
        "config": serde_json::to_value(&spec.config).unwrap_or_default(),
        "durability": spec.durability().name(),
        "rows": cfg.rows.name(),
        "value_bytes": cfg.value_bytes,
        "prefill_rows": cfg.prefill_rows,
        "seed": cfg.seed,
        "memory_limit_bytes": limit,
        "build": crate::state_cache::build(),
    })
}

/// The backend's prefilled store: `cache`'s entry when it holds one, else
/// loaded here ([`make`]) and, with a cache, kept in it (copied outside
/// the memory limit), so a worker after an OOM kill, or a later search,
/// starts from it instead of loading again.
pub fn get(
    spec: &BackendSpec,
    cfg: &CapacityConfig,
    at: (&Placement, &RunDir, Option<u64>),
    cache: Option<&crate::state_cache::Cache>,
) -> anyhow::Result<Template> {
    let Some(cache) = cache else {
        return make(spec, cfg, at);
    };
    let key = key(spec, cfg, at.2);
    if let Some(g) = cache.find(&key)? {
        ledgerbench_core::note!(
            "[{}] prefill given from {} (loaded in {:.1} s, {}; {} MiB on disk)",
            spec.name,
            g.state.entry,
            g.state.load_secs,
            g.state.made_at,
            g.state.bytes >> 20
        );
        return Ok(Template {
            placed: None,
            from: g.stores.join("rows"),
            secs: g.state.load_secs,
            bytes: g.state.bytes,
            given: Some(g.state),
        });
    }
    let mut t = make(spec, cfg, at)?;
    // A load that took half an hour is not thrown away for a cache that
    // could not keep it (a full disk): the search goes on, saying so.
    let kept = cache.start(&key).and_then(|part| {
        crate::storecopy::copy_dir(&t.from, &part.join("stores/rows"))
            .and_then(|_| cache.finish(&key, &part, t.secs, at.1.path()))
            .inspect_err(|_| cache.abandon(&part))
    });
    match kept {
        Ok(g) => {
            ledgerbench_core::note!("[{}] prefill kept as {}", spec.name, g.state.entry);
            t.given = Some(g.state);
        }
        Err(e) => ledgerbench_core::note!(
            "[{}] warning: the prefill could not be kept in --state-cache ({e:#}); the search goes on without it",
            spec.name
        ),
    }
    Ok(t)
}

/// Loads `cfg.prefill_rows` into a new store of `spec` inside the memory
/// limit (with the harness's allowance, as a probe), flushes and closes
/// it. Prints its progress every half minute: a load may take many.
pub fn make(
    spec: &BackendSpec,
    cfg: &CapacityConfig,
    (place, rundir, limit): (&Placement, &RunDir, Option<u64>),
) -> anyhow::Result<Template> {
    let name = &spec.name;
    let placed = harness::place_stores(
        place,
        &format!("{name}-prefill"),
        &["rows".to_string()],
        rundir,
    )
    .map_err(anyhow::Error::msg)?;
    crate::watchdog::beat(Some(&format!("[{name}] prefill")));
    let guard = limit
        .map(|b| MemoryLimit::enter(b + super::HARNESS_ALLOWANCE))
        .transpose()?;
    let (n, start) = (cfg.prefill_rows, Instant::now());
    let mut said = Instant::now();
    let mut loaded = |done: u64| {
        if said.elapsed().as_secs() >= 30 {
            said = Instant::now();
            ledgerbench_core::note!(
                "[{name}] prefill: {done} of {n} rows ({:.0}%) after {:.0} s",
                100.0 * done as f64 / n as f64,
                start.elapsed().as_secs_f64()
            );
        }
    };
    let secs = spec
        .open(&placed.dirs[0])
        .map_err(anyhow::Error::from)
        .and_then(|store| {
            let secs = capacity::prefill(&*store, cfg, &mut loaded);
            store.close()?;
            Ok(secs?)
        })
        .with_context(|| format!("loading the prefill of {n} rows"));
    let oom_killed = super::oom_killed(guard.as_ref());
    drop(guard);
    let secs = match secs {
        Err(e) if oom_killed => {
            let why = super::prefill_killed_why(limit);
            return Err(e.context(format!("the prefill was {why}")));
        }
        s => s?,
    };
    let bytes = ledgerbench_core::fsutil::dir_usage(&placed.dirs[0])?.allocated_bytes;
    ledgerbench_core::note!(
        "[{name}] prefilled {n} rows ({} MiB) in {secs:.1} s, once: {} MiB on disk, copied cold onto each probe's own store",
        (n * (32 + cfg.value_bytes as u64)) >> 20,
        bytes >> 20
    );
    Ok(Template {
        from: placed.dirs[0].clone(),
        placed: Some(placed),
        secs,
        bytes,
        given: None,
    })
}

impl Template {
    /// Copies the store's files into `placed`'s (empty) store directory,
    /// then empties both stores' page cache, so the probe opens its copy
    /// from the device; the seconds it took.
    pub fn copy_into(&self, placed: &Placed) -> anyhow::Result<f64> {
        let t = Instant::now();
        crate::storecopy::copy_dir(&self.from, &placed.dirs[0])?;
        let why = "a probe opens its copy of the prefilled store cold";
        placed.evict(why)?;
        match &self.placed {
            Some(p) => p.evict(why)?,
            // The cache's files: their own pages let go.
            None => {
                crate::evict::files(std::slice::from_ref(&self.from), why)?;
            }
        }
        Ok(t.elapsed().as_secs_f64())
    }

    /// Removes the store made here (its device, or its directory in the
    /// run's); a cache entry stays.
    pub fn remove(self, rundir: &RunDir, on_device: bool) -> anyhow::Result<()> {
        if let Some(placed) = self.placed {
            if !on_device {
                rundir.remove_store_dir(&placed.dirs[0])?;
            }
            drop(placed);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;

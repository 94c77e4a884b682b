//! `kvbench run point-reads`: IO per GET on random 32-byte keys, before and
//! after a full compaction, each store on its own loop device.

use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use kvbench_driver::pointreads::{
    self, CacheState, Measurement, PointReadConfig, PointResults, PointRun,
};
use kvbench_driver::rundir::{RunDir, sanitize};
use kvbench_driver::timefmt;
use kvbench_meter::cgroup::{self, MemoryLimit};
use kvbench_meter::loopdev::LoopFs;

use crate::registry::{self, EngineConfig};
use crate::{harness, size};

/// Options of `kvbench run point-reads`.
#[derive(clap::Args)]
pub struct Args {
    /// Keys loaded (random 32-byte keys).
    #[arg(long, default_value_t = 1_000_000)]
    keys: u64,
    /// Value size, bytes.
    #[arg(long, default_value_t = 110)]
    value_bytes: usize,
    /// Random existing keys read per measurement.
    #[arg(long, default_value_t = 20_000)]
    reads: u64,
    /// Random missing keys read per measurement.
    #[arg(long, default_value_t = 5_000)]
    missing_reads: u64,
    /// Backends, comma-separated.
    #[arg(long, default_value = crate::registry::POINT_READ_LIST)]
    backends: String,
    /// Cache states to measure, comma-separated: cold (store closed, page
    /// cache dropped, reopened), limited (cold, then read inside a memory
    /// cgroup of --memory-limit), warm (the same GETs again, right after a
    /// pass that cached them). Default: cold, limited when --memory-limit is
    /// set, warm.
    #[arg(long, value_name = "LIST")]
    cache: Option<String>,
    /// Memory cgroup limit of the `limited` state (page cache + heap), e.g. 256MiB.
    #[arg(long, value_name = "SIZE")]
    memory_limit: Option<String>,
    /// Engine setting, BACKEND.KEY=VALUE (TOML value); repeatable, e.g.
    /// --set rocksdb-leveled.use_direct_reads=true.
    #[arg(long = "set", value_name = "BACKEND.KEY=VALUE")]
    sets: Vec<String>,
    /// Size of each private loop device; default 3x the data plus 512 MiB.
    #[arg(long, value_name = "SIZE")]
    device_size: Option<String>,
    /// Memory budget of each engine (memtables, block cache).
    #[arg(long, value_name = "SIZE", default_value = "128MiB")]
    engine_memory: String,
    #[command(flatten)]
    level: crate::harness::DurabilityArg,
    /// Seed.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Output directory (must not exist, or be empty).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Write into an existing non-empty --out directory.
    #[arg(long)]
    force: bool,
    /// Run even from a debug build.
    #[arg(long)]
    allow_debug: bool,
}

impl Args {
    /// The `--out` given, if any.
    pub fn out(&self) -> Option<PathBuf> {
        self.out.clone()
    }
}

/// Runs `kvbench run point-reads`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    crate::output::check_build(cfg!(debug_assertions), args.allow_debug)?;
    let cfg = PointReadConfig {
        seed: args.seed,
        keys: args.keys,
        value_bytes: args.value_bytes,
        reads: args.reads,
        missing_reads: args.missing_reads,
        ..PointReadConfig::default()
    };
    cfg.validate()?;
    let limit = args
        .memory_limit
        .as_deref()
        .map(harness::memory_limit)
        .transpose()?;
    let default_states = if limit.is_some() {
        "cold,limited,warm"
    } else {
        "cold,warm"
    };
    let states = CacheState::parse_list(args.cache.as_deref().unwrap_or(default_states), limit)?;
    let dev_size = match args.device_size.as_deref() {
        Some(s) => size::parse(s).map_err(anyhow::Error::msg)?,
        None => cfg.logical_bytes() * 3 + (512 << 20),
    };
    let mut specs = harness::specs(
        &args.backends,
        &args.engine_memory,
        args.level.durability,
        &[],
    )?;
    for s in &mut specs {
        // Background compaction off, so "before" is the L0-heavy state the
        // study measured and reads do not race a compaction; the full
        // compaction is the manual one below. `--set` may still turn it on.
        if let EngineConfig::Rocksdb(c) = &mut s.config {
            c.disable_auto_compactions = true;
        }
    }
    registry::apply_sets(&mut specs, &args.sets)?;
    for s in &specs {
        s.check_durability(args.level.durability)?;
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| kvbench_driver::rundir::default_out("point-reads"));
    let rundir = RunDir::create(&out, args.force)?;
    let loop_ok = LoopFs::available();
    let mut results = PointResults {
        schema_version: kvbench_driver::results::SCHEMA_VERSION,
        workload: "point-reads".into(),
        seed: cfg.seed,
        started_at: timefmt::now_rfc3339(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        env: kvbench_driver::env::EnvInfo::capture(&out),
        config: cfg.clone(),
        memory_limit_bytes: limit,
        durability: Some(args.level.durability),
        runs: Vec::new(),
    };
    let mut failed = false;
    for spec in specs {
        let mut run = PointRun {
            backend: spec.name.clone(),
            config: serde_json::to_value(&spec.config)?,
            // Replaced once the device exists.
            device_meter: "absent: the run failed before its device was made".into(),
            load_secs: None,
            load_usage: None,
            logical_bytes: cfg.logical_bytes(),
            compact_secs: None,
            measurements: Vec::new(),
            skipped: Vec::new(),
            engine_after_load: Default::default(),
            error: None,
        };
        // One backend's failure is recorded with what it measured, and the
        // others still run.
        if let Err(e) = one_backend(
            &spec, &cfg, &states, limit, &rundir, &loop_ok, dev_size, &mut run,
        ) {
            eprintln!("[{}] failed: {e:#}", spec.name);
            run.error = Some(format!("{e:#}"));
            failed = true;
        }
        results.runs.push(run);
        crate::output::write_json(&out.join("results.json"), &results)?;
    }
    crate::output::finish(&out, &table(&results), failed)
}

/// Loads, compacts and measures one backend into `run`.
#[allow(clippy::too_many_arguments)]
fn one_backend(
    spec: &crate::registry::BackendSpec,
    cfg: &PointReadConfig,
    states: &[CacheState],
    limit: Option<u64>,
    rundir: &RunDir,
    loop_ok: &Result<(), kvbench_meter::MeterError>,
    dev_size: u64,
    run: &mut PointRun,
) -> anyhow::Result<()> {
    eprintln!("[{}] loading {} keys...", spec.name, cfg.keys);
    let dev_root = rundir.path().join("devices");
    fs::create_dir_all(&dev_root).with_context(|| format!("creating {}", dev_root.display()))?;
    let name = sanitize(&spec.name);
    let fs_guard = match loop_ok {
        Ok(()) => Some(LoopFs::create(
            &dev_root.join(format!("{name}.img")),
            &dev_root.join(&name),
            dev_size,
            0,
        )?),
        Err(_) => None,
    };
    run.device_meter = match (&fs_guard, loop_ok) {
        (Some(f), _) => format!(
            "private loop device {} (direct I/O, read-ahead 0)",
            f.device()
        ),
        (None, Err(e)) => format!("absent: {e}"),
        (None, Ok(())) => "absent".into(),
    };
    let store_dir = match &fs_guard {
        Some(f) => f.path().join("store"),
        None => rundir.store_dir(&spec.name, "points")?,
    };
    let device = || fs_guard.as_ref().and_then(|f| f.stat().ok());
    let store = spec.open(&store_dir)?;
    let usage0 = kvbench_meter::rusage::Usage::now();
    run.load_secs = Some(pointreads::load(cfg, &*store)?);
    run.load_usage = Some(kvbench_meter::rusage::Usage::now().since(&usage0));
    run.engine_after_load = store.stats()?;
    let can_compact = store.capabilities().manual_compaction;
    store.close()?;
    let mut phases = vec!["before-compaction"];
    if can_compact {
        phases.push("after-compaction");
    }
    for (round, phase) in phases.into_iter().enumerate() {
        if phase == "after-compaction" {
            eprintln!("[{}] full compaction...", spec.name);
            let store = spec.open(&store_dir)?;
            let t = std::time::Instant::now();
            store.compact()?;
            store.flush()?;
            run.compact_secs = Some(t.elapsed().as_secs_f64());
            store.close()?;
        }
        for &state in states {
            eprintln!("[{}] reading {} ({phase})...", spec.name, state.name());
            if state != CacheState::Warm {
                if let Some(f) = &fs_guard {
                    f.sync()?;
                }
                if let Err(e) = cgroup::drop_caches() {
                    let why = format!("{phase} {}: page cache not dropped ({e})", state.name());
                    eprintln!("[{}] skipped {why}", spec.name);
                    run.skipped.push(why);
                    continue;
                }
            }
            let guard = match state {
                CacheState::Limited => limit.map(MemoryLimit::enter).transpose()?,
                _ => None,
            };
            let store = spec.open(&store_dir)?;
            if state == CacheState::Warm {
                // The warm-up pass reads the very keys measured next.
                pointreads::measure(cfg, &*store, &device, round as u64)?;
            }
            let cost = pointreads::measure(cfg, &*store, &device, round as u64)?;
            let disk_allocated_bytes = store.disk_usage()?.allocated_bytes;
            store.close()?;
            drop(guard);
            run.measurements.push(Measurement {
                phase: phase.into(),
                cache: state,
                disk_allocated_bytes,
                cost,
            });
        }
    }
    Ok(())
}

fn table(r: &PointResults) -> String {
    let f = |v: Option<f64>| v.map_or("n/a".to_string(), |x| format!("{x:.2}"));
    let mut t = kvbench_report::table::Table::new(&[
        "backend",
        "phase",
        "cache",
        ">device reads / GET",
        ">device KiB / GET",
        ">major faults / GET",
        ">engine block misses / GET",
        ">device reads / missing GET",
        ">p50 / p99 us",
        ">disk MiB",
        ">mismatches",
    ]);
    let mut notes = String::new();
    for run in &r.runs {
        for m in &run.measurements {
            let c = &m.cost;
            t.row([
                run.backend.clone(),
                m.phase.clone(),
                m.cache.name().to_string(),
                f(c.device_reads_per_get),
                f(c.device_bytes_per_get.map(|b| b / 1024.0)),
                format!("{:.2}", c.major_faults_per_get),
                f(c.engine_block_misses_per_get),
                f(c.device_reads_per_missing_get),
                c.latency.as_ref().map_or("n/a".to_string(), |l| {
                    format!("{:.0} / {:.0}", l.p50_us, l.p99_us)
                }),
                format!("{:.0}", m.disk_allocated_bytes as f64 / (1 << 20) as f64),
                c.mismatches.to_string(),
            ]);
        }
        for why in &run.skipped {
            notes.push_str(&format!("\n{}: skipped {why}\n", run.backend));
        }
        if let Some(e) = &run.error {
            notes.push_str(&format!("\n{}: failed: {e}\n", run.backend));
        }
    }
    format!(
        "## Point reads: {} keys of {} + {} bytes, {} GETs per measurement, memory limit {}\n\n{}{notes}",
        r.config.keys,
        r.config.key_bytes,
        r.config.value_bytes,
        r.config.reads,
        r.memory_limit_bytes
            .map_or("none".to_string(), |b| format!("{} MiB", b >> 20)),
        t.render()
    )
}

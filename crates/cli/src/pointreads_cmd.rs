//! `kvbench run point-reads`: IO per GET on random 32-byte keys, before and
//! after a full compaction, each store on its own loop device.

use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use kvbench_driver::pointreads::{self, GetCost, PointReadConfig};
use kvbench_driver::rundir::{RunDir, sanitize};
use kvbench_driver::timefmt;
use kvbench_meter::cgroup::{self, MemoryLimit};
use kvbench_meter::loopdev::LoopFs;
use serde::Serialize;

use crate::registry::{self, EngineConfig};
use crate::{size, stellar_cmd};

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
    #[arg(long, default_value = "rocksdb-leveled,lmdb,mdbx")]
    backends: String,
    /// Memory cgroup limit during reads (page cache + heap), e.g. 256MiB; none by default.
    #[arg(long, value_name = "SIZE")]
    memory_limit: Option<String>,
    /// Size of each private loop device; default 3x the data plus 512 MiB.
    #[arg(long, value_name = "SIZE")]
    device_size: Option<String>,
    /// Memory budget of each engine (memtables, block cache).
    #[arg(long, value_name = "SIZE", default_value = "128MiB")]
    engine_memory: String,
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

#[derive(Serialize)]
struct PointRun {
    backend: String,
    config: serde_json::Value,
    /// Cache state of the measurements.
    cache: String,
    /// Where the device figures come from: a private loop device, or absent and why.
    device_meter: String,
    load_secs: f64,
    logical_bytes: u64,
    disk_allocated_bytes_before: u64,
    /// Cold: engine closed, page cache dropped, reopened; under the memory limit when set.
    before_compaction: GetCost,
    #[serde(skip_serializing_if = "Option::is_none")]
    compact_secs: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    disk_allocated_bytes_after: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    after_compaction: Option<GetCost>,
    engine_before: kvbench_core::EngineStats,
}

#[derive(Serialize)]
struct PointResults {
    schema_version: u32,
    workload: &'static str,
    seed: u64,
    started_at: String,
    command: String,
    env: kvbench_driver::env::EnvInfo,
    config: PointReadConfig,
    memory_limit_bytes: Option<u64>,
    runs: Vec<PointRun>,
}

/// Runs `kvbench run point-reads`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    stellar_cmd::check_build(cfg!(debug_assertions), args.allow_debug)?;
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
        .map(size::parse)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let dev_size = match args.device_size.as_deref() {
        Some(s) => size::parse(s).map_err(anyhow::Error::msg)?,
        None => cfg.logical_bytes() * 3 + (512 << 20),
    };
    if limit.is_some() {
        MemoryLimit::available().context("--memory-limit")?;
    }
    let memory = size::parse(&args.engine_memory).map_err(anyhow::Error::msg)?;
    let mut specs = registry::parse_list(&args.backends)?;
    for s in &mut specs {
        s.scale_memory(memory);
    }
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from("kvbench-runs").join(format!("point-reads-{}", timefmt::now_stamp()))
    });
    let rundir = RunDir::create(&out, args.force)?;
    let loop_ok = LoopFs::available();
    let mut results = PointResults {
        schema_version: kvbench_driver::results::SCHEMA_VERSION,
        workload: "point-reads",
        seed: cfg.seed,
        started_at: timefmt::now_rfc3339(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        env: kvbench_driver::env::EnvInfo::capture(&out),
        config: cfg.clone(),
        memory_limit_bytes: limit,
        runs: Vec::new(),
    };
    for mut spec in specs {
        eprintln!("[{}] loading {} keys...", spec.name, cfg.keys);
        // Background compaction off, so "before" is the L0-heavy state the
        // study measured and reads do not race a compaction; the full
        // compaction is the manual one below.
        if let EngineConfig::Rocksdb(c) = &mut spec.config {
            c.disable_auto_compactions = true;
        }
        let dev_root = rundir.path().join("devices");
        fs::create_dir_all(&dev_root)
            .with_context(|| format!("creating {}", dev_root.display()))?;
        let name = sanitize(&spec.name);
        let fs_guard = match &loop_ok {
            Ok(()) => Some(LoopFs::create(
                &dev_root.join(format!("{name}.img")),
                &dev_root.join(&name),
                dev_size,
                0,
            )?),
            Err(_) => None,
        };
        let device_meter = match (&fs_guard, &loop_ok) {
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
        let cache_note = std::cell::RefCell::new(String::from(
            "cold: store closed, page cache dropped, store reopened",
        ));
        let store = spec.open(&store_dir)?;
        let load_secs = pointreads::load(&cfg, &*store)?;
        store.close()?;
        let cold = |round: u64| -> anyhow::Result<(GetCost, kvbench_core::EngineStats, u64)> {
            if let Some(f) = &fs_guard {
                f.sync()?;
            }
            if let Err(e) = cgroup::drop_caches() {
                cache_note.replace(format!("warm: page cache not dropped ({e})"));
            }
            let guard = limit.map(MemoryLimit::enter).transpose()?;
            let store = spec.open(&store_dir)?;
            let cost = pointreads::measure(&cfg, &*store, &device, round)?;
            let stats = store.stats()?;
            let disk = store.disk_usage()?.allocated_bytes;
            store.close()?;
            drop(guard);
            Ok((cost, stats, disk))
        };
        eprintln!("[{}] reading cold (before compaction)...", spec.name);
        let (before, engine_before, disk_before) = cold(0)?;
        let mut run = PointRun {
            backend: spec.name.clone(),
            cache: String::new(),
            config: serde_json::to_value(&spec.config)?,
            device_meter,
            load_secs,
            logical_bytes: cfg.logical_bytes(),
            disk_allocated_bytes_before: disk_before,
            before_compaction: before,
            compact_secs: None,
            disk_allocated_bytes_after: None,
            after_compaction: None,
            engine_before,
        };
        let store = spec.open(&store_dir)?;
        if store.capabilities().manual_compaction {
            eprintln!("[{}] full compaction...", spec.name);
            let t = std::time::Instant::now();
            store.compact()?;
            store.flush()?;
            run.compact_secs = Some(t.elapsed().as_secs_f64());
            store.close()?;
            eprintln!("[{}] reading cold (after compaction)...", spec.name);
            let (after, _, disk_after) = cold(1)?;
            run.after_compaction = Some(after);
            run.disk_allocated_bytes_after = Some(disk_after);
        } else {
            store.close()?;
        }
        run.cache = cache_note.into_inner();
        results.runs.push(run);
        drop(fs_guard);
        fs::write(
            out.join("results.json"),
            serde_json::to_vec_pretty(&results)?,
        )?;
    }
    println!("{}", table(&results));
    eprintln!("results: {}", out.join("results.json").display());
    Ok(ExitCode::SUCCESS)
}

fn table(r: &PointResults) -> String {
    let f = |v: Option<f64>| v.map_or("n/a".to_string(), |x| format!("{x:.2}"));
    let mut s = format!(
        "## Point reads: {} keys of {} + {} bytes, {} cold GETs, memory limit {}\n\n\
         | backend | state | device reads / GET | device KiB / GET | major faults / GET | engine block misses / GET | device reads / missing GET | p50 / p99 us | mismatches |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|\n",
        r.config.keys,
        r.config.key_bytes,
        r.config.value_bytes,
        r.config.reads,
        r.memory_limit_bytes
            .map_or("none".to_string(), |b| format!("{} MiB", b >> 20)),
    );
    for run in &r.runs {
        let mut row = |state: &str, c: &GetCost| {
            s.push_str(&format!(
                "| {} | {state} | {} | {} | {:.2} | {} | {} | {} | {} |\n",
                run.backend,
                f(c.device_reads_per_get),
                f(c.device_bytes_per_get.map(|b| b / 1024.0)),
                c.major_faults_per_get,
                f(c.engine_block_misses_per_get),
                f(c.device_reads_per_missing_get),
                c.latency.as_ref().map_or("n/a".to_string(), |l| format!(
                    "{:.0} / {:.0}",
                    l.p50_us, l.p99_us
                )),
                c.mismatches
            ));
        };
        row("before compaction", &run.before_compaction);
        if let Some(a) = &run.after_compaction {
            row("after full compaction", a);
        }
    }
    s
}

//! `kvbench run stellar`: config assembly, the per-backend loop, output files.

use std::fs::{self, File};
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

mod plan;

use crate::output::{check_build, finish, write_json};

use plan::{Plan, plan};

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};
use kvbench_core::{Durability, KvStore};
use kvbench_driver::env::EnvInfo;
use kvbench_driver::results::{BackendRun, BatchRecord, RunResult, SCHEMA_VERSION};
use kvbench_driver::rundir::RunDir;
use kvbench_driver::stellar::{self, CompactionStrategy, Observer, StellarConfig};
use kvbench_driver::timefmt;
use kvbench_workloads::stellar::STORES;
use serde::Deserialize;

use kvbench_meter::cgroup::MemoryLimit;

use crate::harness::{self, Placement};
use crate::registry::{self, BackendSpec, EngineConfig};
use crate::{presets, size, table};

/// Options of `kvbench run stellar`. Precedence: flags over the run file over the preset.
#[derive(clap::Args)]
pub struct Args {
    /// Preset: smoke, quick, month-scaled or seed.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(crate::presets::NAMES))]
    preset: Option<String>,
    /// TOML run file (preset, backends, stores, [workload] and [backend.NAME] tables).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Backends to run in turn, comma-separated, each holding all three stores.
    #[arg(long, value_name = "LIST")]
    backends: Option<String>,
    /// One backend for all three stores (same as --backends NAME).
    #[arg(long, value_name = "NAME", conflicts_with = "backends")]
    backend: Option<String>,
    /// A hybrid run: STORE=BACKEND, once per store (ledgers, txdata, txindex).
    #[arg(long = "store", value_name = "STORE=BACKEND")]
    stores: Vec<String>,
    #[command(flatten)]
    shape: ShapeArgs,
    #[command(flatten)]
    level: crate::harness::DurabilityArg,
    /// Memory budget of each engine (memtables, block cache), e.g. 64MiB.
    #[arg(long, value_name = "SIZE")]
    engine_memory: Option<String>,
    /// Place each run in a memory cgroup of SIZE (page cache and engine
    /// caches together), after dropping the page cache; needs root.
    /// `none` turns off a preset's default limit (month-scaled: 320MiB).
    #[arg(long, value_name = "SIZE")]
    memory_limit: Option<String>,
    /// Ledgers streamed after ingestion with concurrent lookups (0 skips).
    #[arg(long)]
    streaming_ledgers: Option<u64>,
    /// Milliseconds between streamed ledgers (0: as fast as possible).
    #[arg(long)]
    close_interval_ms: Option<u64>,
    /// Lookup threads during streaming.
    #[arg(long)]
    lookup_workers: Option<usize>,
    /// Output directory (must not exist, or be empty); default kvbench-runs/stellar-TIMESTAMP.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Write into an existing non-empty --out directory (nothing in it is deleted).
    #[arg(long)]
    force: bool,
    /// Keep the store directories after each backend (default: removed to free disk).
    #[arg(long)]
    keep_stores: bool,
    /// Private device per store: auto (a loop device when root and available), loop, none.
    #[arg(long, value_enum, default_value_t = harness::DeviceMode::Auto)]
    device: harness::DeviceMode,
    /// Size of each private device (sparse); default from the workload's size.
    #[arg(long, value_name = "SIZE")]
    device_size: Option<String>,
    /// Run every backend K times (interleaved), so `kvbench compare` can
    /// judge timings against noise.
    #[arg(long, value_name = "K", default_value_t = 1)]
    repeat: u32,
    /// Run even from a debug build (its numbers mislead; for testing the harness only).
    #[arg(long)]
    allow_debug: bool,
}

impl Args {
    /// The `--out` given, if any.
    pub fn out(&self) -> Option<PathBuf> {
        self.out.clone()
    }
}

/// Flags that shape the Stellar ingestion protocol (`run stellar`, `record stellar`).
#[derive(clap::Args)]
pub struct ShapeArgs {
    /// Ledgers to ingest.
    #[arg(long)]
    ledgers: Option<u64>,
    /// Ledgers per batch.
    #[arg(long)]
    batch_ledgers: Option<u32>,
    /// Ledgers per write commit inside a batch.
    #[arg(long)]
    commit_ledgers: Option<u32>,
    /// Seed of every generator.
    #[arg(long)]
    pub seed: Option<u64>,
    /// After each batch: manual, background or none.
    #[arg(long, value_parser = ["manual", "background", "none"])]
    compaction: Option<String>,
}

impl ShapeArgs {
    /// Applies the flags that were given to `w`.
    pub fn apply(&self, w: &mut StellarConfig) -> anyhow::Result<()> {
        if let Some(v) = self.ledgers {
            w.ledgers = v;
        }
        if let Some(v) = self.batch_ledgers {
            w.batch_ledgers = v;
        }
        if let Some(v) = self.commit_ledgers {
            w.commit_ledgers = v;
        }
        if let Some(v) = self.seed {
            w.seed = v;
        }
        if let Some(c) = &self.compaction {
            w.compaction = parse_compaction(c)?;
        }
        Ok(())
    }
}

struct Progress {
    bar: ProgressBar,
    jsonl: BufWriter<File>,
    jsonl_path: PathBuf,
    started: Instant,
    ledgers: u64,
    tty: bool,
    label: String,
    write_error: Option<std::io::Error>,
}

impl Observer for Progress {
    fn batch_done(&mut self, rec: &BatchRecord, total: u32) {
        self.ledgers += u64::from(rec.ledgers);
        let line = serde_json::to_string(rec).unwrap_or_default();
        // Flushed per line: a killed run keeps every finished batch.
        if let Err(e) = writeln!(self.jsonl, "{line}").and_then(|_| self.jsonl.flush()) {
            self.write_error.get_or_insert(e);
        }
        let rate = self.ledgers as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
        let msg = format!(
            "{rate:.1} ledgers/s, batch {:.2}s, txdata compact {}",
            rec.total_secs,
            rec.stores[1]
                .compact_secs
                .map_or("-".to_string(), |s| format!("{s:.2}s"))
        );
        self.bar.set_length(u64::from(total));
        self.bar.set_position(u64::from(rec.batch));
        self.bar.set_message(msg.clone());
        let step = (total / 10).max(1);
        if !self.tty && (rec.batch.is_multiple_of(step) || rec.batch == total) {
            eprintln!("[{}] batch {}/{}: {msg}", self.label, rec.batch, total);
        }
    }

    fn phase(&mut self, name: &str) {
        self.bar.set_message(format!("{name}..."));
        if !self.tty {
            eprintln!("[{}] {name}...", self.label);
        }
    }
}

/// Runs `kvbench run stellar`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    check_build(cfg!(debug_assertions), args.allow_debug)?;
    // Every check before anything is created on disk.
    if args.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    let mut plan = plan(&args)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| kvbench_driver::rundir::default_out("stellar"));
    let rundir = RunDir::create(&out, args.force)?;
    if let Some(size) = plan.device_size {
        // Images are sparse, but a store that outgrows the free space under
        // its image gets I/O errors instead of ENOSPC: refuse that setup.
        let free = kvbench_core::fsutil::free_bytes(&out).unwrap_or(0);
        if free < size.saturating_mul(3) {
            let msg = format!(
                "{} has {} MiB free, less than three private devices of {} MiB",
                out.display(),
                free >> 20,
                size >> 20
            );
            if args.device == harness::DeviceMode::Loop {
                bail!("--device loop: {msg}; give --device-size or free disk");
            }
            eprintln!(
                "kvbench: {msg}; stores share the data directory instead (device figures absent)"
            );
            plan.device_size = None;
        }
    }
    let jsonl_path = out.join("batches.jsonl");
    let mut result = RunResult {
        schema_version: SCHEMA_VERSION,
        kvbench_version: env!("CARGO_PKG_VERSION").to_string(),
        workload: "stellar".into(),
        preset: Some(plan.preset.clone()),
        seed: plan.workload.seed,
        started_at: timefmt::now_rfc3339(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        env: EnvInfo::capture(&out),
        config: serde_json::to_value(&plan.workload)?,
        durability: Some(plan.durability),
        runs: Vec::new(),
    };
    let tty = std::io::stderr().is_terminal();
    eprintln!(
        "kvbench: stellar preset {} ({} ledgers, batches of {}, compaction {:?}), seed {}, {} run(s); output in {}",
        plan.preset,
        plan.workload.ledgers,
        plan.workload.batch_ledgers,
        plan.workload.compaction,
        plan.workload.seed,
        plan.runs.len(),
        out.display()
    );
    let mut failed = false;
    // Repeats interleave backends (a, b, a, b), so slow drift of the machine
    // spreads over all of them instead of biasing one.
    let each = (0..args.repeat).flat_map(|r| plan.runs.iter().map(move |x| (r, x)));
    // Written before the first run too, so a run killed midway (by its
    // memory limit, say) has a results file to be recorded in.
    write_json(&out.join("results.json"), &result)?;
    for (repeat, (label, specs)) in each {
        crate::supervise::note_current_run(&out, label, repeat);
        let mut run = run_one(
            &plan,
            &RunId { label, repeat },
            specs,
            &rundir,
            &jsonl_path,
            tty,
            args.keep_stores,
            &mut result.env,
        );
        run.repeat = repeat;
        if let Some(e) = &run.error {
            failed = true;
            eprintln!("[{label}] failed: {e}");
        }
        result.runs.push(run);
        // Rewritten after every backend so a later crash keeps the earlier runs.
        write_json(&out.join("results.json"), &result)?;
        crate::supervise::clear_current_run(&out);
    }
    finish(&out, &table::stellar_summary(&result), failed)
}

/// Parses a compaction strategy name.
pub fn parse_compaction(name: &str) -> anyhow::Result<CompactionStrategy> {
    Ok(match name {
        "manual" => CompactionStrategy::Manual,
        "background" => CompactionStrategy::Background,
        "none" => CompactionStrategy::None,
        other => bail!(
            "unknown compaction strategy `{other}`; accepted: {}",
            CompactionStrategy::NAMES
        ),
    })
}

/// A run's label and repeat number.
struct RunId<'a> {
    label: &'a str,
    repeat: u32,
}

impl RunId<'_> {
    /// Label of its files and batch records: repeats after the first get `#N`.
    fn tag(&self) -> String {
        match self.repeat {
            0 => self.label.to_string(),
            r => format!("{}#{}", self.label, r + 1),
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn run_one(
    plan: &Plan,
    id: &RunId<'_>,
    specs: &[BackendSpec; 3],
    rundir: &RunDir,
    jsonl_path: &Path,
    tty: bool,
    keep_stores: bool,
    env: &mut EnvInfo,
) -> BackendRun {
    let tag = id.tag();
    let label = tag.as_str();
    let mut run = harness::new_run(id.label, plan.memory_limit);
    let jsonl = match fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(jsonl_path)
    {
        Ok(f) => BufWriter::new(f),
        Err(e) => {
            run.error = Some(format!("opening {}: {e}", jsonl_path.display()));
            return run;
        }
    };
    let bar = if tty {
        ProgressBar::new(u64::from(
            plan.workload
                .ledgers
                .div_ceil(u64::from(plan.workload.batch_ledgers)) as u32,
        ))
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix:>18} [{bar:30}] {pos}/{len} batches, ETA {eta} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_prefix(label.to_string());
    let mut progress = Progress {
        bar,
        jsonl,
        jsonl_path: jsonl_path.to_path_buf(),
        started: Instant::now(),
        ledgers: 0,
        tty,
        label: label.to_string(),
        write_error: None,
    };
    let place = Placement {
        memory_limit: plan.memory_limit,
        device_size: plan.device_size,
        read_ahead_kb: 128,
        keep_stores,
    };
    let names: Vec<String> = STORES.iter().map(|s| s.to_string()).collect();
    let mut outcome = None;
    harness::run_on_stores(
        &place,
        label,
        &names,
        specs,
        rundir,
        env,
        &mut run,
        &mut |stores, devs| {
            let stores: [&dyn KvStore; 3] = [stores[0], stores[1], stores[2]];
            let devs = [devs[0], devs[1], devs[2]];
            let mut o = stellar::run(&plan.workload, label, stores, devs, &mut progress);
            let err = o.error.take();
            outcome = Some(o);
            err
        },
    );
    progress.bar.finish_and_clear();
    if let Some(o) = outcome {
        run.batches = o.batches;
        run.summary = o.summary;
        run.streaming = o.streaming;
        run.ingest_samples = o.ingest_samples;
        run.phases = o.phases;
    }
    if let Some(e) = progress.write_error {
        run.error
            .get_or_insert(format!("writing {}: {e}", progress.jsonl_path.display()));
    }
    run
}

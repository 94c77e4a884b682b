//! `ledgerbench run stellar`: config assembly, the per-backend loop, output files.

use ledgerbench_driver::results::workload::WorkloadConfig;
use ledgerbench_report::doc::Doc;
use ledgerbench_report::export::RunSummary;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod cells;
#[cfg(test)]
mod fuzz_tests;
mod plan;

pub use cells::planned;

use crate::output::write_json;

use plan::{Plan, plan};

use anyhow::{Context, bail};
use ledgerbench_core::{Durability, KvStore};
use ledgerbench_driver::env::EnvInfo;
use ledgerbench_driver::results::{BackendRun, RunResult};
use ledgerbench_driver::rundir::RunDir;
use ledgerbench_driver::stellar::{self, CompactionStrategy, StellarConfig};
use ledgerbench_workloads::stellar::STORES;
use serde::Deserialize;

use ledgerbench_meter::cgroup::MemoryLimit;

use crate::harness::{self, Placement};
use crate::observe::{JsonlSink, ProgressView};
use crate::registry::{self, BackendSpec};
use crate::{presets, size};

use ledgerbench_driver::observe::Fanout;

/// A directory where pregenerated ledgers (`--pregenerate`) are kept and
/// reused by later runs of the same settings by the same binary; `ab` sets
/// it, one per side, so its rounds do not each generate them again.
pub const SPOOL_CACHE_ENV: &str = "LEDGERBENCH_SPOOL_CACHE";

/// Options of `ledgerbench run stellar`. Precedence: flags over the run file over the preset.
#[derive(clap::Args)]
pub struct Args {
    /// Preset (see `ledgerbench list`): smoke, quick, month-scaled, outgrow-memory or seed.
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
    #[command(flatten)]
    limit: crate::flags::MemoryLimitArg,
    #[command(flatten)]
    set: crate::flags::SetArgs,
    /// Ledgers streamed after ingestion with concurrent lookups (0 skips).
    #[arg(long)]
    streaming_ledgers: Option<u64>,
    /// Milliseconds between streamed ledgers (0: as fast as possible).
    #[arg(long)]
    close_interval_ms: Option<u64>,
    /// Lookup threads during streaming, beside the one writer streaming
    /// ledgers in (`--readers` is the same flag).
    #[arg(long, visible_alias = "readers")]
    lookup_workers: Option<usize>,
    /// Open-loop lookups during streaming: this many per second arrive on a
    /// schedule whether or not earlier ones returned, latency counted from
    /// when each was due (default: closed loop).
    #[arg(long, value_name = "PER_SEC")]
    lookup_rate: Option<f64>,
    /// Arrival of open-loop lookups: fixed (evenly spaced) or poisson.
    #[arg(long, value_parser = ["fixed", "poisson"])]
    arrival: Option<String>,
    /// A rate sweep: the streaming phase once per rate (open loop), and the
    /// highest rate whose corrected p99 stays within --p99-bound-ms.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    lookup_rates: Vec<f64>,
    /// The corrected p99 a sustained lookup rate must stay within, ms.
    #[arg(long, value_name = "MS")]
    p99_bound_ms: Option<f64>,
    /// Keep the store directories after each backend (default: removed to free disk).
    #[arg(long)]
    keep_stores: bool,
    #[command(flatten)]
    place: crate::flags::DeviceArgs,
    /// Run every backend K times (interleaved), so `ledgerbench compare` can
    /// judge timings against noise.
    #[arg(long, value_name = "K", default_value_t = 1)]
    repeat: u32,
    /// A job file of `ledgerbench plan`: run only its cell (set by
    /// `ledgerbench run --job`, not for direct use).
    #[arg(long, value_name = "FILE", hide = true)]
    cell: Option<PathBuf>,
    #[command(flatten)]
    output: crate::flags::OutputArgs,
}

impl Args {
    /// Where the run writes.
    pub fn output(&self) -> &crate::flags::OutputArgs {
        &self.output
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
    /// Ledgers per write commit inside a batch (0: the largest that fits
    /// the harness budget). A batch is flushed and compacted as one
    /// whatever its commits.
    #[arg(long)]
    commit_ledgers: Option<u32>,
    /// Most heap ledgerbench may hold for generated data (commit chunks in
    /// flight), e.g. 64MiB; recorded with the run.
    #[arg(long, value_name = "SIZE")]
    harness_budget: Option<String>,
    /// Seed of every generator.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run every backend once per memory limit in this list (e.g.
    /// 512MiB,256MiB,128MiB), labelled NAME@LIMIT: the data/memory ratios
    /// the report's cost model is fitted to and checked against.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub(super) sweep_limits: Vec<String>,
    /// End a backend's ingestion after the first batch slower than this
    /// many seconds (recorded as where it fell off, not as a failure).
    #[arg(long, value_name = "SECS")]
    max_batch_secs: Option<f64>,
    /// After each batch: manual, background or none.
    #[arg(long, value_parser = ["manual", "background", "none"])]
    compaction: Option<String>,
    /// Generate every ledger before the timed ingestion (into a spool file
    /// in the run directory, removed after) and stream it from there, so
    /// the engines, not the generator, set the pace.
    #[arg(long)]
    pregenerate: bool,
}

impl ShapeArgs {
    /// The flags given that shape a run but not a recorded trace (`ledgerbench
    /// record` refuses them rather than ignore them); with `stellar` false,
    /// every flag but --seed (a generated workload takes --param).
    pub fn not_for_record(&self, stellar: bool) -> Vec<&'static str> {
        let mut given = Vec::new();
        let mut flag = |on: bool, name| {
            if on {
                given.push(name);
            }
        };
        flag(!self.sweep_limits.is_empty(), "--sweep-limits");
        flag(self.max_batch_secs.is_some(), "--max-batch-secs");
        flag(self.pregenerate, "--pregenerate");
        if !stellar {
            flag(self.ledgers.is_some(), "--ledgers");
            flag(self.batch_ledgers.is_some(), "--batch-ledgers");
            flag(self.commit_ledgers.is_some(), "--commit-ledgers");
            flag(self.harness_budget.is_some(), "--harness-budget");
            flag(self.compaction.is_some(), "--compaction");
        }
        given
    }

    /// Applies the flags that were given to `w`.
    pub fn apply(&self, w: &mut StellarConfig) -> anyhow::Result<()> {
        if let Some(v) = self.ledgers {
            w.ledgers = v;
        }
        if let Some(v) = self.max_batch_secs {
            w.max_batch_secs = Some(v);
        }
        if self.pregenerate {
            w.pregenerate = true;
        }
        if let Some(s) = &self.harness_budget {
            w.harness_budget = size::parse_named("--harness-budget", s)?;
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

/// Runs `ledgerbench run stellar`.
///
/// Long because it is a run's steps in order (plan, run directory, results
/// resumed after an OOM kill, one run per planned run and repeat), with the
/// results rewritten after each so a killed run keeps what it finished.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    args.output.check_build()?;
    // Every check before anything is created on disk.
    if args.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    let mut plan = plan(&args)?;
    let cell = cells::the_cell(&args, &plan)?;
    // A resumed worker adopts the directory its supervisor claimed.
    let (out, rundir) = args.output.create("stellar")?;
    if let Some(size) = plan.device_size {
        // Images are sparse, but a store that outgrows the free space under
        // its image gets I/O errors instead of ENOSPC: refuse that setup.
        let free = ledgerbench_core::fsutil::free_bytes(&out).unwrap_or(0);
        if free < size.saturating_mul(3) {
            let msg = format!(
                "{} has {} MiB free, less than three private devices of {} MiB",
                out.display(),
                free >> 20,
                size >> 20
            );
            if args.place.device == harness::DeviceMode::Loop {
                bail!("--device loop: {msg}; give --device-size or free disk");
            }
            ledgerbench_core::note!(
                "ledgerbench: {msg}; stores share the data directory instead (device figures absent)"
            );
            plan.device_size = None;
        }
    }
    let jsonl_path = out.join("batches.jsonl");
    let mut result = RunResult {
        header: ledgerbench_driver::env::header(
            "stellar",
            plan.workload.seed,
            &out,
            Some(plan.durability),
        ),
        preset: Some(plan.preset.clone()),
        config: WorkloadConfig::Stellar(Box::new(plan.workload.clone())),
        runs: Vec::new(),
    };
    result.header.cell = cell.as_ref().map(|(_, c)| c.clone());
    ledgerbench_core::note!(
        "ledgerbench: stellar preset {} ({} ledgers, batches of {}, compaction {:?}), seed {}, {} run(s); output in {}",
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
    // A plan's job runs its one cell, with the repeat index it has in the
    // whole sweep, so its label and seed are the sweep's.
    let each = (0..args.repeat)
        .flat_map(|r| plan.runs.iter().map(move |x| (r, x)))
        .filter(|(r, x)| {
            cell.as_ref()
                .is_none_or(|(j, _)| j.repeat == *r && j.label == x.label)
        });
    // A worker going on after a predecessor ended by the memory limit or
    // the watchdog keeps what is in the results and runs the rest.
    if let Some(prev) = crate::supervise::resumed_runs(&out) {
        failed = prev.iter().any(|r| r.error.is_some());
        result.runs = prev;
    }
    // Written before the first run too, so a run killed midway (by its
    // memory limit, say) has a results file to be recorded in.
    write_json(&out.join("results.json"), &result)?;
    for (repeat, planned) in each {
        let (label, memory_limit) = (&planned.label, &planned.memory_limit);
        if result
            .runs
            .iter()
            .any(|r| r.label == *label && r.repeat == repeat)
        {
            continue;
        }
        crate::supervise::note_current_run(&out, label, repeat, *memory_limit, args.keep_stores);
        let mut run = run_one(
            &plan,
            &RunId {
                label,
                design: &planned.design,
                repeat,
                memory_limit: *memory_limit,
            },
            &planned.specs,
            (&rundir, &jsonl_path),
            args.keep_stores,
            &mut result.header.env,
        );
        run.repeat = repeat;
        if let Some(e) = &run.error {
            failed = true;
            ledgerbench_core::note!("[{label}] failed: {e}");
        }
        result.runs.push(run);
        // Rewritten after every backend so a later crash keeps the earlier runs.
        write_json(&out.join("results.json"), &result)?;
        crate::supervise::clear_current_run(&out);
    }
    let summary = RunSummary::text(&Doc::Stellar(Box::new(result)));
    args.output.finish(&out, &summary, failed)
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
    /// The design without the limit (see `PlannedRun::design`).
    design: &'a str,
    repeat: u32,
    memory_limit: Option<u64>,
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

/// Runs one planned run: its stores placed in `rundir`, its batches
/// appended to the JSON lines at `jsonl_path` as they finish.
fn run_one(
    plan: &Plan,
    id: &RunId<'_>,
    specs: &[BackendSpec; 3],
    (rundir, jsonl_path): (&RunDir, &Path),
    keep_stores: bool,
    env: &mut EnvInfo,
) -> BackendRun {
    let tag = id.tag();
    let label = tag.as_str();
    let mut run = harness::new_run(id.label, id.memory_limit);
    run.design = Some(id.design.to_string());
    let mut jsonl = JsonlSink::append(jsonl_path, label);
    let mut view = ProgressView::new(label);
    let place = Placement {
        memory_limit: id.memory_limit,
        // The harness's heap is bounded by its budget (commit chunks are
        // sized to it), so that much is added to the cgroup for it.
        harness_allowance: plan.workload.harness_budget,
        device_size: plan.device_size,
        read_ahead_kb: plan.read_ahead_kb,
        keep_stores,
    };
    let names: Vec<String> = STORES.iter().map(|s| s.to_string()).collect();
    let mut outcome = None;
    let cache = std::env::var_os(SPOOL_CACHE_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    harness::run_on_stores(
        &place,
        label,
        (&names, specs),
        rundir,
        env,
        &mut run,
        &mut |stores, devs| {
            let stores: [&dyn KvStore; 3] = [stores[0], stores[1], stores[2]];
            let devs = [devs[0], devs[1], devs[2]];
            let mut observer = Fanout(vec![&mut jsonl, &mut view]);
            let mut o = stellar::run_spooled(
                &plan.workload,
                label,
                stores,
                devs,
                &mut observer,
                Some(stellar::SpoolAt {
                    dir: rundir.path(),
                    cache: cache.as_deref(),
                    drop_behind: id.memory_limit.is_some(),
                }),
            );
            let err = o.error.take();
            outcome = Some(o);
            err
        },
    );
    view.finish();
    if let Some(o) = outcome {
        run.batches = o.batches;
        run.summary = o.summary;
        run.lookup_reads = o.lookup_reads;
        run.streaming = o.streaming;
        run.ingest_samples = o.ingest_samples;
        run.phases = o.phases;
        run.stopped_early = o.stopped;
    }
    if let Some(e) = jsonl.take_error() {
        run.error.get_or_insert(e);
    }
    run
}

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
pub mod resume;
mod shape;

pub use shape::ShapeArgs;

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
    /// Start even when the stores will not fit the free disk by the
    /// estimate (a disk something else is freeing; to see where it fills).
    #[arg(long)]
    no_disk_check: bool,
    #[command(flatten)]
    place: crate::flags::DeviceArgs,
    /// Run every backend K times (interleaved), so `ledgerbench compare` can
    /// judge timings against noise.
    #[arg(long, value_name = "K", default_value_t = 1)]
    repeat: u32,
    /// Go on with the checkpointed run in DIR (`--checkpoint`, `--preset
    /// month`) from its last complete batch, with its own command line and
    /// the same build; what it finished is kept.
    #[arg(long, value_name = "DIR", exclusive = true)]
    pub resume: Option<PathBuf>,
    /// The memory limit as the data at the last batch over it: `c5` (4.8,
    /// the report's c5.4xlarge: txdata 150 GB over 32 GB), `i4i` (1.2, its
    /// i4i.4xlarge's 128 GB) or a number; counts txdata, as the report did.
    #[arg(long, value_name = "RATIO", conflicts_with_all = ["memory_limit", "sweep_limits"])]
    ratio: Option<String>,
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
    let mut going_on = crate::supervise::is_resume()
        .then(|| resume::in_progress(&out))
        .flatten();
    ledgerbench_core::note!("ledgerbench: {}", plan::expected(&plan, &out));
    // Images are sparse, but a store that outgrows the free space under
    // its image gets I/O errors instead of ENOSPC: refuse what will not fit.
    let free = ledgerbench_core::fsutil::free_bytes(&out).unwrap_or(0);
    if let Some(size) = plan.device_size.filter(|_| going_on.is_none())
        && free < size.saturating_mul(3)
    {
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
    if going_on.is_none() && !args.no_disk_check && free < plan.disk_needed() {
        bail!(
            "{} has {} MiB free; this run's stores may need {} MiB at the end: free disk, give --out on a larger disk, run fewer ledgers, or start anyway with --no-disk-check",
            out.display(),
            free >> 20,
            plan.disk_needed() >> 20
        );
    }
    if plan.workload.checkpoint && !crate::supervise::is_resume() {
        resume::record_command(&out)?;
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
    if let Some(prev) = crate::supervise::resumed(&out) {
        // The run began when its first process did, not at this resume.
        result.header.started_at = prev.header.started_at;
        result.runs = prev.runs;
    }
    // Written before the first run too, so a run killed midway (by its
    // memory limit, say) has a results file to be recorded in.
    write_json(&out.join("results.json"), &result)?;
    for (repeat, planned) in each {
        let (label, memory_limit) = (&planned.label, &planned.memory_limit);
        // The checkpointed run in progress goes on; the others recorded
        // are done.
        let going = going_on
            .as_ref()
            .is_some_and(|p| p.label == *label && p.repeat == repeat);
        if !going
            && result
                .runs
                .iter()
                .any(|r| r.label == *label && r.repeat == repeat)
        {
            continue;
        }
        let id = RunId {
            label,
            design: &planned.design,
            repeat,
            memory_limit: *memory_limit,
        };
        let keep = match plan.workload.checkpoint {
            true => crate::supervise::Keep::Checkpoint,
            false => crate::supervise::Keep::from(args.keep_stores),
        };
        crate::supervise::note_current_run(&out, label, repeat, *memory_limit, keep);
        let from = going_on
            .take_if(|p| p.label == *label && p.repeat == repeat)
            .map(|p| resume::resume(&out, &p, &id.tag(), &mut result.runs))
            .transpose()?;
        let mut run = run_one(
            &plan,
            &id,
            &planned.specs,
            (&rundir, &jsonl_path),
            (args.keep_stores, from),
            &mut result.header.env,
        );
        run.repeat = repeat;
        if let Some(e) = &run.error {
            ledgerbench_core::note!("[{label}] failed: {e}");
        }
        result.runs.push(run);
        // Rewritten after every backend so a later crash keeps the earlier runs.
        write_json(&out.join("results.json"), &result)?;
        crate::supervise::clear_current_run(&out);
    }
    // Failed when a run in the results failed: a stopped run that was
    // resumed and finished has given way to its finished record.
    let failed = result.runs.iter().any(|r| r.error.is_some());
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

/// The batches a resumed run completed before, and its stops.
type From = (
    Vec<ledgerbench_driver::results::BatchRecord>,
    Vec<ledgerbench_driver::results::Resume>,
);

/// Runs one planned run: its stores placed in `rundir` (or, going on
/// `from` a checkpoint, the ones kept there), its batches appended to the
/// JSON lines at `jsonl_path` as they finish.
///
/// Long because placing, running and recording one run, checkpointed or not, share its meters and records.
fn run_one(
    plan: &Plan,
    id: &RunId<'_>,
    specs: &[BackendSpec; 3],
    (rundir, jsonl_path): (&RunDir, &Path),
    (keep_stores, from): (bool, Option<From>),
    env: &mut EnvInfo,
) -> BackendRun {
    let tag = id.tag();
    let label = tag.as_str();
    let mut run = harness::new_run(id.label, id.memory_limit);
    run.design = Some(id.design.to_string());
    let reattach = from.is_some();
    let (mut done, resumes) = from.unwrap_or_default();
    run.resumes = resumes.clone();
    if plan.workload.checkpoint {
        let now = resume::InProgress {
            label: id.label.to_string(),
            repeat: id.repeat,
            resumes,
        };
        if let Err(e) = resume::start(rundir.path(), &now) {
            run.error = Some(format!("{e:#}"));
            return run;
        }
    }
    let mut jsonl = JsonlSink::append(jsonl_path, label);
    let mut view = ProgressView::new(label);
    let cache = std::env::var_os(SPOOL_CACHE_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let place = Placement {
        memory_limit: id.memory_limit,
        // The harness's heap is bounded by its budget (commit chunks are
        // sized to it), so that much is added to the cgroup for it.
        harness_allowance: plan.workload.harness_budget,
        device_size: plan.device_size,
        read_ahead_kb: plan.read_ahead_kb,
        keep_stores,
        reattach,
        // A spool reused from the cache is read during the run.
        inputs: cache.iter().cloned().collect(),
        seed_from: None,
        save_to: None,
    };
    let names: Vec<String> = STORES.iter().map(|s| s.to_string()).collect();
    let mut outcome = None;
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
            let mut o = stellar::run_resumed(
                &plan.workload,
                label,
                (stores, devs),
                &mut observer,
                Some(stellar::SpoolAt {
                    dir: rundir.path(),
                    cache: cache.as_deref(),
                    drop_behind: id.memory_limit.is_some(),
                }),
                std::mem::take(&mut done),
            );
            let err = o.error.take();
            outcome = Some(o);
            err
        },
    );
    view.finish();
    // Finished or failed in this process: its stores went with it.
    resume::end(rundir.path());
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

//! `ledgerbench run micro`: db_bench's staple benchmarks on every backend,
//! printed in db_bench's layout beside ledgerbench's percentiles.

use std::process::ExitCode;

use ledgerbench_driver::micro::{self, MicroConfig, MicroResults, MicroRun};
use ledgerbench_driver::observe::Observer;
use ledgerbench_driver::rundir::RunDir;
use ledgerbench_report::doc::Doc;
use ledgerbench_report::export::RunSummary;

use crate::harness::{self, Placement};
use crate::observe::ProgressView;

/// Options of `ledgerbench run micro` (db_bench's flags, dashes for underscores).
#[derive(clap::Args)]
pub struct Args {
    /// Benchmarks in order: fillseq, fillrandom, overwrite, readrandom,
    /// readseq, seekrandom, deleterandom, readwhilewriting. Fills start
    /// from an empty store, as db_bench's do.
    #[arg(
        long,
        default_value = "fillseq,fillrandom,overwrite,readrandom,readseq,seekrandom,deleterandom,readwhilewriting"
    )]
    benchmarks: String,
    /// Keys in the key space; fills write this many.
    #[arg(long, default_value_t = 1_000_000)]
    num: u64,
    /// Reads per reading thread (default: --num).
    #[arg(long)]
    reads: Option<u64>,
    /// Key bytes.
    #[arg(long, default_value_t = 16)]
    key_size: usize,
    /// Value bytes.
    #[arg(long, default_value_t = 100)]
    value_size: usize,
    /// Threads of every benchmark but fillseq and readseq, each writing
    /// --num or reading --reads, as db_bench's threads do
    /// (readwhilewriting's writer is one more thread).
    #[arg(long, default_value_t = 1)]
    threads: u64,
    /// Puts per commit.
    #[arg(long, default_value_t = 1)]
    batch_size: u64,
    /// Backends, comma-separated (default: every backend but the nulls).
    #[arg(long, env = crate::registry::BACKENDS_ENV)]
    backends: Option<String>,
    /// Memory budget of each engine (memtables, block cache).
    #[arg(long, value_name = "SIZE", default_value = "128MiB")]
    engine_memory: String,
    #[command(flatten)]
    set: crate::flags::SetArgs,
    #[command(flatten)]
    place: crate::flags::DeviceArgs,
    #[command(flatten)]
    level: crate::harness::DurabilityArg,
    /// Seed.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    #[command(flatten)]
    output: crate::flags::OutputArgs,
}

impl Args {
    /// Where the run writes.
    pub fn output(&self) -> &crate::flags::OutputArgs {
        &self.output
    }
}

/// Every backend that keeps data, comma-separated: asked of the registry,
/// not read from the names.
fn keeping_backends() -> String {
    crate::registry::names()
        .filter(|n| crate::registry::BackendSpec::by_name(n).is_ok_and(|s| !s.discards_writes()))
        .collect::<Vec<_>>()
        .join(",")
}

/// Runs `ledgerbench run micro`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    args.output.check_build()?;
    let cfg = MicroConfig {
        seed: args.seed,
        benchmarks: args
            .benchmarks
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        num: args.num,
        reads: args.reads.unwrap_or(args.num),
        key_size: args.key_size,
        value_size: args.value_size,
        threads: args.threads,
        batch_size: args.batch_size,
    };
    cfg.validate().map_err(anyhow::Error::msg)?;
    let backends = args.backends.clone().unwrap_or_else(keeping_backends);
    // Every fill's data plus the engines' space amplification, and the
    // overwrites of every writer (logs and tables not compacted yet).
    let logical = cfg.num * (cfg.key_size + cfg.value_size) as u64;
    let place = Placement {
        memory_limit: None,
        harness_allowance: 0,
        device_size: args.place.size(logical * (3 + cfg.threads) + (1 << 30))?,
        read_ahead_kb: args.place.read_ahead_kb,
        keep_stores: false,
        reattach: false,
        inputs: Vec::new(),
        seed_from: None,
        save_to: None,
    };
    let specs = harness::specs(
        &backends,
        &args.engine_memory,
        args.level.durability,
        &args.set.sets,
    )?;
    let (out, rundir) = args.output.create("micro")?;
    let mut results = MicroResults {
        header: ledgerbench_driver::env::header(
            "micro",
            cfg.seed,
            &out,
            Some(args.level.durability),
        ),
        config: cfg.clone(),
        runs: Vec::new(),
    };
    let mut failed = false;
    for spec in &specs {
        let mut run = MicroRun {
            backend: spec.name.clone(),
            config: serde_json::to_value(&spec.config)?,
            engine_version: None,
            benchmarks: Vec::new(),
            error: None,
        };
        let versions = &mut results.header.env.engine_versions;
        if let Err(e) = one(spec, &cfg, &rundir, &place, &mut run, versions) {
            ledgerbench_core::note!("[{}] failed: {e:#}", spec.name);
            run.error = Some(format!("{e:#}"));
            failed = true;
        }
        results.runs.push(run);
        crate::output::write_json(&out.join("results.json"), &results)?;
    }
    let summary = RunSummary::text(&Doc::Micro(Box::new(results)));
    args.output.finish(&out, &summary, failed)
}

/// Every benchmark on one backend, on stores placed for it and released
/// after, whatever the benchmarks returned.
fn one(
    spec: &crate::registry::BackendSpec,
    cfg: &MicroConfig,
    rundir: &RunDir,
    place: &Placement,
    run: &mut MicroRun,
    versions: &mut std::collections::BTreeMap<String, String>,
) -> anyhow::Result<()> {
    let placed = harness::place_stores(place, &spec.name, &["micro".to_string()], rundir)
        .map_err(anyhow::Error::msg)?;
    let base = placed.dirs[0].clone();
    let r = benchmarks(spec, cfg, &base, run, versions);
    harness::release_stores(place, placed, rundir);
    r
}

/// The benchmarks in order in `base`; a fill starts a new store in a new
/// directory (the old one is ledgerbench's and goes first).
fn benchmarks(
    spec: &crate::registry::BackendSpec,
    cfg: &MicroConfig,
    base: &std::path::Path,
    run: &mut MicroRun,
    versions: &mut std::collections::BTreeMap<String, String>,
) -> anyhow::Result<()> {
    let mut view = ProgressView::new(&spec.name);
    let mut generation = 0;
    let dir_of = |g: u32| base.join(format!("db{g}"));
    let mut store = spec.open(&dir_of(generation))?;
    run.engine_version = harness::record_version(spec, &dir_of(generation), &*store, versions);
    for (i, name) in cfg.benchmarks.iter().enumerate() {
        if micro::fresh(name) && i > 0 {
            store.close()?;
            std::fs::remove_dir_all(dir_of(generation))?;
            generation += 1;
            store = spec.open(&dir_of(generation))?;
        }
        view.phase(name);
        let mut b = micro::run(cfg, name, i as u64, &*store)?;
        // Read after the clock stopped; an engine that cannot say has none.
        b.engine = store.stats().ok();
        ledgerbench_core::note!(
            "[{}] {}",
            spec.name,
            ledgerbench_report::render::micro_line(&b)
        );
        run.benchmarks.push(b);
    }
    store.close()?;
    view.finish();
    Ok(())
}

//! `kvbench run stellar`: config assembly, the per-backend loop, output files.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};
use kvbench_core::{Durability, KvStore};
use kvbench_driver::env::EnvInfo;
use kvbench_driver::results::{BackendRun, BatchRecord, RunResult, SCHEMA_VERSION};
use kvbench_driver::rundir::RunDir;
use kvbench_driver::stellar::{self, CompactionStrategy, Observer, StellarConfig};
use kvbench_driver::timefmt;
use kvbench_workload::stellar::STORES;
use serde::Deserialize;

use kvbench_meter::cgroup::MemoryLimit;

use crate::harness::{self, Placement};
use crate::registry::{self, BackendSpec, EngineConfig};
use crate::{presets, size, table};

/// Options of `kvbench run stellar`. Precedence: flags over the run file over the preset.
#[derive(clap::Args)]
pub struct Args {
    /// Preset: smoke, quick, month-scaled or seed.
    #[arg(long)]
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
    /// What a crash may cost, the same on every engine: none (a crash may
    /// lose or corrupt anything since the last flush), process (kill -9
    /// loses nothing committed; a power cut may lose the latest commits,
    /// never corrupt) or power (every commit survives a power cut).
    #[arg(long, value_name = "LEVEL", default_value = "process", value_parser = crate::harness::durability_parser())]
    durability: Durability,
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
    #[arg(long)]
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

/// The TOML run file.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RunFile {
    preset: Option<String>,
    backends: Option<Vec<String>>,
    stores: Option<BTreeMap<String, String>>,
    engine_memory: Option<String>,
    workload: Option<toml::Table>,
    #[serde(default)]
    backend: BTreeMap<String, toml::Table>,
}

struct Plan {
    preset: String,
    /// Memory cgroup limit per run, bytes.
    memory_limit: Option<u64>,
    /// Private device size per store, when stores get private devices.
    device_size: Option<u64>,
    workload: StellarConfig,
    /// The durability level of every store.
    durability: Durability,
    /// Each run: label and the backend of each store.
    runs: Vec<(String, [BackendSpec; 3])>,
}

fn merge_table(into: &mut toml::Table, from: &toml::Table) {
    for (k, v) in from {
        match (into.get_mut(k), v) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => merge_table(a, b),
            _ => {
                into.insert(k.clone(), v.clone());
            }
        }
    }
}

fn plan(args: &Args) -> anyhow::Result<Plan> {
    let file: RunFile = match &args.config {
        Some(p) => {
            let text = fs::read_to_string(p)
                .with_context(|| format!("reading run file {}", p.display()))?;
            toml::from_str(&text).with_context(|| format!("run file {}", p.display()))?
        }
        None => RunFile::default(),
    };
    let preset_name = args
        .preset
        .clone()
        .or(file.preset.clone())
        .unwrap_or_else(|| "quick".into());
    let preset = presets::get(&preset_name).with_context(|| {
        format!(
            "unknown preset `{preset_name}`; accepted: {}",
            presets::NAMES.join(", ")
        )
    })?;

    let mut workload = preset.workload;
    if let Some(t) = &file.workload {
        let mut base = toml::Table::try_from(&workload)?;
        merge_table(&mut base, t);
        workload = base.try_into().context("run file [workload]")?;
    }
    args.shape.apply(&mut workload)?;
    if let Some(v) = args.streaming_ledgers {
        workload.streaming.ledgers = v;
    }
    if let Some(v) = args.close_interval_ms {
        workload.streaming.close_interval_ms = v;
    }
    if let Some(v) = args.lookup_workers {
        workload.streaming.lookup_workers = v;
    }
    workload.validate()?;

    let memory = match args.engine_memory.as_ref().or(file.engine_memory.as_ref()) {
        Some(s) => Some(size::parse(s).map_err(anyhow::Error::msg)?),
        None => preset.engine_memory,
    };
    let spec = |name: &str| -> anyhow::Result<BackendSpec> {
        let mut s = BackendSpec::by_name(name)?;
        s.set_durability(args.durability)
            .with_context(|| format!("backend `{name}` at --durability {}", args.durability))?;
        if let Some(m) = memory {
            s.scale_memory(m);
        }
        if workload.compaction == CompactionStrategy::None
            && let EngineConfig::Rocksdb(c) = &mut s.config
        {
            c.disable_auto_compactions = true;
        }
        if let Some(t) = file.backend.get(name) {
            s.apply_overrides(t)?;
        }
        s.check_durability(args.durability)?;
        Ok(s)
    };
    for name in file.backend.keys() {
        BackendSpec::by_name(name).with_context(|| "run file [backend.NAME] table".to_string())?;
    }

    let mut runs = Vec::new();
    let hybrid: Vec<(String, String)> = if !args.stores.is_empty() {
        args.stores
            .iter()
            .map(|s| {
                s.split_once('=')
                    .map(|(a, b)| (a.trim().to_string(), b.trim().to_string()))
                    .with_context(|| {
                        format!("--store `{s}`: write STORE=BACKEND, e.g. txdata=mdbx")
                    })
            })
            .collect::<anyhow::Result<_>>()?
    } else {
        file.stores
            .clone()
            .unwrap_or_default()
            .into_iter()
            .collect()
    };
    if !hybrid.is_empty() {
        if args.backends.is_some() || args.backend.is_some() {
            bail!("--store builds one hybrid run; do not combine it with --backends or --backend");
        }
        let mut chosen: [Option<BackendSpec>; 3] = [None, None, None];
        for (store, backend) in &hybrid {
            let i = STORES.iter().position(|s| s == store).with_context(|| {
                format!("unknown store `{store}`; accepted: {}", STORES.join(", "))
            })?;
            if chosen[i].is_some() {
                bail!("store `{store}` is given twice");
            }
            chosen[i] = Some(spec(backend)?);
        }
        let missing: Vec<&str> = (0..3)
            .filter(|&i| chosen[i].is_none())
            .map(|i| STORES[i])
            .collect();
        if !missing.is_empty() {
            bail!(
                "a hybrid run needs a backend for every store; missing: {}",
                missing.join(", ")
            );
        }
        let [a, b, c] = chosen.map(|s| s.expect("checked above"));
        let label = format!("ledgers={},txdata={},txindex={}", a.name, b.name, c.name);
        runs.push((label, [a, b, c]));
    } else {
        let list = match (&args.backends, &args.backend, &file.backends) {
            (Some(l), _, _) => l.clone(),
            (None, Some(b), _) => b.clone(),
            (None, None, Some(v)) => v.join(","),
            (None, None, None) => std::env::var(registry::BACKENDS_ENV)
                .unwrap_or_else(|_| registry::DEFAULT_LIST.to_string()),
        };
        for s in registry::parse_list(&list, args.durability)? {
            let name = s.name.clone();
            let one = spec(&name)?;
            runs.push((name, [one.clone(), one.clone(), one]));
        }
    }
    let device_size = harness::device_size(
        args.device,
        args.device_size.as_deref(),
        estimate_device_size(&workload),
    )?;
    if device_size.is_some() && args.keep_stores {
        bail!(
            "--keep-stores keeps store directories, but private devices are removed after each run; add --device none"
        );
    }
    let memory_limit = match args.memory_limit.as_deref() {
        Some("none") => None,
        Some(s) => Some(harness::memory_limit(s)?),
        // A preset's limit applies where cgroups work; elsewhere the run
        // goes on unlimited, says so, and records no limit.
        None => match preset.memory_limit {
            Some(b) => match MemoryLimit::available() {
                Ok(()) => Some(b),
                Err(e) => {
                    eprintln!(
                        "kvbench: preset {preset_name} runs without its {} MiB memory limit: {e}",
                        b >> 20
                    );
                    None
                }
            },
            None => None,
        },
    };
    Ok(Plan {
        preset: preset_name,
        memory_limit,
        device_size,
        workload,
        durability: args.durability,
        runs,
    })
}

/// A sparse device size that holds the largest store with room for space
/// amplification and compaction's temporary copies.
fn estimate_device_size(w: &StellarConfig) -> u64 {
    let ledgers = w.ledgers + w.streaming.ledgers;
    let txs = ledgers as f64 * w.profile.tx_per_ledger_mean;
    let largest = (ledgers as f64 * 170e3).max(txs * 1.3e3);
    (largest * 5.0) as u64 + (512 << 20)
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

/// Prints and saves the summary; exit 2 when a run failed.
pub fn finish(out: &Path, summary: &str, failed: bool) -> anyhow::Result<ExitCode> {
    println!("{summary}");
    fs::write(out.join("summary.md"), summary)
        .with_context(|| format!("writing {}", out.join("summary.md").display()))?;
    eprintln!("results: {}", out.join("results.json").display());
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
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

/// Refuses to benchmark from a debug build unless allowed.
pub fn check_build(debug: bool, allow_debug: bool) -> anyhow::Result<()> {
    if debug && !allow_debug {
        bail!(
            "this kvbench is a debug build: engines and generators run many times slower unoptimised, so its \
             figures would mislead. Build with `cargo build --release --workspace`, or pass --allow-debug to test the harness"
        );
    }
    Ok(())
}

/// Writes results atomically (aside, then renamed).
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let tmp = path.with_extension("json.tmp");
    fs::write(&tmp, serde_json::to_vec_pretty(value)?)
        .with_context(|| format!("writing {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
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

#[cfg(test)]
mod tests {
    #[test]
    fn debug_builds_refuse_unless_allowed() {
        let e = super::check_build(true, false)
            .expect_err("refused")
            .to_string();
        assert!(
            e.contains("debug build") && e.contains("--allow-debug"),
            "{e}"
        );
        assert!(super::check_build(true, true).is_ok());
        assert!(super::check_build(false, false).is_ok());
    }
}

//! `ledgerbench record` (a workload's operations into a trace file) and
//! `ledgerbench run replay` (a trace on any backend, with every meter).

use ledgerbench_driver::results::workload::OpsConfig;
use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use ledgerbench_driver::ops::{self, OpSource};
use ledgerbench_driver::stellar::StellarOps;
use ledgerbench_trace::TraceReader;
use ledgerbench_trace::queue::Queued;
use ledgerbench_trace::split::Split;

use crate::stream::run_stream;
use crate::{presets, stellar_cmd};

/// Options of `ledgerbench record`.
#[derive(clap::Args)]
pub struct RecordArgs {
    /// Workload to record: stellar, ycsb, solana, blobs, accounts.
    #[arg(value_name = "WORKLOAD")]
    workload: String,
    /// Setting KEY=VALUE of a generated workload (ycsb, solana, blobs, accounts).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    params: Vec<String>,
    /// Stellar preset the settings start from (default smoke; stellar only).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(crate::presets::NAMES))]
    preset: Option<String>,
    #[command(flatten)]
    shape: stellar_cmd::ShapeArgs,
    /// Trace file to create (never overwritten).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

/// Options of `ledgerbench run replay`.
#[derive(clap::Args)]
pub struct ReplayArgs {
    /// Trace file (from `ledgerbench record` or `ledgerbench import`).
    #[arg(value_name = "TRACE")]
    trace: PathBuf,
    /// Client threads replaying at once, comma-separated for a sweep (e.g.
    /// 1,4,8): the trace is split by key hash (a commit group by its first
    /// key), every mark a barrier for all threads.
    #[arg(long, value_name = "N,...", default_value = "1")]
    threads: String,
    /// Pace the replay by the trace's recorded times (a RocksDB trace's
    /// import keeps them): 1 is the recorded pace, 10 ten times faster, and
    /// gets are also timed from when their record was due (`get
    /// corrected`); default: as fast as each engine goes.
    #[arg(long, value_name = "X")]
    speed: Option<f64>,
    #[command(flatten)]
    common: CommonArgs,
}

/// Options of `ledgerbench run ycsb|solana|blobs|accounts`.
#[derive(clap::Args)]
pub struct GenArgs {
    /// Workload setting KEY=VALUE; repeatable (values are TOML; a bare
    /// word is a string). Each workload's keys, what they mean and their
    /// defaults: docs/src/workloads.md; an unknown key is refused with the
    /// list of known ones.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    params: Vec<String>,
    /// Seed of keys, values and choices.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// A named setup of the workload (solana: contrast; synth: cosmos,
    /// mixgraph, stellar, solana), its settings
    /// before any --param; its backends, threads and memory limit apply
    /// unless given.
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
    /// Open loop: issue the run phase's operations (after the load) at this
    /// many per second whether or not earlier ones returned, and time gets
    /// from when each was due as well (`get corrected`); default: closed
    /// loop, each operation when the last returned.
    #[arg(long, value_name = "PER_SEC")]
    op_rate: Option<f64>,
    /// Client threads running at once, comma-separated for a sweep (e.g.
    /// 1,4,8). YCSB and accounts give each thread its own seeded stream and
    /// share of the work; solana and blobs split one stream by key hash.
    /// Every mark is a barrier; a paced run splits --op-rate between them.
    /// Default: 1, or the preset's.
    #[arg(long, alias = "workers", value_name = "N,...")]
    threads: Option<String>,
    #[command(flatten)]
    common: CommonArgs,
}

/// Options every operation-stream run shares.
#[derive(clap::Args)]
pub struct CommonArgs {
    /// Backends, comma-separated; each runs the whole stream.
    #[arg(long, env = crate::registry::BACKENDS_ENV, default_value = crate::registry::DEFAULT_LIST)]
    pub(crate) backends: String,
    #[command(flatten)]
    pub(crate) set: crate::flags::SetArgs,
    /// Memory budget of each store's engine (memtables, caches).
    #[arg(long, value_name = "SIZE", default_value = "64MiB")]
    pub(crate) engine_memory: String,
    #[command(flatten)]
    pub(crate) level: crate::harness::DurabilityArg,
    #[command(flatten)]
    pub(crate) limit: crate::flags::MemoryLimitArg,
    #[command(flatten)]
    pub(crate) place: crate::flags::DeviceArgs,
    #[command(flatten)]
    pub(crate) output: crate::flags::OutputArgs,
}

impl ReplayArgs {
    /// Where the run writes.
    pub fn output(&self) -> &crate::flags::OutputArgs {
        &self.common.output
    }
}

impl GenArgs {
    /// Where the run writes.
    pub fn output(&self) -> &crate::flags::OutputArgs {
        &self.common.output
    }

    /// Client threads `n`, when `--threads` was left at its default; false
    /// when it was given as another number.
    pub(crate) fn default_threads(&mut self, n: u64) -> bool {
        self.threads.get_or_insert_with(|| n.to_string()) == &n.to_string()
    }

    /// The `--preset` given, if any.
    pub(crate) fn preset(&self) -> Option<&str> {
        self.preset.as_deref()
    }

    /// Settings a command's own flags stand for, before any `--param`.
    pub(crate) fn prepend_params(&mut self, mut first: Vec<String>) {
        first.append(&mut self.params);
        self.params = first;
    }
}

/// `--op-rate`, checked: the schedule of a workload's run phase.
fn pace_of(name: &str, op_rate: Option<f64>) -> anyhow::Result<Option<ops::Pace>> {
    Ok(match op_rate {
        None => None,
        // Bounded like the Stellar lookup rate: a schedule past this is no
        // schedule the harness can keep on any machine.
        Some(r) if !(r.is_finite() && r > 0.0 && r <= 100_000_000.0) => {
            bail!("--op-rate {r}: give operations per second above 0 and at most 100,000,000")
        }
        Some(r) => Some(ops::Pace {
            ops_per_sec: r,
            after_mark: ledgerbench_workloads::load_mark(name),
        }),
    })
}

/// Runs `ledgerbench record`.
pub fn record(args: RecordArgs) -> anyhow::Result<ExitCode> {
    let stellar = args.workload == "stellar";
    if !stellar && !ledgerbench_workloads::NAMES.contains(&args.workload.as_str()) {
        bail!(
            "unknown workload `{}`; ledgerbench record takes stellar, {}",
            args.workload,
            ledgerbench_workloads::NAMES.join(", ")
        );
    }
    let ignored = args.shape.not_for_record(stellar);
    if !ignored.is_empty() || (!stellar && args.preset.is_some()) {
        let mut flags = ignored;
        if !stellar && args.preset.is_some() {
            flags.push("--preset");
        }
        bail!(
            "{} shape(s) a run, not a recorded {} trace; leave {} out (a generated workload takes --param KEY=VALUE and --seed)",
            flags.join(", "),
            args.workload,
            if flags.len() == 1 { "it" } else { "them" }
        );
    }
    // Ctrl-C ends the recording through its error path, which removes
    // the partial trace.
    ledgerbench_driver::interrupt::install();
    if !stellar {
        let params = parse_params(&args.params)?;
        if ledgerbench_workloads::timed(&args.workload, &params) {
            bail!(
                "this model's roles play on several threads at its period: a trace holds one stream; run it with `ledgerbench run synth`"
            );
        }
        let mut src =
            ledgerbench_workloads::by_name(&args.workload, args.shape.seed.unwrap_or(42), params)
                .map_err(anyhow::Error::msg)?;
        let st = ops::record_trace(&mut *src, &args.out)?;
        ledgerbench_core::note!(
            "recorded {} operations ({} puts, {:.1} MiB logical) of {} into {}",
            st.ops,
            st.puts,
            st.logical_bytes as f64 / f64::from(1u32 << 20),
            args.workload,
            args.out.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if !args.params.is_empty() {
        bail!("--param is for generated workloads; stellar takes --preset, --ledgers, ...");
    }
    let name = args.preset.as_deref().unwrap_or("smoke");
    let preset = presets::get(name).with_context(|| {
        format!(
            "unknown preset `{name}`; accepted: {}",
            presets::NAMES.join(", ")
        )
    })?;
    let mut w = preset.workload;
    args.shape.apply(&mut w)?;
    let mut src = ledgerbench_trace::queue::Queued::new(StellarOps::new(&w)?);
    let t = std::time::Instant::now();
    let st = ops::record_trace(&mut src, &args.out)?;
    let size = fs::metadata(&args.out).map(|m| m.len()).unwrap_or(0);
    ledgerbench_core::note!(
        "recorded {} operations ({} puts, {:.1} MiB logical) of stellar ({} ledgers, seed {}) into {} ({:.1} MiB) in {:.1} s",
        st.ops,
        st.puts,
        st.logical_bytes as f64 / f64::from(1u32 << 20),
        w.ledgers,
        w.seed,
        args.out.display(),
        size as f64 / f64::from(1u32 << 20),
        t.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// Parses `--param KEY=VALUE` lines into a JSON object.
pub fn parse_params(params: &[String]) -> anyhow::Result<serde_json::Value> {
    let mut t = toml::Table::new();
    for p in params {
        let (k, v) = p
            .split_once('=')
            .with_context(|| format!("--param `{p}`: expected KEY=VALUE"))?;
        let one: toml::Table = toml::from_str(&format!("{} = {}", k.trim(), v.trim()))
            .or_else(|_| toml::from_str(&format!("{} = \"{}\"", k.trim(), v.trim())))
            .with_context(|| format!("--param `{p}`: VALUE is not TOML"))?;
        t.extend(one);
    }
    Ok(serde_json::to_value(t)?)
}

/// Runs `ledgerbench run replay`.
pub fn replay(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    // Read the header first: a foreign or damaged file fails before anything is created.
    let header = TraceReader::open(&args.trace)?.header().clone();
    let trace_bytes = fs::metadata(&args.trace)
        .with_context(|| format!("reading {}", args.trace.display()))?
        .len();
    let threads = crate::flags::parse_threads(&args.threads)?;
    let trace = args.trace.clone();
    let speed = match args.speed {
        // Bounded: past a million times the recording, no trace's times
        // pace anything a machine can keep.
        Some(s) if !(s.is_finite() && s > 0.0 && s <= 1e6) => {
            bail!(
                "--speed {s}: give a speed-up above 0 and at most 1,000,000 (1 is the recorded pace)"
            )
        }
        s => s,
    };
    let config = OpsConfig {
        workload: None,
        workers: None,
        threads: threads.clone(),
        op_rate: None,
        speed,
        trace: Some(args.trace.display().to_string()),
        trace_bytes: Some(trace_bytes),
        header: header.clone(),
        soak: None,
    };
    run_stream(
        &args.common,
        &header,
        (format!("replay:{}", header.workload), config, None),
        trace_bytes * 3 + (512 << 20),
        (&threads, ledgerbench_trace::split::SPLIT),
        None,
        (
            &|stores, devs, progress, n, _initial| {
                let (on, pacing) = (
                    (stores, devs),
                    ops::Pacing {
                        rate: None,
                        speed,
                        window: None,
                    },
                );
                if n == 1 {
                    let mut src = TraceReader::open(&trace)?;
                    return Ok(ops::replay_with(&mut src, on, progress, pacing));
                }
                let sources = (0..n)
                    .map(|t| -> anyhow::Result<Box<dyn OpSource + Send>> {
                        let split = Split::new(TraceReader::open(&trace)?, t, n);
                        Ok(Box::new(Queued::new(split)))
                    })
                    .collect::<anyhow::Result<Vec<_>>>()?;
                Ok(ops::replay_threads(sources, on, progress, pacing))
            },
            None,
        ),
    )
}

/// The pacing of a stream whose initial state is `initial`: a given state
/// makes no load mark, so its schedule starts with the stream, which is
/// what follows the load.
fn paced_for(pacing: ops::Pacing, initial: ledgerbench_workloads::synth::Initial) -> ops::Pacing {
    match initial {
        ledgerbench_workloads::synth::Initial::Given => ops::Pacing {
            rate: pacing.rate.map(|p| ops::Pace {
                after_mark: None,
                ..p
            }),
            ..pacing
        },
        _ => pacing,
    }
}

/// The generator's streams for `n` client threads on `stores`, its
/// initial state played, alone, or given.
fn sources_of(
    name: &str,
    seed: u64,
    params: &serde_json::Value,
    (stores, n, initial): (
        &[&dyn ledgerbench_core::KvStore],
        u64,
        ledgerbench_workloads::synth::Initial,
    ),
) -> anyhow::Result<Vec<Box<dyn OpSource + Send>>> {
    // A Solana `retention = "auto"` follows what the stores do by
    // themselves (recorded per store as `evicts_oldest`).
    let evicts = stores.iter().all(|s| s.capabilities().evicts_oldest);
    let mut params = ledgerbench_workloads::solana::resolve(name, params, evicts);
    // A model's initial state, when it is loaded alone or given.
    if initial != ledgerbench_workloads::synth::Initial::Play {
        params["initial"] = serde_json::to_value(initial)?;
    }
    ledgerbench_workloads::threads(name, seed, params, n).map_err(anyhow::Error::msg)
}

/// A `--preset`'s settings before any `--param`, and its backends, threads
/// and memory limit where the command line left the defaults.
fn apply_preset(name: &str, args: &mut GenArgs) -> anyhow::Result<()> {
    let Some(p) = &args.preset else {
        return Ok(());
    };
    let preset = presets::ops(name, p)?;
    let mut lines: Vec<String> = preset.params.iter().map(|s| s.to_string()).collect();
    lines.append(&mut args.params);
    args.params = lines;
    // Only when not given: an explicit --threads 1 is kept.
    args.threads.get_or_insert_with(|| preset.threads.into());
    if args.common.backends == crate::registry::DEFAULT_LIST {
        args.common.backends = preset.backends.into();
    }
    args.common
        .limit
        .memory_limit
        .get_or_insert_with(|| preset.memory_limit.into());
    Ok(())
}

/// Runs `ledgerbench run WORKLOAD` for a generated workload.
pub fn generated(
    name: &str,
    mut args: GenArgs,
    soak: Option<&crate::soak_cmd::Soak>,
    state_cache: Option<&std::path::Path>,
) -> anyhow::Result<ExitCode> {
    apply_preset(name, &mut args)?;
    let mut params = parse_params(&args.params)?;
    let seed = args.seed;
    let threads = crate::flags::parse_threads(args.threads.as_deref().unwrap_or("1"))?;
    if let Some(s) = soak {
        s.prepare(&mut params, &threads)?;
    }
    // Settings are checked (and the header made) before anything is created.
    let header = ledgerbench_workloads::by_name(name, seed, params.clone())
        .map_err(anyhow::Error::msg)?
        .header()
        .clone();
    let rate = pace_of(name, args.op_rate)?;
    // A model's roles carry their own times (its period): followed as
    // recorded, from the end of the load.
    let timed = ledgerbench_workloads::timed(name, &params);
    if timed && rate.is_some() {
        bail!(
            "--op-rate: this model's roles are paced by its period (commits.period_micros); drop --op-rate"
        );
    }
    let speed = timed.then_some(1.0);
    let pacing = ops::Pacing {
        rate,
        speed,
        window: soak.map(|s| s.window),
    };
    let split = if timed {
        "roles"
    } else {
        ledgerbench_workloads::split_of(name)
    };
    let config = OpsConfig {
        workload: Some(name.to_string()),
        workers: None,
        threads: threads.clone(),
        op_rate: args.op_rate,
        speed,
        trace: None,
        trace_bytes: None,
        header: header.clone(),
        soak: soak.map(|s| Box::new(s.config.clone())),
    };
    // Checked (and the directory made) before any run starts.
    let state = crate::state_cache::Use::open(state_cache, &params, seed)?;
    let exec = |stores: &[&dyn ledgerbench_core::KvStore],
                devs: &[Option<&ledgerbench_meter::loopdev::Device>],
                progress: &mut dyn ledgerbench_driver::observe::Observer,
                n: u64,
                initial|
     -> anyhow::Result<ops::OpsOutcome> {
        let mut sources = sources_of(name, seed, &params, (stores, n, initial))?;
        let on = (stores, devs);
        let pacing = paced_for(pacing, initial);
        if n == 1
            && let Some(src) = sources.first_mut()
        {
            return Ok(ops::replay_with(&mut **src, on, progress, pacing));
        }
        Ok(ops::replay_threads(sources, on, progress, pacing))
    };
    run_stream(
        &args.common,
        &header,
        (name.to_string(), config, args.preset.clone()),
        8 << 30,
        (&threads, split),
        ledgerbench_workloads::live_bytes(name, &params),
        (&exec, state.as_ref()),
    )
}

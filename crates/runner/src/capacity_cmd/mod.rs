//! `ledgerbench run capacity`: the highest rate of rows (transactions by
//! hash, or shreds by slot) each backend persists at a fixed close
//! interval, by bisection, each probe on a fresh store on its own device
//! (with `--prefill`, a copy of the backend's store loaded once).

use std::process::ExitCode;

use ledgerbench_driver::capacity::{self, CapacityConfig, RowShape};
use ledgerbench_driver::rundir::RunDir;
use ledgerbench_meter::cgroup::MemoryLimit;
use ledgerbench_report::doc::Doc;
use ledgerbench_report::export::RunSummary;
use ledgerbench_results::capacity::{CapacityResults, CapacityRun, Probe};

use crate::harness::{self, Placement};

mod template;
use template::Template;

/// Options of `ledgerbench run capacity`.
#[derive(clap::Args)]
pub struct Args {
    /// What a row is: tx-hash (random 32-byte keys, Stellar's txdata) or
    /// shred (a slot's shreds by index: one close is one slot).
    #[arg(long, value_enum, default_value_t = RowShape::TxHash)]
    rows: RowShape,
    /// Time between closes: `5s` (Stellar's ledger close), `400ms` (a
    /// Solana slot), `1s`, ...
    #[arg(long, value_name = "DURATION", default_value = "5s")]
    close_interval: String,
    /// Consecutive closes a rate must hold for.
    #[arg(long, default_value_t = 6)]
    intervals: u32,
    /// Lowest rate tried, rows per second.
    #[arg(long, default_value_t = 1_000.0)]
    min_rate: f64,
    /// Highest rate tried, rows per second.
    #[arg(long, default_value_t = 1_000_000.0)]
    max_rate: f64,
    /// Probes at most, both ends included.
    #[arg(long, default_value_t = 8)]
    probes: u32,
    /// Value bytes per row (default: 1100 for tx-hash, the Stellar report's
    /// ~1.1 KB a transaction; 1203 for shred, a data shred's payload).
    #[arg(long)]
    value_bytes: Option<usize>,
    /// Data each probe's store holds before its first close (random keys
    /// of their own, loaded once per backend and flushed; each probe opens
    /// a cold copy): the rate a store already at a node's size sustains,
    /// e.g. 10x the memory limit; default none (each probe on an empty
    /// store). tx-hash rows only.
    #[arg(long, value_name = "SIZE")]
    prefill: Option<String>,
    /// Keep each backend's prefilled store in this directory, and start
    /// from it instead of loading again when it holds one of the same
    /// engine, settings, rows, seed, memory limit and build (a worker
    /// after an OOM kill, a later search); made if missing, never emptied
    /// by ledgerbench.
    #[arg(long, value_name = "DIR", env = crate::state_cache::STATE_CACHE_ENV)]
    state_cache: Option<std::path::PathBuf>,
    /// Backends, comma-separated.
    #[arg(long, env = crate::registry::BACKENDS_ENV, default_value = crate::registry::POINT_READ_LIST)]
    backends: String,
    #[command(flatten)]
    limit: crate::flags::MemoryLimitArg,
    #[command(flatten)]
    set: crate::flags::SetArgs,
    #[command(flatten)]
    place: crate::flags::DeviceArgs,
    /// Memory budget of each engine (memtables, block cache).
    #[arg(long, value_name = "SIZE", default_value = "64MiB")]
    engine_memory: String,
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

/// Parses `5s`, `400ms`, `1.5s`: a number and its unit.
pub fn parse_interval(s: &str) -> anyhow::Result<f64> {
    let t = s.trim();
    let (num, scale) = match t.strip_suffix("ms") {
        Some(n) => (n, 1e-3),
        None => match t.strip_suffix('s') {
            Some(n) => (n, 1.0),
            None => anyhow::bail!(
                "--close-interval `{s}`: give a duration with its unit, e.g. 5s or 400ms"
            ),
        },
    };
    let v: f64 = num.trim().parse().map_err(|_| {
        anyhow::anyhow!("--close-interval `{s}`: `{num}` is not a number; e.g. 5s or 400ms")
    })?;
    Ok(v * scale)
}

/// ledgerbench's own memory in each probe's cgroup, on top of
/// `--memory-limit`: one close's batch being built (at most 16 MiB of rows
/// with their framing) and the process around it, so the harness does not
/// eat the limit the engine is measured under.
pub const HARNESS_ALLOWANCE: u64 = 48 << 20;
/// The file in the output directory naming the probe in progress, so a
/// worker started after the OOM killer ended it records that rate as failed.
pub const PROBE_NOTE: &str = ".ledgerbench-capacity-probe";

/// The second line of [`PROBE_NOTE`] while a backend's prefill loads (a
/// rate while a probe runs).
const PREFILL_NOTE: &str = "prefill";

/// Whether the OOM killer struck inside `guard`'s cgroup: an engine in a
/// sidecar (bridge = "sidecar") is killed alone, and the harness sees its
/// error.
fn oom_killed(guard: Option<&MemoryLimit>) -> bool {
    guard
        .and_then(MemoryLimit::oom_kills)
        .is_some_and(|n| n > 0)
}

/// Why a killed probe failed.
fn killed_why(limit: Option<u64>) -> String {
    format!(
        "killed by the OOM killer: the engine needed more than the memory limit ({}) at this rate",
        limit.map_or("none".into(), |b| format!("{} MiB", b >> 20))
    )
}

/// Why a killed prefill failed.
fn prefill_killed_why(limit: Option<u64>) -> String {
    killed_why(limit).replace("at this rate", "to load it")
}

/// Probes and ended searches recorded in `out`'s results, plus one for a
/// probe (or prefill) noted in progress: the supervisor goes on after an OOM kill only if this grew.
pub fn progress(out: &std::path::Path) -> usize {
    let recorded = std::fs::read(out.join("results.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<CapacityResults>(&b).ok())
        // A backend ended in an error (its prefill killed) is progress too.
        .map_or(0, |r| {
            r.runs
                .iter()
                .map(|r| r.probes.len() + usize::from(r.error.is_some()))
                .sum()
        });
    recorded + usize::from(out.join(PROBE_NOTE).exists())
}

/// After a worker the OOM killer ended: the results it kept, and the probe
/// it was killed in (backend, rate), recorded as failed in that backend's
/// run, which is then taken out of the results to be searched on.
fn resumed(
    out: &std::path::Path,
    limit: Option<u64>,
    cfg: &CapacityConfig,
) -> anyhow::Result<(CapacityResults, Option<CapacityRun>)> {
    let path = out.join("results.json");
    let mut results: CapacityResults = serde_json::from_slice(&std::fs::read(&path)?)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let note = std::fs::read_to_string(out.join(PROBE_NOTE)).unwrap_or_default();
    let _ = std::fs::remove_file(out.join(PROBE_NOTE));
    let mut lines = note.lines();
    let (Some(backend), Some(what)) = (lines.next(), lines.next()) else {
        return Ok((results, None));
    };
    let Some(at) = results.runs.iter().position(|r| r.backend == backend) else {
        return Ok((results, None));
    };
    let Ok(rate) = what.parse() else {
        if what == PREFILL_NOTE {
            // Killed loading its prefill: the backend has no search at
            // that size, and its run is over.
            let why = format!("the prefill was {}", prefill_killed_why(limit));
            ledgerbench_core::note!("[{backend}] {why}");
            results.runs[at].error = Some(why);
            crate::output::write_json(&path, &results)?;
        }
        return Ok((results, None));
    };
    let mut run = results.runs.remove(at);
    let why = killed_why(limit);
    ledgerbench_core::note!("[{backend}] {rate:.0} rows/s: {why}");
    run.probes
        .push(Probe::killed(rate, cfg.rows_per_close(rate), why));
    Ok((results, Some(run)))
}

/// Runs `ledgerbench run capacity`.
///
/// Long because the run's steps in order (settings, placement, specs, a resumed worker's results, one search per backend with results kept after each probe).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    args.output.check_build()?;
    let mut cfg = CapacityConfig {
        seed: args.seed,
        rows: args.rows,
        value_bytes: args.value_bytes.unwrap_or(match args.rows {
            RowShape::TxHash => 1100,
            RowShape::Shred => 1203,
        }),
        interval_secs: parse_interval(&args.close_interval)?,
        intervals: args.intervals,
        min_rate: args.min_rate,
        max_rate: args.max_rate,
        probes: args.probes,
        prefill_rows: 0,
    };
    cfg.prefill_rows = match &args.prefill {
        Some(p) => {
            let bytes = crate::size::parse(p).map_err(|e| anyhow::anyhow!("--prefill: {e}"))?;
            let rows = bytes / (32 + cfg.value_bytes as u64);
            if rows == 0 {
                anyhow::bail!(
                    "--prefill {p}: less than one row of {} bytes; give a size such as 4GiB",
                    32 + cfg.value_bytes
                );
            }
            rows
        }
        None => 0,
    };
    cfg.validate().map_err(anyhow::Error::msg)?;
    let limit = args.limit.bytes()?;
    // A probe at the highest rate writes this much; the device holds it twice.
    // The prefill comes on top, and an LSM's compactions hold it twice too.
    let most = (cfg.rows_per_close(cfg.max_rate) * u64::from(cfg.intervals))
        .saturating_add(cfg.prefill_rows)
        .saturating_mul(cfg.value_bytes as u64 + 32);
    let place = Placement {
        memory_limit: None,
        harness_allowance: 0,
        device_size: args
            .place
            .size(most.saturating_mul(2).saturating_add(512 << 20))?,
        read_ahead_kb: args.place.read_ahead_kb,
        keep_stores: false,
        reattach: false,
        inputs: Vec::new(),
        seed_from: None,
        save_to: None,
    };
    let specs = harness::specs(
        &args.backends,
        &args.engine_memory,
        args.level.durability,
        &args.set.sets,
    )?;
    // Checked even without a prefill to keep: a directory that cannot be
    // made is refused, as everywhere.
    let cache = match &args.state_cache {
        Some(d) => Some(crate::state_cache::Cache::open(d)?),
        None => None,
    };
    let (out, rundir) = args.output.create("capacity")?;
    // A worker going on after one the OOM killer ended keeps what that one
    // recorded and searches on from the probe it was killed in.
    let (mut results, mut killed_in) = if crate::supervise::is_resume() {
        resumed(&out, limit, &cfg)?
    } else {
        let fresh = CapacityResults {
            header: ledgerbench_driver::env::header(
                "capacity",
                cfg.seed,
                &out,
                Some(args.level.durability),
            ),
            config: cfg.clone(),
            memory_limit_bytes: limit,
            harness_allowance_bytes: limit.map(|_| HARNESS_ALLOWANCE),
            runs: Vec::new(),
        };
        (fresh, None)
    };
    let mut failed = results.runs.iter().any(|r| r.error.is_some());
    for spec in specs {
        let run = match killed_in.take_if(|r| r.backend == spec.name) {
            Some(r) => r,
            // Searched to its end by a worker before this one.
            None if results.runs.iter().any(|r| r.backend == spec.name) => continue,
            None => CapacityRun {
                backend: spec.name.clone(),
                config: serde_json::to_value(&spec.config)?,
                probes: Vec::new(),
                sustained_rate: None,
                failed_rate: None,
                prefill_secs: None,
                prefill_store_bytes: None,
                prefill_state: None,
                device_meter: "absent: the run failed before its device was made".into(),
                error: None,
            },
        };
        let run = search_one(
            &spec,
            &cfg,
            run,
            &results,
            ((&place, &rundir, limit), cache.as_ref()),
        );
        failed |= run.error.is_some();
        results.runs.push(run);
        crate::output::write_json(&out.join("results.json"), &results)?;
    }
    let summary = RunSummary::text(&Doc::Capacity(Box::new(results)));
    args.output.finish(&out, &summary, failed)
}

/// Where a search's stores go and under what limit.
type Where<'a> = (&'a Placement, &'a RunDir, Option<u64>);

/// Keeps `results` with `run` as it stands and notes what starts next
/// (`what`: a rate, or [`PREFILL_NOTE`]), so a worker the OOM killer ends
/// leaves what its search found and where it died.
fn note_next(
    out: &std::path::Path,
    results: &CapacityResults,
    run: CapacityRun,
    what: &str,
) -> anyhow::Result<()> {
    let mut kept = results.clone();
    kept.runs.push(run);
    crate::output::write_json(&out.join("results.json"), &kept)?;
    std::fs::write(
        out.join(PROBE_NOTE),
        format!("{}\n{what}\n", kept.runs[kept.runs.len() - 1].backend),
    )?;
    Ok(())
}

/// One backend's search: its prefill loaded once (with `--prefill`), then
/// the probes, each kept in the results before it runs; an error ends it
/// with what it found.
fn search_one(
    spec: &crate::registry::BackendSpec,
    cfg: &CapacityConfig,
    mut run: CapacityRun,
    results: &CapacityResults,
    (at, cache): (Where<'_>, Option<&crate::state_cache::Cache>),
) -> CapacityRun {
    let out = at.1.path().to_path_buf();
    let template = match cfg.prefill_rows {
        0 => None,
        _ => {
            let made = note_next(&out, results, run.clone(), PREFILL_NOTE)
                .and_then(|_| template::get(spec, cfg, at, cache));
            let _ = std::fs::remove_file(out.join(PROBE_NOTE));
            match made {
                Ok(t) => {
                    run.prefill_secs = Some(t.secs);
                    run.prefill_store_bytes = Some(t.bytes);
                    run.prefill_state.clone_from(&t.given);
                    Some(t)
                }
                Err(e) => {
                    ledgerbench_core::note!("[{}] failed: {e:#}", spec.name);
                    run.error = Some(format!("{e:#}"));
                    return run;
                }
            }
        }
    };
    // A resumed search takes the probes already made as they were.
    let known = std::mem::take(&mut run.probes);
    let (found, err) = capacity::search(cfg, known, &mut |rate, so_far| {
        let so_far = CapacityRun {
            probes: so_far.to_vec(),
            ..run.clone()
        };
        let p = note_next(&out, results, so_far, &rate.to_string()).and_then(|_| {
            one_probe(
                spec,
                cfg,
                rate,
                at,
                template.as_ref(),
                &mut run.device_meter,
            )
        });
        let _ = std::fs::remove_file(out.join(PROBE_NOTE));
        if let Ok(p) = &p {
            ledgerbench_core::note!(
                "[{}] {rate:.0} rows/s ({} a close): slowest close {} of {:.3} s: {}",
                spec.name,
                p.rows_per_close,
                p.max_persist_secs
                    .map_or("unknown".into(), |s| format!("{s:.3} s")),
                cfg.interval_secs,
                p.why_not.as_deref().unwrap_or("held")
            );
        }
        p.map_err(|e| ledgerbench_driver::DriverError::Config(format!("{e:#}")))
    });
    run.probes = found.probes;
    run.sustained_rate = found.sustained;
    run.failed_rate = found.failed;
    if let Some(e) = err {
        ledgerbench_core::note!("[{}] failed: {e}", spec.name);
        run.error = Some(e.to_string());
    }
    if let Some(t) = template
        && let Err(e) = t.remove(at.1, at.0.device_size.is_some())
    {
        ledgerbench_core::note!(
            "[{}] could not remove its prefilled store: {e:#}",
            spec.name
        );
    }
    run
}

/// One probe on a fresh store on its own device (a cold copy of
/// `template`, the backend's prefilled store, when there is one), inside
/// the memory limit (plus the harness's allowance); a probe the OOM killer
/// ended is a failed rate, not an error.
fn one_probe(
    spec: &crate::registry::BackendSpec,
    cfg: &CapacityConfig,
    rate: f64,
    (place, rundir, limit): Where<'_>,
    template: Option<&Template>,
    meter: &mut String,
) -> anyhow::Result<Probe> {
    crate::watchdog::beat(Some(&format!("[{}] {rate:.0} rows/s", spec.name)));
    // A tag of its own per probe: each starts on a store of its own.
    let tag = format!("{}-{rate:.0}", spec.name);
    let placed = harness::place_stores(place, &tag, &["rows".to_string()], rundir)
        .map_err(anyhow::Error::msg)?;
    meter.clone_from(&placed.meter);
    // Copied outside the cgroup: the copy's pages are not the engine's.
    let copy_secs = template.map(|t| t.copy_into(&placed)).transpose()?;
    let guard = limit
        .map(|b| MemoryLimit::enter(b + HARNESS_ALLOWANCE))
        .transpose()?;
    let probed = spec
        .open(&placed.dirs[0])
        .map_err(anyhow::Error::from)
        .and_then(|store| {
            let p = capacity::probe(&*store, cfg, rate);
            store.close()?;
            Ok(Probe { copy_secs, ..p? })
        });
    let oom_killed = oom_killed(guard.as_ref());
    drop(guard);
    // Without a private device the store sits in the run directory: the
    // next probe's store would add to it, so it goes (a device goes with
    // `placed`).
    if place.device_size.is_none() {
        rundir.remove_store_dir(&placed.dirs[0])?;
    }
    match probed {
        Err(_) if oom_killed => Ok(Probe::killed(
            rate,
            cfg.rows_per_close(rate),
            killed_why(limit),
        )),
        p => p,
    }
}

#[cfg(test)]
mod tests;

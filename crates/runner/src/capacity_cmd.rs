//! `ledgerbench run capacity`: the highest rate of rows (transactions by
//! hash, or shreds by slot) each backend persists at a fixed close
//! interval, by bisection, each probe on a fresh store on its own device.

use std::process::ExitCode;

use ledgerbench_driver::capacity::{self, CapacityConfig, RowShape};
use ledgerbench_driver::rundir::RunDir;
use ledgerbench_meter::cgroup::MemoryLimit;
use ledgerbench_report::doc::Doc;
use ledgerbench_report::export::RunSummary;
use ledgerbench_results::capacity::{CapacityResults, CapacityRun, Probe};

use crate::harness::{self, Placement};

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
    /// Backends, comma-separated.
    #[arg(long, default_value = crate::registry::POINT_READ_LIST)]
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

/// Runs `ledgerbench run capacity`.
///
/// Long because the run's steps in order (settings, placement, specs, one search per backend, results kept after each).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    args.output.check_build()?;
    let cfg = CapacityConfig {
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
    };
    cfg.validate().map_err(anyhow::Error::msg)?;
    let limit = args.limit.bytes()?;
    // A probe at the highest rate writes this much; the device holds it twice.
    let most =
        cfg.rows_per_close(cfg.max_rate) * u64::from(cfg.intervals) * (cfg.value_bytes as u64 + 32);
    let place = Placement {
        memory_limit: None,
        harness_allowance: 0,
        device_size: args.place.size(most * 2 + (512 << 20))?,
        read_ahead_kb: args.place.read_ahead_kb,
        keep_stores: false,
    };
    let specs = harness::specs(
        &args.backends,
        &args.engine_memory,
        args.level.durability,
        &args.set.sets,
    )?;
    let (out, rundir) = args.output.create("capacity")?;
    let mut results = CapacityResults {
        header: ledgerbench_driver::env::header(
            "capacity",
            cfg.seed,
            &out,
            Some(args.level.durability),
        ),
        config: cfg.clone(),
        memory_limit_bytes: limit,
        runs: Vec::new(),
    };
    let mut failed = false;
    for spec in specs {
        let mut run = CapacityRun {
            backend: spec.name.clone(),
            config: serde_json::to_value(&spec.config)?,
            probes: Vec::new(),
            sustained_rate: None,
            failed_rate: None,
            device_meter: "absent: the run failed before its device was made".into(),
            error: None,
        };
        let (found, err) = capacity::search(&cfg, &mut |rate| {
            let p = one_probe(
                &spec,
                &cfg,
                rate,
                (&place, &rundir, limit),
                &mut run.device_meter,
            );
            if let Ok(p) = &p {
                eprintln!(
                    "[{}] {rate:.0} rows/s ({} a close): slowest close {:.3} s of {:.3} s: {}",
                    spec.name,
                    p.rows_per_close,
                    p.max_persist_secs,
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
            eprintln!("[{}] failed: {e}", spec.name);
            run.error = Some(e.to_string());
            failed = true;
        }
        results.runs.push(run);
        crate::output::write_json(&out.join("results.json"), &results)?;
    }
    let summary = RunSummary::text(&Doc::Capacity(Box::new(results)));
    args.output.finish(&out, &summary, failed)
}

/// One probe on a fresh store on its own device, inside the memory limit.
fn one_probe(
    spec: &crate::registry::BackendSpec,
    cfg: &CapacityConfig,
    rate: f64,
    (place, rundir, limit): (&Placement, &RunDir, Option<u64>),
    meter: &mut String,
) -> anyhow::Result<Probe> {
    // A tag of its own per probe: each starts on an empty store.
    let tag = format!("{}-{rate:.0}", spec.name);
    let placed = harness::place_stores(place, &tag, &["rows".to_string()], rundir)
        .map_err(anyhow::Error::msg)?;
    meter.clone_from(&placed.meter);
    let guard = limit.map(MemoryLimit::enter).transpose()?;
    let probed = spec
        .open(&placed.dirs[0])
        .map_err(anyhow::Error::from)
        .and_then(|store| {
            let p = capacity::probe(&*store, cfg, rate, 0);
            store.close()?;
            Ok(p?)
        });
    drop(guard);
    // Without a private device the store sits in the run directory: the
    // next probe's store would add to it, so it goes (a device goes with
    // `placed`).
    if place.device_size.is_none() {
        rundir.remove_store_dir(&placed.dirs[0])?;
    }
    probed
}

#[cfg(test)]
mod tests {
    use super::parse_interval;

    #[test]
    fn intervals_need_a_unit_and_a_number() {
        assert_eq!(parse_interval("5s").expect("5s"), 5.0);
        assert!((parse_interval("400ms").expect("400ms") - 0.4).abs() < 1e-12);
        assert!(parse_interval("5").is_err());
        assert!(parse_interval("fast").is_err());
        assert!(parse_interval("xs").is_err());
    }
}

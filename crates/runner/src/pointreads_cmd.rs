//! `ledgerbench run point-reads`: IO per GET on random 32-byte keys, before and
//! after a full compaction, each store on its own loop device.

use ledgerbench_report::doc::Doc;
use ledgerbench_report::export::RunSummary;
use std::process::ExitCode;

use ledgerbench_driver::pointreads::{
    self, CacheState, Measurement, PointReadConfig, PointResults, PointRun,
};
use ledgerbench_driver::rundir::RunDir;
use ledgerbench_meter::cgroup::MemoryLimit;

use crate::harness::{self, Placement};
use crate::observe::{JsonlSink, ProgressView};
use crate::registry;
use ledgerbench_core::Tuning;
use ledgerbench_driver::observe::Observer;

/// Options of `ledgerbench run point-reads`.
#[derive(clap::Args)]
pub struct Args {
    /// Keys loaded (random 32-byte keys).
    #[arg(long, default_value_t = 1_000_000)]
    keys: u64,
    /// Value size, bytes.
    #[arg(long, default_value_t = 110)]
    value_bytes: usize,
    /// Keys per load commit (Badger commits a batch in one transaction,
    /// which must fit in 15% of its memtable: about 65,000 keys here).
    #[arg(long, default_value_t = 100_000)]
    load_batch: u64,
    /// Random existing keys read per measurement.
    #[arg(long, default_value_t = 20_000)]
    reads: u64,
    /// Random missing keys read per measurement.
    #[arg(long, default_value_t = 5_000)]
    missing_reads: u64,
    /// Backends, comma-separated.
    #[arg(long, env = crate::registry::BACKENDS_ENV, default_value = crate::registry::POINT_READ_LIST)]
    backends: String,
    /// Cache states to measure, comma-separated: cold (store closed, its
    /// page cache emptied, reopened), limited (cold, then read inside a memory
    /// cgroup of --memory-limit), warm (the same GETs again, right after a
    /// pass that cached them). Default: cold, limited when --memory-limit is
    /// set, warm.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_enum)]
    cache: Vec<CacheState>,
    #[command(flatten)]
    limit: crate::flags::MemoryLimitArg,
    #[command(flatten)]
    set: crate::flags::SetArgs,
    #[command(flatten)]
    place: crate::flags::DeviceArgs,
    /// How RocksDB reads: buffered (pread through the page cache, as a node
    /// runs it by default) or direct (O_DIRECT: one device read per block
    /// cache miss). LMDB and MDBX read through mmap either way.
    #[arg(long, value_enum, default_value_t = IoMode::Buffered)]
    io: IoMode,
    /// Memory budget of each engine (memtables, block cache).
    #[arg(long, value_name = "SIZE", default_value = "128MiB")]
    engine_memory: String,
    #[command(flatten)]
    level: crate::harness::DurabilityArg,
    /// Seed.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Client threads reading at once (the queue depth), comma-separated for
    /// a sweep, e.g. 1,2,4,8,16,32: every cache state is measured at each,
    /// and fio measures the device's own random-read rate at the same depths.
    #[arg(long, value_name = "N,...", default_value = "1")]
    threads: String,
    /// Seconds fio reads at each depth (0 skips the device anchor).
    #[arg(long, value_name = "SECS", default_value_t = 5)]
    fio_secs: u64,
    #[command(flatten)]
    output: crate::flags::OutputArgs,
}

impl Args {
    /// Where the run writes.
    pub fn output(&self) -> &crate::flags::OutputArgs {
        &self.output
    }
}

/// `--io`: how RocksDB's GETs reach the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum IoMode {
    /// pread through the page cache.
    Buffered,
    /// O_DIRECT reads (`use_direct_reads`).
    Direct,
}

/// Runs `ledgerbench run point-reads`.
///
/// Long because the point-read run's steps in order (checks, specs, cache states, one backend at a time), results kept after each.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    args.output.check_build()?;
    let cfg = PointReadConfig {
        seed: args.seed,
        keys: args.keys,
        value_bytes: args.value_bytes,
        load_batch: args.load_batch,
        reads: args.reads,
        missing_reads: args.missing_reads,
        ..PointReadConfig::default()
    };
    cfg.validate().map_err(anyhow::Error::msg)?;
    let threads = crate::flags::parse_threads(&args.threads)?;
    let limit = args.limit.bytes()?;
    let states = cache_states(&args.cache, limit)?;
    let place = Placement {
        // The limit applies to the `limited` reads only, not the load.
        memory_limit: None,
        harness_allowance: 0,
        device_size: args.place.size(cfg.logical_bytes() * 3 + (512 << 20))?,
        read_ahead_kb: args.place.read_ahead_kb,
        keep_stores: false,
        reattach: false,
        inputs: Vec::new(),
        seed_from: None,
        save_to: None,
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
        s.tune(Tuning::NoBackgroundCompaction);
        s.tune(Tuning::DirectReads(args.io == IoMode::Direct));
    }
    registry::apply_sets(&mut specs, &args.set.sets)?;
    for s in &specs {
        s.check_durability(args.level.durability)?;
    }
    let (out, rundir) = args.output.create("point-reads")?;
    let mut results = PointResults {
        header: ledgerbench_driver::env::header(
            "point-reads",
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
        let mut run = PointRun {
            backend: spec.name.clone(),
            config: serde_json::to_value(&spec.config)?,
            // Replaced once the device exists.
            device_meter: "absent: the run failed before its device was made".into(),
            read_path: None,
            load_device_write_bytes: None,
            compact_device_write_bytes: None,
            load_secs: None,
            load_usage: None,
            logical_bytes: cfg.logical_bytes(),
            compact_secs: None,
            measurements: Vec::new(),
            skipped: Vec::new(),
            engine_after_load: Default::default(),
            engine_after_compaction: None,
            fio: Vec::new(),
            fio_note: None,
            error: None,
        };
        // One backend's failure is recorded with what it measured, and the
        // others still run.
        let sweep = Sweep {
            states: &states,
            threads: &threads,
            limit,
            fio_secs: args.fio_secs,
        };
        let versions = &mut results.header.env.engine_versions;
        if let Err(e) = one_backend(&spec, &cfg, &sweep, (&rundir, &place), &mut run, versions) {
            ledgerbench_core::note!("[{}] failed: {e:#}", spec.name);
            run.error = Some(format!("{e:#}"));
            failed = true;
        }
        results.runs.push(run);
        crate::output::write_json(&out.join("results.json"), &results)?;
    }
    let summary = RunSummary::text(&Doc::PointReads(Box::new(results)));
    args.output.finish(&out, &summary, failed)
}

/// The `--cache` states to measure, in the order given, each once
/// (default: cold, limited when there is a limit, warm); `limited` needs a
/// memory limit.
fn cache_states(given: &[CacheState], limit: Option<u64>) -> anyhow::Result<Vec<CacheState>> {
    if given.is_empty() {
        return Ok(match limit {
            Some(_) => vec![CacheState::Cold, CacheState::Limited, CacheState::Warm],
            None => vec![CacheState::Cold, CacheState::Warm],
        });
    }
    if given.contains(&CacheState::Limited) && limit.is_none() {
        anyhow::bail!("cache state `limited` needs --memory-limit SIZE");
    }
    let mut out = Vec::new();
    for &state in given {
        if !out.contains(&state) {
            out.push(state);
        }
    }
    Ok(out)
}

/// What each backend is measured under: cache states, thread counts, the
/// memory limit of `limited` reads and fio's seconds per depth.
struct Sweep<'a> {
    states: &'a [CacheState],
    threads: &'a [u64],
    limit: Option<u64>,
    fio_secs: u64,
}

/// Loads, compacts and measures one backend into `run`.
///
/// Long because the measurement protocol's steps in order (place, load, settle, drop caches, read per cache state) on one placed store.
fn one_backend(
    spec: &crate::registry::BackendSpec,
    cfg: &PointReadConfig,
    sweep: &Sweep<'_>,
    (rundir, place): (&RunDir, &Placement),
    run: &mut PointRun,
    versions: &mut std::collections::BTreeMap<String, String>,
) -> anyhow::Result<()> {
    let placed = harness::place_stores(place, &spec.name, &["points".to_string()], rundir)
        .map_err(anyhow::Error::msg)?;
    run.device_meter = placed.meter.clone();
    run.read_path = Some(placed.read_path(spec, place));
    let store_dir = placed.dirs[0].clone();
    let dev = placed.devices()[0];
    let device = || dev.and_then(|d| d.stat().ok());
    // Bytes the device took since `from`, after writing back what is dirty.
    let written =
        |from: &Option<ledgerbench_meter::blockdev::BlockStat>| -> anyhow::Result<Option<u64>> {
            placed.sync()?;
            Ok(from
                .zip(device())
                .map(|(a, b)| (b.write_sectors - a.write_sectors) * 512))
        };
    let before_load = device();
    let store = spec.open(&store_dir)?;
    harness::record_version(spec, &store_dir, &*store, versions);
    let usage0 = ledgerbench_meter::rusage::Usage::now();
    let mut view = ProgressView::new(&spec.name);
    let mut jsonl = JsonlSink::append(&rundir.path().join("measurements.jsonl"), &spec.name);
    view.phase("load: keys");
    run.load_secs = Some(pointreads::load(cfg, &*store, &mut view)?);
    run.load_usage = Some(ledgerbench_meter::rusage::Usage::now().since(&usage0));
    run.engine_after_load = store.stats()?;
    let can_compact = store.capabilities().manual_compaction;
    store.close()?;
    run.load_device_write_bytes = written(&before_load)?;
    let mut phases = vec!["before-compaction"];
    if can_compact {
        phases.push("after-compaction");
    }
    for (round, phase) in phases.into_iter().enumerate() {
        if phase == "after-compaction" {
            view.phase("full compaction");
            let store = spec.open(&store_dir)?;
            let before = device();
            let t = std::time::Instant::now();
            store.compact()?;
            store.flush()?;
            run.compact_secs = Some(t.elapsed().as_secs_f64());
            run.engine_after_compaction = Some(store.stats()?);
            store.close()?;
            run.compact_device_write_bytes = written(&before)?;
        }
        let cells = sweep
            .states
            .iter()
            .flat_map(|&state| sweep.threads.iter().map(move |&n| (state, n)));
        for (state, n) in cells {
            let at = match n {
                1 => format!("{phase} {}", state.name()),
                n => format!("{phase} {} x{n}", state.name()),
            };
            if state != CacheState::Warm
                && let Err(e) = placed.evict("cold and limited reads start from the device")
            {
                let why = format!("{at}: page cache not dropped ({e})");
                ledgerbench_core::note!("[{}] skipped {why}", spec.name);
                run.skipped.push(why);
                continue;
            }
            let guard = match state {
                CacheState::Limited => sweep.limit.map(MemoryLimit::enter).transpose()?,
                _ => None,
            };
            let store = spec.open(&store_dir)?;
            let read = (round as u64, n);
            if state == CacheState::Warm {
                // The warm-up pass reads the very keys measured next.
                view.phase(&format!("{at} warm-up: GETs"));
                pointreads::measure(cfg, &*store, &device, read, &mut view)?;
            }
            view.phase(&format!("{at}: GETs"));
            let cost = pointreads::measure(cfg, &*store, &device, read, &mut view)?;
            let disk_allocated_bytes = store.disk_usage()?.allocated_bytes;
            store.close()?;
            drop(guard);
            let m = Measurement {
                phase: phase.into(),
                cache: state,
                disk_allocated_bytes,
                cost,
            };
            // Saved the moment it is measured: a killed run keeps it.
            jsonl.line(&serde_json::json!({ "backend": spec.name, "measurement": m }));
            run.measurements.push(m);
        }
    }
    if sweep.fio_secs > 0 {
        view.phase("fio: the device's random reads");
        anchor(&placed, cfg.logical_bytes(), sweep, run);
    }
    view.finish();
    if let Some(e) = jsonl.take_error() {
        anyhow::bail!(e);
    }
    Ok(())
}

/// fio's random reads at every thread count on the backend's own device,
/// into `run.fio`; a note instead where there is no device or no fio.
fn anchor(placed: &harness::Placed, logical: u64, sweep: &Sweep<'_>, run: &mut PointRun) {
    use ledgerbench_meter::fio;
    let Some(mount) = placed.devices()[0].and_then(|_| placed.dirs[0].parent()) else {
        run.fio_note = Some("no private device: fio would measure another one".into());
        return;
    };
    if !fio::available() {
        run.fio_note = Some(fio::FioError::Missing.to_string());
        return;
    }
    // As big as the data set, so fio reads as wide a span of the device as
    // the engine's GETs do; at least 64 MiB, whole 4 KiB blocks.
    let file_bytes = logical.max(64 << 20).div_ceil(4096) * 4096;
    let file = mount.join("fio-anchor");
    for &n in sweep.threads {
        match fio::random_reads(&file, file_bytes, n, sweep.fio_secs) {
            Ok(r) => run.fio.push(ledgerbench_results::points::FioPoint {
                threads: n,
                iops: r.iops,
                p50_us: r.p50_us,
                p99_us: r.p99_us,
                secs: sweep.fio_secs as f64,
                file_bytes,
            }),
            Err(e) => {
                run.fio_note = Some(format!("at {n} thread(s): {e}"));
                break;
            }
        }
    }
    // Ours, made above: the device is removed with the run anyway.
    let _ = std::fs::remove_file(&file);
}

#[cfg(test)]
mod tests {
    use super::*;
    use CacheState::{Cold, Limited, Warm};

    #[test]
    fn cache_states_default_dedupe_and_need_a_limit_for_limited() {
        assert_eq!(cache_states(&[], None).expect("ok"), [Cold, Warm]);
        assert_eq!(
            cache_states(&[], Some(1)).expect("ok"),
            [Cold, Limited, Warm]
        );
        assert_eq!(
            cache_states(&[Warm, Cold, Warm], None).expect("ok"),
            [Warm, Cold]
        );
        let e = cache_states(&[Limited], None)
            .expect_err("refused")
            .to_string();
        assert!(e.contains("--memory-limit"), "{e}");
    }
}

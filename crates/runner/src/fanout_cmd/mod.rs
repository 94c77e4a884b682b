//! `ledgerbench run fan-out`: a store grown batch by batch (a partition per
//! batch for `rocksdb-partitioned`), with random-hash lookups, memory and
//! open time measured at chosen batch counts, each store on its own device.

use ledgerbench_report::doc::Doc;
use ledgerbench_report::export::RunSummary;
use std::process::ExitCode;

use ledgerbench_driver::fanout::{self, Checkpoint, FanOutConfig, FanOutResults, FanOutRun};
use ledgerbench_driver::observe::Observer;
use ledgerbench_driver::rundir::RunDir;

use crate::harness::{self, Placed, Placement};
use crate::observe::ProgressView;
use crate::registry::BackendSpec;

pub mod probe;

/// Options of `ledgerbench run fan-out`.
#[derive(clap::Args)]
pub struct Args {
    /// Keys per batch (random 32-byte hashes): a partition of
    /// `rocksdb-partitioned`, a flush of the others.
    #[arg(long, default_value_t = 100_000)]
    keys_per_batch: u64,
    /// Value size, bytes.
    #[arg(long, default_value_t = 110)]
    value_bytes: usize,
    /// Keys per write within a batch.
    #[arg(long, default_value_t = 10_000)]
    write_batch: u64,
    /// Batch counts at which lookups are measured, ascending (234 is a
    /// month of pubnet in batches of 2,000 ledgers).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "19,50,100,234,250,500"
    )]
    batches: Vec<u32>,
    /// GETs of existing keys per pass.
    #[arg(long, default_value_t = 10_000)]
    reads: u64,
    /// GETs of missing keys per pass.
    #[arg(long, default_value_t = 5_000)]
    missing_reads: u64,
    /// Longest a pass of GETs may run, seconds; it then stops with the GETs
    /// it made (marked in the results).
    #[arg(long, default_value_t = 60.0)]
    pass_secs: f64,
    /// Longest wait for background compaction to finish before a
    /// checkpoint, seconds (the wait is recorded; so is giving up).
    #[arg(long, default_value_t = 1800.0)]
    settle_secs: f64,
    /// Backends, comma-separated.
    #[arg(long, env = crate::registry::BACKENDS_ENV, default_value = crate::registry::FAN_OUT_LIST)]
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

/// Runs `ledgerbench run fan-out`.
///
/// Long because the fan-out run's steps in order (checks, config, one growth per backend), results kept after each.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    args.output.check_build()?;
    let cfg = FanOutConfig {
        seed: args.seed,
        keys_per_batch: args.keys_per_batch,
        value_bytes: args.value_bytes,
        write_batch: args.write_batch,
        checkpoints: args.batches.clone(),
        reads: args.reads,
        missing_reads: args.missing_reads,
        pass_secs: args.pass_secs,
        ..FanOutConfig::default()
    };
    cfg.validate().map_err(anyhow::Error::msg)?;
    if !(args.settle_secs.is_finite() && args.settle_secs >= 0.0) {
        anyhow::bail!(
            "--settle-secs {}: must be 0 or more seconds",
            args.settle_secs
        );
    }
    let limit = args.limit.bytes()?;
    let logical = cfg.points().logical_bytes();
    let place = Placement {
        // The limit applies to the checkpoints' reads, not the load.
        memory_limit: None,
        harness_allowance: 0,
        // Room for a leveled tree's compaction beside its data.
        device_size: args.place.size(logical * 3 + (512 << 20))?,
        read_ahead_kb: args.place.read_ahead_kb,
        keep_stores: false,
        reattach: false,
        inputs: Vec::new(),
        seed_from: None,
        save_to: None,
    };
    let engine_memory = crate::size::parse_named("--engine-memory", &args.engine_memory)?;
    let specs = harness::specs(
        &args.backends,
        &args.engine_memory,
        args.level.durability,
        &args.set.sets,
    )?;
    let (out, rundir) = args.output.create("fan-out")?;
    let mut results = FanOutResults {
        header: ledgerbench_driver::env::header(
            "fan-out",
            cfg.seed,
            &out,
            Some(args.level.durability),
        ),
        config: cfg.clone(),
        memory_limit_bytes: limit,
        engine_memory_bytes: engine_memory,
        runs: Vec::new(),
    };
    let save = |r: &FanOutResults| crate::output::write_json(&out.join("results.json"), r);
    let mut failed = false;
    for spec in specs {
        let run = FanOutRun {
            backend: spec.name.clone(),
            config: serde_json::to_value(&spec.config)?,
            device_meter: "absent: the run failed before its device was made".into(),
            read_path: None,
            load_secs: 0.0,
            checkpoints: Vec::new(),
            error: None,
        };
        results.runs.push(run);
        let grow = Grow {
            spec: &spec,
            cfg: &cfg,
            limit,
            settle_secs: args.settle_secs,
        };
        // One backend's failure is recorded with the checkpoints it
        // measured, and the others still run.
        let r = grow.run(&rundir, &place, &mut results, &save);
        if let Err(e) = r {
            ledgerbench_core::note!("[{}] failed: {e:#}", spec.name);
            if let Some(run) = results.runs.last_mut() {
                run.error = Some(format!("{e:#}"));
            }
            failed = true;
        }
        save(&results)?;
    }
    let summary = RunSummary::text(&Doc::FanOut(Box::new(results)));
    args.output.finish(&out, &summary, failed)
}

/// One backend grown through every checkpoint.
struct Grow<'a> {
    spec: &'a BackendSpec,
    cfg: &'a FanOutConfig,
    limit: Option<u64>,
    settle_secs: f64,
}

impl Grow<'_> {
    /// Loads batch after batch, measuring at each checkpoint; every
    /// checkpoint lands in `results` (saved by `save`) as it is measured,
    /// so a run killed later keeps it.
    fn run(
        &self,
        rundir: &RunDir,
        place: &Placement,
        results: &mut FanOutResults,
        save: &dyn Fn(&FanOutResults) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let name = &self.spec.name;
        let placed = harness::place_stores(place, name, &["fan-out".to_string()], rundir)
            .map_err(anyhow::Error::msg)?;
        let dir = placed.dirs[0].clone();
        {
            let run = results.runs.last_mut().expect("pushed before");
            run.device_meter = placed.meter.clone();
            run.read_path = Some(placed.read_path(self.spec, place));
        }
        let mut view = ProgressView::new(name);
        let mut store = Some(self.spec.open(&dir)?);
        if let Some(s) = &store
            && !s.capabilities().persistent
        {
            anyhow::bail!(
                "`{name}` keeps nothing across a reopen (it lives in memory), and each checkpoint reopens the store: choose a persistent backend"
            );
        }
        for batch in 0..self.cfg.last() {
            let s = match &store {
                Some(s) => s,
                None => store.insert(self.spec.open(&dir)?),
            };
            if batch == 0 {
                view.phase("load: batches");
            }
            let secs = fanout::load_batch(self.cfg, &**s, batch, &mut view)?;
            results.runs.last_mut().expect("pushed").load_secs += secs;
            let done = batch + 1;
            if !self.cfg.checkpoints.contains(&done) {
                continue;
            }
            view.phase(&format!("{done} batches: background work"));
            let (settle_secs, unsettled) = fanout::settle(&**s, self.settle_secs)?;
            store.take().expect("open").close()?;
            view.phase(&format!("{done} batches: lookups"));
            let c = self.checkpoint(&placed, done, settle_secs, unsettled)?;
            results.runs.last_mut().expect("pushed").checkpoints.push(c);
            save(results)?;
            if done < self.cfg.last() {
                view.phase("load: batches");
            }
        }
        if let Some(s) = store {
            s.close()?;
        }
        view.finish();
        Ok(())
    }

    /// Measures the closed store at `batches` batches in a process of its
    /// own, inside the memory limit: its resident memory and cgroup charge
    /// are the store's alone, and a store the limit kills ends the
    /// checkpoint, not the run.
    fn checkpoint(
        &self,
        placed: &Placed,
        batches: u32,
        settle_secs: f64,
        unsettled_bytes: Option<u64>,
    ) -> anyhow::Result<Checkpoint> {
        // Only the store's own cache is emptied (its device remounted, or
        // its files' pages let go): the whole machine's drop made the probe
        // fault ledgerbench's own executable back in, charged to the probe's
        // cgroup (docs/src/meters.md). Where that fails, the checkpoint says
        // so rather than passing a warm open off as a cold one.
        let page_cache_dropped = match placed.evict("each checkpoint opens its store cold") {
            Ok(()) => true,
            Err(e) => {
                ledgerbench_core::note!(
                    "[{}] page cache not emptied ({e:#}): the open and first pass are not cold",
                    self.spec.name
                );
                false
            }
        };
        let job = probe::Job {
            spec: self.spec.clone(),
            cfg: self.cfg.clone(),
            dir: placed.dirs[0].clone(),
            device: placed.devices()[0].map(|d| d.device().to_string()),
            batches,
        };
        let (mut c, peak) = probe::spawn(&job, self.limit)?;
        c.settle_secs = settle_secs;
        c.unsettled_bytes = unsettled_bytes;
        c.page_cache_dropped = page_cache_dropped;
        c.held.cgroup_peak_bytes = peak;
        Ok(c)
    }
}

//! `ledgerbench run trie`: a Merkle-Patricia state trie of N accounts in
//! each backend, by node hash and by path, blocks of updates and reads
//! under a memory limit, each store on its own loop device.

use std::process::ExitCode;

use ledgerbench_driver::rundir::RunDir;
use ledgerbench_driver::trie::{self, State, TrieConfig, TrieResults, TrieRun};
use ledgerbench_meter::cgroup::MemoryLimit;
use ledgerbench_report::doc::Doc;
use ledgerbench_report::export::RunSummary;
use ledgerbench_trie::{Scheme, Trie};

use crate::harness::{self, Placement};
use crate::observe::{JsonlSink, ProgressView};
use ledgerbench_driver::observe::Observer;

/// Options of `ledgerbench run trie`.
#[derive(clap::Args)]
pub struct Args {
    /// Accounts in the trie (32-byte hashed keys, ~80-byte accounts).
    #[arg(long, default_value_t = 1_000_000)]
    accounts: u64,
    /// Blocks after the load.
    #[arg(long, default_value_t = 200)]
    blocks: u64,
    /// Account updates picked per block (an account picked twice is
    /// updated once).
    #[arg(long, default_value_t = 2000)]
    updates_per_block: u64,
    /// Accounts read per block, through the trie and through the flat table.
    #[arg(long, default_value_t = 1000)]
    reads_per_block: u64,
    /// How nodes are keyed, comma-separated: hash (node hash -> node, old
    /// nodes stay) and/or path (nibble path -> node, overwritten in place).
    #[arg(long, value_delimiter = ',', value_enum, default_values_t = [SchemeArg::Hash, SchemeArg::Path])]
    scheme: Vec<SchemeArg>,
    /// Which accounts blocks touch: hotcold (--hot-share of picks on
    /// --hot-fraction of accounts), zipf (scrambled, --theta) or uniform.
    #[arg(long, default_value = "hotcold")]
    dist: String,
    /// hotcold: the hot accounts' share of all accounts.
    #[arg(long, default_value_t = 0.1)]
    hot_fraction: f64,
    /// hotcold: the share of picks that go to hot accounts.
    #[arg(long, default_value_t = 0.9)]
    hot_share: f64,
    /// zipf: the constant.
    #[arg(long, default_value_t = 0.99)]
    theta: f64,
    /// Backends, comma-separated.
    #[arg(long, env = crate::registry::BACKENDS_ENV, default_value = "rocksdb-leveled,pebble,mdbx,lmdb")]
    backends: String,
    #[command(flatten)]
    limit: crate::flags::MemoryLimitArg,
    /// Memory budget of each engine (memtables, block cache).
    #[arg(long, value_name = "SIZE", default_value = "64MiB")]
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

/// `--scheme`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SchemeArg {
    /// Node hash -> node.
    Hash,
    /// Nibble path -> node.
    Path,
}

impl From<SchemeArg> for Scheme {
    fn from(s: SchemeArg) -> Scheme {
        match s {
            SchemeArg::Hash => Scheme::Hash,
            SchemeArg::Path => Scheme::Path,
        }
    }
}

/// The workload's settings from the flags.
fn config(args: &Args) -> TrieConfig {
    TrieConfig {
        seed: args.seed,
        accounts: args.accounts,
        blocks: args.blocks,
        updates_per_block: args.updates_per_block,
        reads_per_block: args.reads_per_block,
        dist: args.dist.clone(),
        hot_fraction: args.hot_fraction,
        hot_share: args.hot_share,
        theta: args.theta,
        ..TrieConfig::default()
    }
}

/// Runs `ledgerbench run trie`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    args.output.check_build()?;
    let cfg = config(&args);
    cfg.validate().map_err(anyhow::Error::msg)?;
    let limit = args.limit.bytes()?;
    // Trie nodes and flat entries of the load, then hash-scheme growth of
    // every block's new nodes (about 7 of ~250 bytes an update), 3x for
    // the engines' space amplification.
    let logical = cfg.accounts * 400 + cfg.blocks * cfg.updates_per_block * 2000;
    let place = Placement {
        memory_limit: None,
        harness_allowance: 0,
        device_size: args.place.size(logical * 3 + (1 << 30))?,
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
    let mut schemes: Vec<Scheme> = Vec::new();
    for s in &args.scheme {
        if !schemes.contains(&(*s).into()) {
            schemes.push((*s).into());
        }
    }
    let (out, rundir) = args.output.create("trie")?;
    let mut results = TrieResults {
        header: ledgerbench_driver::env::header(
            "trie",
            cfg.seed,
            &out,
            Some(args.level.durability),
        ),
        config: cfg.clone(),
        memory_limit_bytes: limit,
        runs: Vec::new(),
    };
    let mut failed = false;
    for spec in &specs {
        for &scheme in &schemes {
            let mut run = TrieRun {
                backend: spec.name.clone(),
                scheme: scheme.name().into(),
                config: serde_json::to_value(&spec.config)?,
                device_meter: "absent: the run failed before its device was made".into(),
                load: None,
                blocks: Vec::new(),
                tail_device_write_bytes: None,
                device_stat_micros: None,
                cgroup_peak_bytes: None,
                harness_heap_peak_bytes: None,
                reference_root: None,
                error: None,
            };
            if let Err(e) = one(spec, scheme, &cfg, limit, &rundir, &place, &mut run) {
                ledgerbench_core::note!("[{} {}] failed: {e:#}", spec.name, scheme.name());
                run.error = Some(format!("{e:#}"));
                failed = true;
            }
            results.runs.push(run);
            crate::output::write_json(&out.join("results.json"), &results)?;
        }
    }
    let summary = RunSummary::text(&Doc::Trie(Box::new(results)));
    args.output.finish(&out, &summary, failed)
}

/// Loads, then runs the blocks of, one backend under one scheme into `run`.
fn one(
    spec: &crate::registry::BackendSpec,
    scheme: Scheme,
    cfg: &TrieConfig,
    limit: Option<u64>,
    rundir: &RunDir,
    place: &Placement,
    run: &mut TrieRun,
) -> anyhow::Result<()> {
    let label = format!("{} {}", spec.name, scheme.name());
    let placed = harness::place_stores(
        place,
        &label.replace(' ', "-"),
        &["state".to_string()],
        rundir,
    )
    .map_err(anyhow::Error::msg)?;
    run.device_meter = placed.meter.clone();
    let dir = placed.dirs[0].clone();
    // Read around every GET of the read passes: kept open, not reopened.
    let stat = match placed.devices()[0] {
        Some(d) => Some(d.stat_file()?),
        None => None,
    };
    let device = || stat.as_ref().and_then(|f| f.read().ok());
    let mut view = ProgressView::new(&label);
    let mut jsonl = JsonlSink::append(&rundir.path().join("blocks.jsonl"), &label);
    view.phase("load: accounts, sorted by hashed key");
    let before = device();
    let store = spec.open(&dir)?;
    let (root, mut load) = trie::load(cfg, scheme, &*store, &mut view)?;
    load.disk_allocated_bytes = store.disk_usage()?.allocated_bytes;
    store.close()?;
    placed.sync()?;
    load.device_write_bytes = before
        .zip(device())
        .map(|(a, b)| b.since(&a).write_sectors * 512);
    run.load = Some(load);
    // Blocks start from a cold cache inside the limit, as a node restarts.
    if let Err(e) = placed.evict("trie blocks start cold, as a node restarts") {
        ledgerbench_core::note!("[{label}] page cache not dropped ({e:#}): blocks start warm");
    }
    let guard = limit.map(MemoryLimit::enter).transpose()?;
    let _ = ledgerbench_meter::memory::take_heap_peak();
    run.device_stat_micros = stat.as_ref().map(|_| stat_micros(&device));
    let store = spec.open(&dir)?;
    let mut state = State::new(cfg);
    let mut t = Trie::new(&*store, scheme, root);
    view.phase("blocks");
    for b in 1..=cfg.blocks {
        let rec = trie::block(&mut state, &mut t, &*store, &device, b)?;
        jsonl.line(
            &serde_json::json!({ "backend": spec.name, "scheme": scheme.name(), "block": rec }),
        );
        run.blocks.push(rec);
        view.advanced(b, cfg.blocks);
    }
    let got = t.root();
    drop(t);
    let before_tail = device();
    store.close()?;
    placed.sync()?;
    run.tail_device_write_bytes = before_tail
        .zip(device())
        .map(|(a, b)| b.since(&a).write_sectors * 512);
    run.harness_heap_peak_bytes = ledgerbench_meter::memory::take_heap_peak();
    run.cgroup_peak_bytes = guard.as_ref().and_then(|g| g.max_usage().ok());
    drop(guard);
    view.phase("reference root: every account from scratch");
    let want = state.reference_root(&mut view)?;
    run.reference_root = Some(ledgerbench_trie::build::hex(&want));
    view.finish();
    if let Some(e) = jsonl.take_error() {
        anyhow::bail!(e);
    }
    same_root(cfg, &got, &want)
}

/// What one read of the device's counters costs, microseconds (the mean of
/// 1,000), so the report can tell it from the GETs it brackets.
fn stat_micros<T>(read: &impl Fn() -> Option<T>) -> f64 {
    let t = std::time::Instant::now();
    for _ in 0..1000 {
        let _ = read();
    }
    t.elapsed().as_secs_f64() * 1e6 / 1000.0
}

/// The trie's root after the last block must be the root of every account
/// built from scratch: a difference means an update was lost or misapplied.
fn same_root(cfg: &TrieConfig, got: &[u8], want: &[u8]) -> anyhow::Result<()> {
    if want != got {
        anyhow::bail!(
            "state root after block {} is {} but the accounts' root from scratch is {}: an update was lost or misapplied",
            cfg.blocks,
            ledgerbench_trie::build::hex(got),
            ledgerbench_trie::build::hex(want)
        );
    }
    Ok(())
}

//! `ledgerbench run crash`: the supervisor. For each backend x durability level
//! x crash kind it makes a private ext4 loop device, starts writer
//! processes that commit batches and acknowledge them, ends each at a
//! random acknowledgement (kill -9, or a power cut: the filesystem shut
//! down without flushing its journal, then remounted), and has a checker
//! process reopen the stores and say what survived. It owns every device,
//! mount and cgroup, and removes them whatever happens to its workers.

use std::process::ExitCode;

use anyhow::{Context, bail};
use ledgerbench_core::{CrashKind, Durability, Tuning};
use ledgerbench_driver::crash::{CrashResults, CrashShape};
use ledgerbench_meter::loopdev::LoopFs;
use ledgerbench_rng::stream;

use crate::registry::BackendSpec;
use crate::{registry, size};

mod device;
mod procs;
mod reboot;
mod supervisor;
pub mod worker;

use supervisor::Supervisor;

/// Options of `ledgerbench run crash`.
#[derive(clap::Args)]
pub struct Args {
    /// Backends, comma-separated.
    #[arg(long, env = crate::registry::BACKENDS_ENV, default_value = crate::registry::DEFAULT_LIST)]
    backends: String,
    /// Durability levels to test, comma-separated: none, process, power.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "none,process,power",
        value_delimiter = ',',
        value_parser = crate::harness::durability_parser()
    )]
    durability: Vec<Durability>,
    /// Crash kinds, comma-separated: kill (kill -9), power-cut (ext4
    /// shutdown without journal flush), and on the crash filesystem (FUSE):
    /// lose (every unsynced write lost), reorder (a random subset kept),
    /// torn (as reorder, one kept write cut at a sector boundary).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "kill,power-cut",
        value_delimiter = ',',
        value_parser = ["kill", "power-cut", "lose", "reorder", "torn"]
    )]
    kinds: Vec<String>,
    /// Crash cycles per backend, level and kind.
    #[arg(long, default_value_t = 50)]
    cycles: u32,
    /// What each batch writes: generic (200 random 32-byte keys x 1,000 B)
    /// or stellar (the ledgers, txdata and txindex stores).
    #[arg(long, default_value = "generic", value_parser = ["generic", "stellar"])]
    shape: String,
    /// Most batches a writer commits before it is crashed; the crash comes
    /// after a random number of acknowledgements up to this.
    #[arg(long, default_value_t = 100)]
    batches_per_cycle: u64,
    /// Seed of the batches and the crash points.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    #[command(flatten)]
    limit: crate::flags::MemoryLimitArg,
    /// Memory budget of each engine (memtables, block cache). Small, so
    /// RocksDB flushes and compacts often and crashes land in compactions.
    #[arg(long, value_name = "SIZE", default_value = "16MiB")]
    engine_memory: String,
    #[command(flatten)]
    set: crate::flags::SetArgs,
    /// Size of each private device (sparse).
    #[arg(long, value_name = "SIZE", default_value = "8GiB")]
    device_size: String,
    #[command(flatten)]
    output: crate::flags::OutputArgs,
}

fn parse_kind(s: &str) -> anyhow::Result<CrashKind> {
    CrashKind::ALL
        .into_iter()
        .find(|k| k.name() == s.trim())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "unknown crash kind `{s}`; accepted: kill, power-cut, lose, reorder, torn"
            )
        })
}

/// The specs under test at `level`, with the crash test's engine settings.
fn spec(
    name: &str,
    level: Durability,
    memory: u64,
    sets: &[String],
) -> anyhow::Result<BackendSpec> {
    let mut specs = registry::parse_list(name, level)?;
    for s in &mut specs {
        crate::harness::scale_memory(s, memory);
        // Compactions early and often, so crashes land in them; an
        // evicting store's cap above anything a test writes, so eviction
        // is not loss.
        s.tune(Tuning::FrequentCompactions);
        s.tune(Tuning::EvictionCapAtLeast(16 << 30));
    }
    let sets: Vec<String> = sets
        .iter()
        .filter(|l| l.starts_with(&format!("{name}.")))
        .cloned()
        .collect();
    registry::apply_sets(&mut specs, &sets)?;
    let s = specs.remove(0);
    s.check_durability(level)?;
    Ok(s)
}

/// A bar of crash cycles with rate and ETA on a terminal; nothing elsewhere
/// (each run's totals are printed as it ends either way).
fn progress_bar(cycles: u64, tag: &str) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(cycles);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{prefix:>28} [{bar:30}] {pos}/{len} cycles, {per_sec}, ETA {eta} {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_prefix(tag.to_string());
    bar
}

/// Runs `ledgerbench run crash`.
///
/// Long because the crash test's steps in order (checks, shape, device, the matrix of backend, level and kind), results kept after each cell.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    args.output.check_build()?;
    let shape = CrashShape::by_name(&args.shape).map_err(anyhow::Error::msg)?;
    let kinds: Vec<CrashKind> = args
        .kinds
        .iter()
        .map(|k| parse_kind(k))
        .collect::<anyhow::Result<_>>()?;
    if args.cycles == 0 || args.batches_per_cycle == 0 {
        bail!("--cycles and --batches-per-cycle must be at least 1");
    }
    let memory = size::parse_named("--engine-memory", &args.engine_memory)?;
    let device_size = size::parse_named("--device-size", &args.device_size)?;
    let memory_limit = args.limit.bytes()?;
    // Every spec is checked before anything is created.
    let names: Vec<String> = registry::parse_list(&args.backends, Durability::None)?
        .into_iter()
        .map(|s| s.name)
        .collect();
    // Every --set is well formed and names a backend under test: one that
    // matches nothing would be ignored silently.
    for line in &args.set.sets {
        let (backend, _) = registry::parse_set(line)?;
        if !names.contains(&backend) {
            bail!("--set `{line}`: backend `{backend}` is not in this run");
        }
    }
    let mut plan = Vec::new();
    for name in &names {
        for &level in &args.durability {
            let s = spec(name, level, memory, &args.set.sets)?;
            for &kind in &kinds {
                plan.push((s.clone(), level, kind));
            }
        }
    }
    // After the arguments: a bad one is named on every machine.
    LoopFs::available().map_err(|e| {
        anyhow::anyhow!("ledgerbench run crash needs root and loop devices (a power cut is simulated on a private ext4 filesystem): {e}")
    })?;
    if kinds.iter().any(|k| k.on_crash_fs()) {
        ledgerbench_crashfs::available().map_err(|e| {
            anyhow::anyhow!(
                "--kinds lose, reorder and torn run the stores on a FUSE crash filesystem: {e}"
            )
        })?;
    }
    let (out, rundir) = args.output.create("crash")?;
    let mut results = CrashResults {
        header: ledgerbench_driver::env::header("crash", args.seed, &out, None),
        shape: shape.clone(),
        batches_per_cycle: args.batches_per_cycle,
        runs: Vec::new(),
        summary_rule: ledgerbench_results::crash::SUMMARY_RULE,
        interrupted: None,
        check_window: ledgerbench_results::crash::WINDOW,
        check_samples: ledgerbench_results::crash::SAMPLES,
    };
    let exe = std::env::current_exe().context("finding the ledgerbench binary")?;
    // Ctrl-C and SIGTERM end the run between steps: workers stopped,
    // mounts, devices and cgroups removed, the cycles so far kept.
    ledgerbench_driver::interrupt::install();
    for (spec, level, kind) in plan {
        let tag = format!("{}-{}-{}", spec.name, level, kind.name());
        let bar = progress_bar(u64::from(args.cycles), &tag);
        if bar.is_hidden() {
            ledgerbench_core::note!("[{tag}] {} cycles...", args.cycles);
        }
        let sup = Supervisor {
            bar: &bar,
            exe: &exe,
            shape: &shape,
            seed: args.seed,
            cycles: args.cycles,
            batches: args.batches_per_cycle,
            memory_limit,
            device_size,
        };
        let cell = supervisor::Cell {
            spec: &spec,
            level,
            kind,
            // From the cell's name, not its place in the plan: the same
            // --seed replays a cell in a run of it alone.
            seed: stream(args.seed, ledgerbench_rng::value_hash(tag.as_bytes()), 0),
        };
        let run = sup.run(&rundir, &tag, cell);
        bar.finish_and_clear();
        ledgerbench_core::note!(
            "[{tag}] {}",
            ledgerbench_report::crash::one_line(&run.summary, run.error.as_deref())
        );
        results.runs.push(run);
        results.interrupted = ledgerbench_driver::interrupt::requested().map(String::from);
        crate::output::write_json(&out.join("results.json"), &results)?;
        if let Some(sig) = &results.interrupted {
            bail!(
                "interrupted by {sig}: nothing is left mounted; the cycles so far are in {}",
                out.join("results.json").display()
            );
        }
    }
    let table = ledgerbench_report::crash::crash_table(&results);
    args.output.finish(&out, &table, false)
}

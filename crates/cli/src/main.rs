//! `ledgerbench`: the command-line front end.

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

mod ab_cmd;
mod param_help;
mod plan;
mod report_cmd;
mod trials_cmd;

use ledgerbench_engines as registry;
use ledgerbench_runner::{
    capacity_cmd, crash, fanout_cmd, flags, import_cmd, micro_cmd, output, pointreads_cmd, presets,
    replay_cmd, soak_cmd, stellar_cmd, supervise, trie_cmd,
};

/// Counts the harness's own heap (Rust allocations; engines in C/C++
/// allocate with malloc and are not counted), so results can say how much
/// of a memory limit ledgerbench itself used.
#[global_allocator]
static HEAP: ledgerbench_meter::memory::Counting = ledgerbench_meter::memory::Counting;

/// Benchmark embedded storage engines under blockchain workloads.
#[derive(Parser)]
#[command(name = "ledgerbench", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a workload against one or more backends, or one cell of a plan (--job).
    #[command(args_conflicts_with_subcommands = true, subcommand_required = false)]
    #[command(
        after_long_help = "Example:\n  ledgerbench run stellar --preset quick --backends rocksdb-leveled,mdbx\n\nGuide: docs/src/getting-started.md"
    )]
    Run {
        /// A job file of `ledgerbench plan`: run only its cell, into
        /// --out-dir/<cell id>.
        #[arg(long, value_name = "FILE")]
        job: Option<std::path::PathBuf>,
        /// Where --job writes its cell's results directory.
        #[arg(long, value_name = "DIR", default_value = ".", requires = "job")]
        out_dir: std::path::PathBuf,
        #[command(subcommand)]
        workload: Option<Workload>,
    },
    /// Split a sweep into one job file per cell for a scheduler (a CI
    /// matrix, Kubernetes Indexed Jobs, Slurm arrays), e.g. `ledgerbench plan
    /// --dir plan run stellar --preset outgrow-memory --sweep-limits 512MiB,256MiB`.
    #[command(
        after_long_help = "Example:\n  ledgerbench plan --dir plan run stellar --preset outgrow-memory --sweep-limits 512MiB,256MiB\n\nGuide: docs/src/sweeps.md"
    )]
    Plan(plan::PlanArgs),
    /// Record a workload's key-value operations into a trace file.
    #[command(
        after_long_help = "Example:\n  ledgerbench record stellar --preset quick --out quick.kvtrace\n\nGuide: docs/src/workloads.md"
    )]
    Record(replay_cmd::RecordArgs),
    /// Import real data into a trace file (galexie: Stellar data-lake files; rocksdb-trace: a RocksDB query trace).
    #[command(
        after_long_help = "Examples:\n  ledgerbench import galexie fixtures/stellar-pubnet --out real.kvtrace\n  ledgerbench import rocksdb-trace fixtures/rocksdb-trace/6-mixgraph.trace --scan-length 10 --out mixgraph.kvtrace\n\nGuide: docs/src/own-workload.md"
    )]
    Import(import_cmd::ImportArgs),
    /// Fit a workload model per store from a trace (op mix, sizes, insert
    /// order, access skew, read ages, lifetimes, commits) into a TOML file.
    #[command(
        after_long_help = "Example:\n  ledgerbench fit fixtures/rocksdb-trace/6-mixgraph.trace --scan-length 10 --out mixgraph.toml\n\nGuide: docs/src/fit.md"
    )]
    Fit(ledgerbench_runner::fit_cmd::FitArgs),
    /// Print real files' distributions beside the synthetic generator's.
    #[command(
        after_long_help = "Example:\n  ledgerbench calibrate stellar fixtures/stellar-pubnet\n\nGuide: docs/src/workloads.md"
    )]
    Calibrate(import_cmd::CalibrateArgs),
    /// Render a markdown report with SVG charts and CSV from results files.
    #[command(
        after_long_help = "Example:\n  ledgerbench report ledgerbench-runs/stellar-A --html --out report\n\nGuide: docs/src/reports.md"
    )]
    Report(report_cmd::ReportArgs),
    /// Compare current results with a baseline; exit 1 on a regression.
    #[command(
        after_long_help = "Example:\n  ledgerbench compare --baseline base/ --current new/\n\nGuide: docs/src/reports.md"
    )]
    Compare(report_cmd::CompareArgs),
    /// Time baseline and current alternately (A B B A ...) on this machine;
    /// exit 1 when a timing got worse beyond the same code's noise.
    #[command(
        after_long_help = "Example:\n  ledgerbench ab --baseline ./ledgerbench-main --current ./target/release/ledgerbench\n\nGuide: docs/src/ab.md"
    )]
    Ab(Box<ab_cmd::AbArgs>),
    /// Export results in one format: bencher (JSON for bencher.dev), markdown, html, csv, svg, verdict or summary.
    #[command(
        after_long_help = "Example:\n  ledgerbench export csv ledgerbench-runs/stellar-A --out csv/\n\nGuide: docs/src/reports.md"
    )]
    Export(report_cmd::ExportArgs),
    /// Run the drift verdict's known-answer trials: synthetic soak series,
    /// flat or with a planted drift or step, under AR(1) noise.
    #[command(
        after_long_help = "Example:\n  ledgerbench drift-trials --series 200\n\nGuide: docs/src/soak.md"
    )]
    DriftTrials(trials_cmd::Args),
    /// List backends, presets, stores and compaction strategies.
    #[command(
        after_long_help = "Example:\n  ledgerbench list --json\n\nGuide: docs/src/getting-started.md"
    )]
    List {
        /// Print them as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print a shell completion script, e.g. `ledgerbench completions bash > /etc/bash_completion.d/ledgerbench`.
    #[command(
        after_long_help = "Example:\n  ledgerbench completions bash\n\nGuide: docs/src/getting-started.md"
    )]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Remove what a killed ledgerbench left behind: mounted loop devices, their
    /// images, memory cgroups, crash mounts and tmpfs scratch directories of
    /// processes that no longer run.
    #[command(
        after_long_help = "Example:\n  ledgerbench clean --dry-run\n\nGuide: docs/src/getting-started.md"
    )]
    Clean {
        /// Only list what would be removed.
        #[arg(long)]
        dry_run: bool,
    },
    /// A process `ledgerbench run crash` starts and crashes (not for direct use).
    #[command(hide = true)]
    CrashWorker(crash::worker::Args),
    /// A process `ledgerbench run fan-out` starts to measure a checkpoint (not for direct use).
    #[command(hide = true)]
    FanOutProbe(fanout_cmd::probe::Args),
}

#[derive(Subcommand)]
enum Workload {
    /// Stellar ledger ingestion: ledgers, txdata and txindex stores, batch by batch.
    #[command(
        after_long_help = "Example:\n  ledgerbench run stellar --preset quick --durability power\n\nGuide: docs/src/stellar.md"
    )]
    Stellar(Box<stellar_cmd::Args>),
    /// Point reads of random 32-byte keys: device IO per GET before and after a full compaction.
    #[command(
        after_long_help = "Example:\n  ledgerbench run point-reads --keys 10000000 --memory-limit 256MiB --backends rocksdb-leveled,lmdb,mdbx\n\nGuide: docs/src/point-reads.md"
    )]
    PointReads(Box<pointreads_cmd::Args>),
    /// Lookup fan-out: a store grown batch by batch (a partition per batch), random-hash GETs, memory and open time at chosen batch counts.
    #[command(
        after_long_help = "Example:\n  ledgerbench run fan-out --memory-limit 256MiB\n\nGuide: docs/src/fan-out.md"
    )]
    FanOut(Box<fanout_cmd::Args>),
    /// Capacity at a block time: the highest rate of rows (transactions, shreds) each backend persists close after close, by bisection.
    #[command(
        after_long_help = "Example:\n  ledgerbench run capacity --rows shred --close-interval 400ms --backends rocksdb-fifo,rocksdb-leveled\n\nGuide: docs/src/concurrency.md"
    )]
    Capacity(Box<capacity_cmd::Args>),
    /// State trie: a Merkle-Patricia trie of N accounts by node hash or by path, blocks of updates and reads, device reads per account read through the trie and through the flat table.
    #[command(
        after_long_help = "Example:\n  ledgerbench run trie --accounts 4000000 --blocks 200 --memory-limit 128MiB\n\nGuide: docs/src/trie.md"
    )]
    Trie(Box<trie_cmd::Args>),
    /// db_bench's staples (fillseq, fillrandom, overwrite, readrandom, readseq, seekrandom, deleterandom, readwhilewriting) on every backend, in db_bench's layout.
    #[command(
        after_long_help = "Example:\n  ledgerbench run micro --benchmarks fillrandom,readrandom --num 1000000 --threads 1\n\nGuide: docs/src/micro.md"
    )]
    Micro(Box<micro_cmd::Args>),
    /// Replay a trace file (from `ledgerbench record` or `ledgerbench import`) on each backend.
    #[command(
        after_long_help = "Example:\n  ledgerbench run replay quick.kvtrace --backends lmdb,mdbx\n\nGuide: docs/src/workloads.md"
    )]
    Replay(Box<replay_cmd::ReplayArgs>),
    /// YCSB core workloads A to F (--param workload=a..f, records, operations, ...).
    #[command(
        after_long_help = "Example:\n  ledgerbench run ycsb --param workload=\"b\" --param records=1000000\n\nGuide: docs/src/workloads.md"
    )]
    Ycsb(Box<replay_cmd::GenArgs>),
    /// Solana blockstore: shreds by (slot, index), slot metadata, retention by delete or FIFO.
    #[command(
        after_long_help = "Example:\n  ledgerbench run solana --preset contrast\n\nGuide: docs/src/workloads.md"
    )]
    Solana(Box<replay_cmd::GenArgs>),
    /// Blob store with TTL (EigenDA-style soak): large write-once blobs, expiry, checked reads.
    #[command(
        after_long_help = "Example:\n  ledgerbench run blobs --param duration_secs=600 --param batches=0\n\nGuide: docs/src/workloads.md"
    )]
    Blobs(Box<replay_cmd::GenArgs>),
    /// Account state: creates, reads and read-modify-writes in blocks.
    #[command(
        after_long_help = "Example:\n  ledgerbench run accounts --param accounts=1000000 --threads 4\n\nGuide: docs/src/workloads.md"
    )]
    Accounts(Box<replay_cmd::GenArgs>),
    /// A workload model (from `ledgerbench fit`, or written by hand) played at a scale: its initial state, then its mix, sizes, skew and commits.
    #[command(
        after_long_help = "Example:\n  ledgerbench run synth --workload mixgraph.toml --scale 10x --backends rocksdb-leveled,mdbx\n\nGuide: docs/src/fit.md"
    )]
    Synth(Box<ledgerbench_runner::synth_cmd::Args>),
    /// Crash safety: kill -9 and power cuts of a committing writer, then
    /// checks that every batch the durability level promises survived whole.
    #[command(
        after_long_help = "Example:\n  ledgerbench run crash --backends mdbx --durability process,power --kinds kill,power-cut\n\nGuide: docs/src/durability.md"
    )]
    Crash(Box<crash::Args>),
    /// Soak: a workload for hours at a steady load, sampled each interval,
    /// then each metric judged flat, drifting or stepped.
    #[command(
        after_long_help = "Example:\n  ledgerbench run soak blobs --duration 2h --interval 10s --backends rocksdb-fifo,mdbx --memory-limit 1GiB\n\nGuide: docs/src/soak.md"
    )]
    Soak(Box<soak_cmd::Args>),
}

fn main() -> ExitCode {
    let matches = param_help::with_settings(Cli::command()).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    registry::init_process();
    if supervise::is_worker() {
        crash::worker::die_with_parent();
    }
    if let Some(code) = resumed(&cli) {
        return code;
    }
    if let Some((sub, out)) = supervised(&cli) {
        // The supervisor claims the run directory, so it knows where the
        // worker writes and can keep or remove what the worker leaves.
        return supervise::run(sub, out).unwrap_or_else(|e| {
            ledgerbench_core::note!("error: {}", output::error_text(&e));
            ExitCode::from(2)
        });
    }
    let result = match cli.command {
        Command::List { json } => list(json).map(|()| ExitCode::SUCCESS),
        Command::Report(a) => report_cmd::report(a),
        Command::Record(a) => replay_cmd::record(a),
        Command::Import(a) => import_cmd::import(a),
        Command::Fit(a) => ledgerbench_runner::fit_cmd::fit(a),
        Command::Calibrate(a) => import_cmd::calibrate(a),
        Command::Compare(a) => report_cmd::compare(a),
        Command::Ab(a) => ab_cmd::ab(*a),
        Command::Export(a) => report_cmd::export(a),
        Command::DriftTrials(a) => trials_cmd::run(a),
        Command::CrashWorker(a) => crash::worker::run(a),
        Command::FanOutProbe(a) => fanout_cmd::probe::run(a),
        Command::Clean { dry_run } => clean(dry_run),
        Command::Completions { shell } => {
            // Into a buffer, then printed: clap_complete panics on a
            // closed pipe where `say` ends quietly.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "ledgerbench", &mut script);
            output::say(String::from_utf8_lossy(&script).trim_end());
            Ok(ExitCode::SUCCESS)
        }
        Command::Plan(a) => plan::plan(a),
        Command::Run {
            job: Some(file),
            out_dir,
            ..
        } => plan::run_job(&file, &out_dir),
        Command::Run { workload: None, .. } => Err(anyhow::anyhow!(
            "`ledgerbench run` needs a workload (`ledgerbench run --help` lists them) or --job FILE"
        )),
        Command::Run {
            workload: Some(workload),
            ..
        } => match workload {
            Workload::Stellar(args) => stellar_cmd::run(*args),
            Workload::PointReads(args) => pointreads_cmd::run(*args),
            Workload::FanOut(args) => fanout_cmd::run(*args),
            Workload::Capacity(args) => capacity_cmd::run(*args),
            Workload::Trie(args) => trie_cmd::run(*args),
            Workload::Micro(args) => micro_cmd::run(*args),
            Workload::Replay(args) => replay_cmd::replay(*args),
            Workload::Ycsb(args) => replay_cmd::generated("ycsb", *args, None, None),
            Workload::Solana(args) => replay_cmd::generated("solana", *args, None, None),
            Workload::Blobs(args) => replay_cmd::generated("blobs", *args, None, None),
            Workload::Accounts(args) => replay_cmd::generated("accounts", *args, None, None),
            Workload::Synth(args) => ledgerbench_runner::synth_cmd::run(*args),
            Workload::Crash(args) => crash::run(*args),
            Workload::Soak(args) => soak_cmd::run(*args),
        },
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            ledgerbench_core::note!("error: {}", output::error_text(&e));
            // 2, not 1: `ledgerbench compare` exits 1 for a regression, and a CI
            // gate must tell a regression from a broken invocation.
            ExitCode::from(2)
        }
    }
}

/// `run stellar --resume DIR`: the resumed run's exit code.
fn resumed(cli: &Cli) -> Option<ExitCode> {
    let Command::Run {
        workload: Some(Workload::Stellar(a)),
        ..
    } = &cli.command
    else {
        return None;
    };
    let dir = a.resume.as_deref().filter(|_| !supervise::is_worker())?;
    Some(supervise::resume(dir).unwrap_or_else(|e| {
        ledgerbench_core::note!("error: {}", output::error_text(&e));
        ExitCode::from(2)
    }))
}

/// For a run command, the workload's name and `--out`: it runs as a
/// worker under a supervisor, which removes the loop devices and memory
/// cgroups a killed worker leaves (as root) and keeps the watchdog (always).
fn supervised(cli: &Cli) -> Option<(&'static str, &flags::OutputArgs)> {
    if supervise::is_worker() {
        return None;
    }
    let Command::Run {
        workload: Some(workload),
        ..
    } = &cli.command
    else {
        return None;
    };
    Some(match workload {
        Workload::Stellar(a) => ("stellar", a.output()),
        Workload::PointReads(a) => ("point-reads", a.output()),
        Workload::FanOut(a) => ("fan-out", a.output()),
        Workload::Capacity(a) => ("capacity", a.output()),
        Workload::Trie(a) => ("trie", a.output()),
        Workload::Micro(a) => ("micro", a.output()),
        Workload::Replay(a) => ("replay", a.output()),
        Workload::Ycsb(a) => ("ycsb", a.output()),
        Workload::Solana(a) => ("solana", a.output()),
        Workload::Blobs(a) => ("blobs", a.output()),
        Workload::Accounts(a) => ("accounts", a.output()),
        Workload::Synth(a) => ("synth", a.output()),
        Workload::Soak(a) => ("soak", a.output()),
        // The crash test is a supervisor of its own.
        Workload::Crash(_) => return None,
    })
}

fn clean(dry_run: bool) -> anyhow::Result<ExitCode> {
    use ledgerbench_meter::clean::{find, remove};
    let found = find();
    if found.is_empty() {
        output::say(format_args!(
            "nothing to clean: no loop device, crash filesystem mount, cgroup or tmpfs scratch directory of a stopped ledgerbench"
        ));
        return Ok(ExitCode::SUCCESS);
    }
    let mut failed = 0;
    for l in &found {
        if dry_run {
            output::say(format_args!("would remove {l}"));
        } else {
            match remove(l) {
                Ok(()) => output::say(format_args!("removed {l}")),
                Err(e) => {
                    failed += 1;
                    ledgerbench_core::note!("could not remove {l}: {e}");
                }
            }
        }
    }
    if failed > 0 {
        anyhow::bail!("{failed} of {} leftovers could not be removed", found.len());
    }
    Ok(ExitCode::SUCCESS)
}

fn list(json: bool) -> anyhow::Result<()> {
    if json {
        let presets: serde_json::Map<String, serde_json::Value> = presets::NAMES
            .iter()
            .filter_map(|n| presets::get(n).map(|p| (n.to_string(), p.about.into())))
            .collect();
        let paths: serde_json::Map<String, serde_json::Value> = registry::names()
            .filter_map(|n| registry::BackendSpec::by_name(n).ok())
            .map(|s| (s.name.clone(), s.call_path().name().into()))
            .collect();
        // The null references answer without keeping what they are given:
        // nothing to compare an engine's content with.
        let references: Vec<&str> = registry::names()
            .filter(|n| registry::BackendSpec::by_name(n).is_ok_and(|s| s.discards_writes()))
            .collect();
        let v = serde_json::json!({
            "backends": registry::names().collect::<Vec<_>>(),
            "discard_writes": references,
            "call_paths": paths,
            "default_backends": registry::DEFAULT_BACKENDS,
            "presets": presets,
            "workload_presets": presets::OPS
                .iter()
                .map(|(w, n, p)| serde_json::json!({"workload": w, "name": n, "about": p.about}))
                .collect::<Vec<_>>(),
            "stores": ledgerbench_workloads::stellar::STORES,
            "workloads": run_workloads(),
            "compaction_strategies": compaction_strategies(),
        });
        output::say(serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    output::say(format_args!("backends:"));
    for n in registry::names() {
        let default = if registry::DEFAULT_BACKENDS.contains(&n) {
            ", default"
        } else {
            ""
        };
        let spec = registry::BackendSpec::by_name(n)?;
        let why = spec
            .unavailable()
            .map_or(String::new(), |w| format!("; unavailable: {w}"));
        output::say(format_args!(
            "  {n:<20} {}{default}{why}",
            spec.call_path().name()
        ));
    }
    output::say(format_args!(
        "presets (ledgerbench run stellar --preset NAME):"
    ));
    for n in presets::NAMES {
        if let Some(p) = presets::get(n) {
            output::say(format_args!("  {n:<15} {}", p.about));
        }
    }
    output::say(format_args!(
        "presets of generated workloads (ledgerbench run WORKLOAD --preset NAME):"
    ));
    for (w, n, p) in presets::OPS {
        output::say(format_args!("  {n:<15} {w}: {}", p.about));
    }
    output::say(format_args!(
        "stores: {}",
        ledgerbench_workloads::stellar::STORES.join(", ")
    ));
    output::say(format_args!(
        "workloads (ledgerbench run NAME): {}",
        run_workloads().join(", ")
    ));
    output::say(format_args!(
        "  generated, with --param KEY=VALUE: {}",
        ledgerbench_workloads::NAMES.join(", ")
    ));
    output::say(format_args!(
        "compaction strategies (--compaction): {}",
        compaction_strategies().join(", ")
    ));
    Ok(())
}

/// Every workload `ledgerbench run` takes, from its subcommands, so the list
/// cannot fall behind them.
fn run_workloads() -> Vec<String> {
    Cli::command()
        .find_subcommand("run")
        .map(|run| {
            run.get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn compaction_strategies() -> Vec<&'static str> {
    ledgerbench_driver::stellar::CompactionStrategy::NAMES
        .split(", ")
        .collect()
}

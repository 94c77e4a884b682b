//! `kvbench`: the command-line front end.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod harness;
mod import_cmd;
mod pointreads_cmd;
mod presets;
mod registry;
mod replay_cmd;
mod report_cmd;
mod size;
mod stellar_cmd;
mod table;

/// Benchmark embedded storage engines under blockchain workloads.
#[derive(Parser)]
#[command(name = "kvbench", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a workload against one or more backends.
    Run {
        #[command(subcommand)]
        workload: Workload,
    },
    /// Record a workload's key-value operations into a trace file.
    Record(replay_cmd::RecordArgs),
    /// Import real ledgers into a trace file (galexie: Stellar data-lake files).
    Import(import_cmd::ImportArgs),
    /// Print real files' distributions beside the synthetic generator's.
    Calibrate(import_cmd::CalibrateArgs),
    /// Render a markdown report with SVG charts and CSV from results files.
    Report(report_cmd::ReportArgs),
    /// Compare current results with a baseline; exit 1 on a regression.
    Compare(report_cmd::CompareArgs),
    /// Export results for other tools (Bencher Metric Format).
    Export(report_cmd::ExportArgs),
    /// List backends, presets, stores and compaction strategies.
    List,
}

#[derive(Subcommand)]
enum Workload {
    /// Stellar ledger ingestion: ledgers, txdata and txindex stores, batch by batch.
    Stellar(Box<stellar_cmd::Args>),
    /// Point reads of random 32-byte keys: device IO per GET before and after a full compaction.
    PointReads(Box<pointreads_cmd::Args>),
    /// Replay a trace file (from `kvbench record` or `kvbench import`) on each backend.
    Replay(Box<replay_cmd::ReplayArgs>),
    /// YCSB core workloads A to F (--param workload=a..f, records, operations, ...).
    Ycsb(Box<replay_cmd::GenArgs>),
    /// Solana blockstore: shreds by (slot, index), slot metadata, retention by delete or FIFO.
    Solana(Box<replay_cmd::GenArgs>),
    /// Blob store with TTL (EigenDA-style soak): large write-once blobs, expiry, checked reads.
    Blobs(Box<replay_cmd::GenArgs>),
    /// Account state: creates, reads and read-modify-writes in blocks.
    Accounts(Box<replay_cmd::GenArgs>),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::List => {
            list();
            Ok(ExitCode::SUCCESS)
        }
        Command::Report(a) => report_cmd::report(a),
        Command::Record(a) => replay_cmd::record(a),
        Command::Import(a) => import_cmd::import(a),
        Command::Calibrate(a) => import_cmd::calibrate(a),
        Command::Compare(a) => report_cmd::compare(a),
        Command::Export(a) => report_cmd::export(a),
        Command::Run { workload } => match workload {
            Workload::Stellar(args) => stellar_cmd::run(*args),
            Workload::PointReads(args) => pointreads_cmd::run(*args),
            Workload::Replay(args) => replay_cmd::replay(*args),
            Workload::Ycsb(args) => replay_cmd::generated("ycsb", *args),
            Workload::Solana(args) => replay_cmd::generated("solana", *args),
            Workload::Blobs(args) => replay_cmd::generated("blobs", *args),
            Workload::Accounts(args) => replay_cmd::generated("accounts", *args),
        },
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            // 2, not 1: `kvbench compare` exits 1 for a regression, and a CI
            // gate must tell a regression from a broken invocation.
            ExitCode::from(2)
        }
    }
}

fn list() {
    println!("backends:");
    for n in registry::NAMES {
        let default = if registry::DEFAULT_BACKENDS.contains(n) {
            " (default)"
        } else {
            ""
        };
        println!("  {n}{default}");
    }
    println!("presets (kvbench run stellar --preset NAME):");
    for n in presets::NAMES {
        if let Some(p) = presets::get(n) {
            println!("  {n:<13} {}", p.about);
        }
    }
    println!("stores: {}", kvbench_workload::stellar::STORES.join(", "));
    println!(
        "generated workloads (kvbench run NAME --param KEY=VALUE): {}",
        kvbench_opgen::NAMES.join(", ")
    );
    println!(
        "compaction strategies: {}",
        kvbench_driver::stellar::CompactionStrategy::NAMES
    );
}

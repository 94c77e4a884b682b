//! `ledgerbench import galexie` (real Stellar ledgers into a trace) and
//! `ledgerbench calibrate stellar` (real files' shape beside the generator's).

use std::fmt::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use ledgerbench_galexie::{ImportConfig, LedgerOps, PUBNET};
use ledgerbench_workloads::shape::{Shape, ShapeBuilder, Spread};
use ledgerbench_workloads::stellar::{StellarGen, StellarProfile};

/// What `ledgerbench import` reads.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ImportFormat {
    /// Stellar ledgers: SEP-54 data-lake files (.xdr.zst) or base64
    /// LedgerCloseMeta line files.
    Galexie,
    /// RocksDB query traces (`DB::StartTrace`, db_bench --trace_file;
    /// trace format 0.1 or 0.2).
    RocksdbTrace,
}

/// Options of `ledgerbench import`.
#[derive(clap::Args)]
pub struct ImportArgs {
    /// Source format.
    #[arg(value_name = "FORMAT", value_enum)]
    format: ImportFormat,
    /// galexie: files or directories (searched for .xdr.zst / .xdr.zstd lake
    /// files, .txt / .b64 base64 line files and .config.json);
    /// rocksdb-trace: trace files, one stream in the order given.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Trace file to create (never overwritten).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Network passphrase; default from .config.json, else pubnet's.
    #[arg(long)]
    passphrase: Option<String>,
    /// Ledgers per atomic commit.
    #[arg(long, default_value_t = 1)]
    commit_ledgers: u32,
    /// Ledgers per batch (flush, compaction, mark).
    #[arg(long, default_value_t = 1)]
    batch_ledgers: u32,
    /// No manual compaction after each batch.
    #[arg(long)]
    no_compact: bool,
    /// zstd level of stored ledgers and records.
    #[arg(long, default_value_t = 3)]
    zstd_level: i32,
    #[command(flatten)]
    rocks: crate::import_rocks::RocksArgs,
}

/// Options of `ledgerbench calibrate`.
#[derive(clap::Args)]
pub struct CalibrateArgs {
    /// Workload: stellar.
    #[arg(value_name = "WORKLOAD")]
    workload: String,
    /// Real ledger files or directories (as for `ledgerbench import galexie`).
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Network passphrase; default from .config.json, else pubnet's.
    #[arg(long)]
    passphrase: Option<String>,
    /// Synthetic ledgers to generate for the comparison.
    #[arg(long, default_value_t = 200)]
    synthetic_ledgers: u32,
    /// Seed of the synthetic ledgers.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Print the figures as JSON (`real`, `synthetic`) instead of a table.
    #[arg(long)]
    json: bool,
}

fn files_and_passphrase(
    paths: &[PathBuf],
    flag: Option<String>,
) -> anyhow::Result<(Vec<PathBuf>, String)> {
    let (files, from_config) = ledgerbench_galexie::collect(paths)?;
    if files.is_empty() {
        bail!(
            "no ledger files under {}: expected .xdr.zst / .xdr.zstd data-lake files or base64 LedgerCloseMeta line files",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok((files, flag.or(from_config).unwrap_or_else(|| PUBNET.into())))
}

/// Runs `ledgerbench import`.
pub fn import(args: ImportArgs) -> anyhow::Result<ExitCode> {
    if let ImportFormat::RocksdbTrace = args.format {
        if args.passphrase.is_some()
            || args.commit_ledgers != 1
            || args.batch_ledgers != 1
            || args.no_compact
            || args.zstd_level != 3
        {
            bail!(
                "--passphrase, --commit-ledgers, --batch-ledgers, --no-compact and --zstd-level are galexie's; a RocksDB trace takes --cf, --scan-length, --merge-as-put, --seek-for-prev-forward, --allow-missing-end, --hash-keys, --drop-values and --mark-every"
            );
        }
        return crate::import_rocks::import(&args.paths, &args.out, &args.rocks);
    }
    if args.rocks.any() {
        bail!(
            "--cf, --scan-length, --merge-as-put, --seek-for-prev-forward, --allow-missing-end, --hash-keys, --drop-values and --mark-every are for `import rocksdb-trace`"
        );
    }
    let (files, passphrase) = files_and_passphrase(&args.paths, args.passphrase)?;
    let cfg = ImportConfig {
        passphrase,
        zstd_level: args.zstd_level,
        commit_ledgers: args.commit_ledgers,
        batch_ledgers: args.batch_ledgers,
        compact: !args.no_compact,
    };
    // Ctrl-C ends the import through its error path, which removes the
    // partial trace.
    ledgerbench_driver::interrupt::install();
    let mut src = ledgerbench_trace::queue::Queued::new(LedgerOps::new(files, cfg)?);
    let st = ledgerbench_driver::ops::record_trace(&mut src, &args.out)
        .with_context(|| format!("importing into {}", args.out.display()))?;
    let s = src.inner().stats();
    let range = match (s.first, s.last) {
        (Some(a), Some(b)) => format!("{a}..={b}"),
        _ => "none".into(),
    };
    if s.out_of_order > 0 {
        ledgerbench_core::note!(
            "warning: {} ledger(s) came after a higher sequence (files named out of order); the trace keeps the order read",
            s.out_of_order
        );
    }
    ledgerbench_core::note!(
        "imported {} ledgers ({range}) from {} files: {} transactions, every hash recomputed and matched; {} operations ({:.1} MiB logical) into {}",
        s.ledgers,
        s.files,
        s.txs,
        st.ops,
        st.logical_bytes as f64 / f64::from(1u32 << 20),
        args.out.display()
    );
    crate::output::say(serde_json::to_string_pretty(s)?);
    Ok(ExitCode::SUCCESS)
}

/// Runs `ledgerbench calibrate`.
pub fn calibrate(args: CalibrateArgs) -> anyhow::Result<ExitCode> {
    if args.workload != "stellar" {
        bail!(
            "unknown workload `{}` to calibrate; accepted: stellar",
            args.workload
        );
    }
    let (files, passphrase) = files_and_passphrase(&args.paths, args.passphrase)?;
    let profile = StellarProfile::default();
    let network = ledgerbench_galexie::network_id(&passphrase);
    let mut real = ShapeBuilder::new(profile.zstd_level);
    let mut rec = Vec::new();
    let mut records: Vec<Vec<u8>> = Vec::new();
    for f in &files {
        for lcm in ledgerbench_galexie::read_file(f)? {
            let l = ledgerbench_galexie::decode(&lcm, network)?;
            records.clear();
            for i in 0..l.txs.len() {
                l.tx_record(i, &mut rec);
                records.push(rec.clone());
            }
            real.add(&l.xdr, records.iter().map(Vec::as_slice))?;
        }
    }
    let real = real.finish();
    let g = StellarGen::new(args.seed, profile.clone())?;
    let mut synth = ShapeBuilder::new(profile.zstd_level);
    for i in 0..args.synthetic_ledgers {
        let l = g.ledger(profile.first_ledger + i);
        synth.add(&l.raw, l.tx_records.iter().map(Vec::as_slice))?;
    }
    let synth = synth.finish();
    if args.json {
        let v = serde_json::json!({ "seed": args.seed, "real": real, "synthetic": synth });
        crate::output::say(serde_json::to_string_pretty(&v)?);
    } else {
        crate::output::say(calibration_table(&files, &real, &synth, args.seed));
    }
    Ok(ExitCode::SUCCESS)
}

fn calibration_table(files: &[PathBuf], real: &Shape, synth: &Shape, seed: u64) -> String {
    let mut s = format!(
        "## Stellar calibration: {} real ledgers from {} file(s) beside {} synthetic ledgers (seed {seed}, default profile)\n\n\
         Real transaction records are envelope + result/meta XDR with sequence, close time and index; real ledgers are the whole LedgerCloseMeta XDR. zstd level 3 on both.\n\n\
         | figure | real | synthetic |\n|---|---:|---:|\n",
        real.ledgers,
        files.len(),
        synth.ledgers
    );
    let spread = |s: &mut String, name: &str, a: &Option<Spread>, b: &Option<Spread>| {
        let f = |x: &Option<Spread>, g: fn(&Spread) -> f64| {
            x.as_ref()
                .map_or("n/a".to_string(), |v| format!("{:.0}", g(v)))
        };
        for (q, g) in [
            ("mean", (|v: &Spread| v.mean) as fn(&Spread) -> f64),
            ("p10", |v| v.p10),
            ("p50", |v| v.p50),
            ("p90", |v| v.p90),
            ("p99", |v| v.p99),
            ("max", |v| v.max),
        ] {
            let _ = writeln!(s, "| {name} {q} | {} | {} |", f(a, g), f(b, g));
        }
    };
    spread(
        &mut s,
        "transactions per ledger",
        &real.txs_per_ledger,
        &synth.txs_per_ledger,
    );
    spread(
        &mut s,
        "ledger raw bytes",
        &real.ledger_raw_bytes,
        &synth.ledger_raw_bytes,
    );
    let pct = |v: Option<f64>| v.map_or("n/a".to_string(), |x| format!("{x:.1}%"));
    let _ = writeln!(
        s,
        "| ledger size reduction (zstd) | {} | {} |",
        pct(real.ledger_reduction_pct),
        pct(synth.ledger_reduction_pct)
    );
    spread(
        &mut s,
        "tx record raw bytes",
        &real.tx_raw_bytes,
        &synth.tx_raw_bytes,
    );
    spread(
        &mut s,
        "tx record stored bytes",
        &real.tx_stored_bytes,
        &synth.tx_stored_bytes,
    );
    let _ = writeln!(
        s,
        "| tx record size reduction (zstd) | {} | {} |",
        pct(real.tx_reduction_pct),
        pct(synth.tx_reduction_pct)
    );
    s
}

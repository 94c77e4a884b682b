//! `ledgerbench fit TRACE... --out W.toml`: a workload model per store
//! from one pass over a trace (`crates/model`), written as commented TOML,
//! with what it found printed.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use ledgerbench_model::model::{Sizes, Store};
use ledgerbench_model::{Options, Workload};
use ledgerbench_trace::rocks::import::RocksImport;
use ledgerbench_trace::{OpSource, TraceReader};

/// Options of `ledgerbench fit`.
#[derive(clap::Args, Debug)]
pub struct FitArgs {
    /// The trace: one ledgerbench trace (`record`, `import`), or RocksDB
    /// query trace files (db_bench --trace_file, DB::StartTrace) in the
    /// order they were recorded.
    #[arg(required = true, value_name = "TRACE")]
    traces: Vec<PathBuf>,
    /// The workload model to write (TOML); it must not exist.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Keys each store's sample follows at most: past it, a fixed share of
    /// the key space is followed (the estimates say so by their counts).
    #[arg(long, value_name = "N", default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1000..))]
    sample_keys: u64,
    /// How RocksDB trace files are read (the options of `import
    /// rocksdb-trace`).
    #[command(flatten)]
    rocks: crate::import_rocks::RocksArgs,
}

/// Runs `ledgerbench fit`.
pub fn fit(args: FitArgs) -> anyhow::Result<ExitCode> {
    if args.out.exists() {
        bail!(
            "{} exists; fit writes a new file and replaces nothing: give another --out",
            args.out.display()
        );
    }
    let mut src = open(&args)?;
    let started = Instant::now();
    let opts = Options {
        keys: usize::try_from(args.sample_keys).unwrap_or(usize::MAX),
        ..Options::default()
    };
    let survey = ledgerbench_model::survey(&mut *src, &opts, &mut |n| {
        ledgerbench_core::note!(
            "fit: {} M operations read ({:.0} s)",
            n / 1_000_000,
            started.elapsed().as_secs_f64()
        );
    })?;
    if survey.ops == 0 {
        bail!("the trace holds no operation: nothing to fit");
    }
    let names: Vec<String> = args
        .traces
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let w = ledgerbench_model::finish(&survey, &format!("ledgerbench fit {}", names.join(" ")));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    f.write_all(ledgerbench_model::write(&w).as_bytes())
        .with_context(|| format!("writing {}", args.out.display()))?;
    // Through `say`: a closed stdout (`| head`) ends the printing, not the run.
    crate::output::say(summary(&w, survey.ops).trim_end());
    crate::output::say(format_args!("model: {}", args.out.display()));
    Ok(ExitCode::SUCCESS)
}

/// The trace as operations: a ledgerbench trace by its magic bytes, else
/// RocksDB query trace files.
fn open(args: &FitArgs) -> anyhow::Result<Box<dyn OpSource>> {
    let ours: Vec<bool> = args
        .traces
        .iter()
        .map(|p| is_ledgerbench_trace(p))
        .collect::<anyhow::Result<_>>()?;
    match (ours.as_slice(), args.traces.as_slice()) {
        ([true], [one]) => Ok(Box::new(TraceReader::open(one)?)),
        (o, _) if o.iter().any(|&b| b) => bail!(
            "give one ledgerbench trace, or RocksDB trace files only: {} mixes them or names several",
            args.traces
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" ")
        ),
        _ => {
            let opts = args.rocks.options()?;
            let src = RocksImport::open(&args.traces, opts).context(
                "not a ledgerbench trace (it does not begin with KVBTRACE), and not read as a RocksDB query trace",
            )?;
            Ok(Box::new(src))
        }
    }
}

fn is_ledgerbench_trace(p: &std::path::Path) -> anyhow::Result<bool> {
    if p.is_dir() {
        bail!("{} is a directory: give the trace file itself", p.display());
    }
    let mut head = [0u8; 8];
    let mut f = std::fs::File::open(p).with_context(|| format!("opening {}", p.display()))?;
    let n = f
        .read(&mut head)
        .with_context(|| format!("reading {}", p.display()))?;
    Ok(n == 8 && &head == ledgerbench_trace::MAGIC)
}

/// What the model says, a table of stores and a line per access model.
fn summary(w: &Workload, ops: u64) -> String {
    let mut o = format!("{ops} operations read; per store (shares of its operations):\n\n");
    o.push_str("| store | operations | keys | initial keys | insert | overwrite | delete | get found | get missing | get unwritten | scan | key bytes | value bytes | inserts ascending |\n");
    o.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|\n");
    for s in &w.stores {
        let m = &s.mix;
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            s.name,
            s.operations,
            s.keys,
            s.initial_keys,
            pct(m.insert),
            pct(m.overwrite),
            pct(m.delete + m.delete_range),
            pct(m.get_found),
            pct(m.get_missing),
            pct(m.get_unwritten),
            pct(m.scan),
            size(&s.key_size),
            size(&s.value_size),
            pct(s.inserts.ascending)
        );
    }
    o.push('\n');
    for s in &w.stores {
        o.push_str(&access_line(s));
    }
    let c = &w.commits;
    for (what, every) in [
        ("flushes every store", c.flush_every_writes),
        ("compacts every store's key range", c.compact_every_writes),
    ] {
        if let Some(n) = every {
            let _ = writeln!(o, "the application {what} every {n} writes");
        }
    }
    o
}

fn access_line(s: &Store) -> String {
    let a = &s.access;
    let mut o = format!(
        "{}: the hottest 1% of keys take {} of accesses, the hottest 10% {}",
        s.name,
        pct(a.hottest_1),
        pct(a.hottest_10)
    );
    match &a.power {
        Some(p) => {
            let _ = write!(
                o,
                "; power law a {:.4}, b {:.4} (Zipf {:.3}), largest miss {}",
                p.a,
                p.b,
                1.0 - p.b,
                pct(p.max_gap)
            );
        }
        None => o.push_str("; no power law (accesses near uniform, or too few keys seen 10 times)"),
    }
    if let Some(k) = &a.key_ranges {
        let _ = write!(
            o,
            "; {} key ranges of unequal hotness: the curve misses by {:.2e}, {:.1}x less than ranges all alike",
            k.ranges,
            k.rmse,
            k.flat_rmse / k.rmse.max(f64::MIN_POSITIVE)
        );
    }
    o.push('\n');
    o
}

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

fn size(s: &Sizes) -> String {
    match (s.fixed, &s.quantiles, &s.pareto) {
        (Some(f), ..) => f.to_string(),
        (None, Some(q), Some(p)) => format!(
            "p50 {:.0}, p99 {:.0}; Pareto k {:.3}, sigma {:.1} (KS {:.3})",
            q.p50, q.p99, p.shape, p.scale, p.ks
        ),
        (None, Some(q), None) => format!("p50 {:.0}, p99 {:.0}", q.p50, q.p99),
        _ => "n/a".into(),
    }
}

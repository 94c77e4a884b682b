//! `ledgerbench report`, `ledgerbench compare` and `ledgerbench export`: outputs
//! rendered from results files, never re-running anything.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::output::write_new;
use ledgerbench_report::compare::{self, Options};
use ledgerbench_report::doc::{self, Loaded};
use ledgerbench_report::export::{self, Exporter};
use ledgerbench_report::metrics::Class;
use ledgerbench_report::{bencher, render};

/// Options of `ledgerbench report`.
#[derive(clap::Args)]
pub struct ReportArgs {
    /// Results files (`results.json`) or run directories; several machines'
    /// results merge into one report with the machine as a dimension.
    #[arg(required = true, value_name = "RESULTS")]
    results: Vec<PathBuf>,
    /// Output directory for report.md, charts/ and CSV files.
    #[arg(long, value_name = "DIR", default_value = "ledgerbench-report")]
    out: PathBuf,
    /// Memory of the machine the verdict predicts the report's full month
    /// on (the report does not state its machines').
    #[arg(long, value_name = "SIZE", default_value = "64GiB")]
    predict_memory: String,
    /// The verdict's lookup bound: with `ledgerbench run fan-out` results among
    /// the inputs, a `txdata` design whose GET p99 (existing or missing
    /// key) at the month's 234 batches is over this is not recommended.
    #[arg(long, value_name = "MS", default_value_t = 10.0)]
    lookup_bound_ms: f64,
    /// Render into an --out directory that already holds files, replacing
    /// those of the same name (e.g. a published report rendered again).
    #[arg(long)]
    overwrite: bool,
    /// Also write report.html: one self-contained page (charts inline,
    /// tables sortable, filters by store, memory limit and run).
    #[arg(long)]
    html: bool,
    /// Print the verdict's answer (per store: recommended config, runner-up,
    /// margin, growth) as markdown for a README, and write nothing; for
    /// crash results, the durability matrix (engine x level x crash kind).
    #[arg(long, conflicts_with_all = ["out", "overwrite", "html"])]
    summary: bool,
    /// With --summary: only the table of picks and one line per caveat
    /// (the README's front-page block).
    #[arg(long, requires = "summary")]
    brief: bool,
    /// Fit the verdict's cost model over results of different hardware
    /// (CPU, cores, RAM); refused otherwise, as their timings differ.
    #[arg(long)]
    mixed_machines: bool,
    /// A verdict for runs of operations (`run synth`, replays, YCSB) under
    /// a memory limit, predicted to this horizon: the runs' length times
    /// a factor (10x) or a number of batches (500); a batch is a segment.
    #[arg(long, value_name = "HORIZON")]
    horizon: Option<String>,
    /// Fit a backend's runs in the folders given as one config, where their
    /// engine settings are the same (a grid's cells, which differ in memory
    /// limit and scale only); by default each folder is a config of its own.
    #[arg(long)]
    pool_folders: bool,
}

/// Options of `ledgerbench compare`.
#[derive(clap::Args)]
pub struct CompareArgs {
    /// Baseline results (repeat the flag, or pass a run made with --repeat K).
    #[arg(long, required = true, num_args = 1.., value_name = "RESULTS")]
    baseline: Vec<PathBuf>,
    /// Current results.
    #[arg(long, required = true, num_args = 1.., value_name = "RESULTS")]
    current: Vec<PathBuf>,
    /// Threshold PATTERN=PERCENT (`*` wildcard, matched on `run/metric` or
    /// `metric`, last match wins); repeatable. Defaults: counters 2%, timings 10%.
    #[arg(long = "threshold", value_name = "PATTERN=PCT")]
    thresholds: Vec<String>,
    /// Judge only these classes, comma-separated: counter, exact, timing.
    #[arg(long, value_name = "CLASSES")]
    only: Option<String>,
    /// Compare even when workload config, seed, build or engine versions differ.
    #[arg(long)]
    force: bool,
    /// Also write the comparison as JSON here (a new file).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Replace the --json file if it exists.
    #[arg(long)]
    overwrite: bool,
}

/// What `ledgerbench export` writes: every format of the report crate's
/// exporters.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ExportFormat {
    /// Bencher Metric Format JSON (bencher.dev).
    Bencher,
    /// The markdown report with its SVG charts and CSV series (needs --out DIR).
    Markdown,
    /// The markdown report and report.html (needs --out DIR).
    Html,
    /// The CSV series alone (needs --out DIR).
    Csv,
    /// The SVG charts alone (needs --out DIR).
    Svg,
    /// The verdict's answer as markdown, as `report --summary` prints it.
    Verdict,
    /// The tables a run prints at its end.
    Summary,
}

/// Options of `ledgerbench export`.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// Format of the export.
    #[arg(value_name = "FORMAT", value_enum)]
    format: ExportFormat,
    /// Results files or run directories.
    #[arg(required = true, value_name = "RESULTS")]
    results: Vec<PathBuf>,
    /// Write here instead of standard output: a new file for a format of
    /// one document, a directory for the others.
    #[arg(long, value_name = "PATH")]
    out: Option<PathBuf>,
    /// Replace the --out file, or files of the same name in --out DIR.
    #[arg(long)]
    overwrite: bool,
}

fn load_all(paths: &[PathBuf]) -> anyhow::Result<Vec<Loaded>> {
    paths
        .iter()
        .map(|p| doc::load(p).map_err(anyhow::Error::from))
        .collect()
}

/// Runs `ledgerbench report`: the markdown (or HTML) exporter into --out,
/// or the verdict exporter to standard output.
pub fn report(args: ReportArgs) -> anyhow::Result<ExitCode> {
    // An hour is no lookup bound any node would set: past it, the value is
    // a typo (or an overflow), not a choice.
    if !(args.lookup_bound_ms > 0.0 && args.lookup_bound_ms <= 3_600_000.0) {
        anyhow::bail!(
            "--lookup-bound-ms {}: give a number of milliseconds above 0 and at most 3,600,000 (an hour)",
            args.lookup_bound_ms
        );
    }
    let docs = load_all(&args.results)?;
    let verdict = render::VerdictOptions {
        predict_memory: ledgerbench_runner::size::parse(&args.predict_memory)
            .map_err(|e| anyhow::anyhow!("--predict-memory: {e}"))?,
        lookup_bound_us: args.lookup_bound_ms * 1e3,
        mixed_machines: args.mixed_machines,
        pool_folders: args.pool_folders,
        horizon: args
            .horizon
            .as_deref()
            .map(render::Horizon::parse)
            .transpose()
            .map_err(anyhow::Error::msg)?,
    };
    if args.brief {
        let Some(text) = render::summary_brief(&docs, &verdict)? else {
            anyhow::bail!(
                "--brief: no sweep in these results ran under a memory limit, so there is no verdict to summarise \
                 (a month run is evidence for a swept config: give it beside the sweeps; alone, its report has `The month measured`)"
            );
        };
        crate::output::say(text.trim_end());
        return Ok(ExitCode::SUCCESS);
    }
    if args.summary {
        let rendered = export::Verdict(verdict)
            .render(&docs)
            .map_err(|e| anyhow::anyhow!("--summary: {e}"))?;
        for d in &rendered {
            crate::output::say(d.text.trim_end());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let rendered = if args.html {
        export::Html(verdict).render(&docs)?
    } else {
        export::Markdown(verdict).render(&docs)?
    };
    let written = export::write(&args.out, &rendered, args.overwrite)?;
    ledgerbench_core::note!(
        "report: {} ({} files)",
        args.out
            .join(if args.html {
                "report.html"
            } else {
                "report.md"
            })
            .display(),
        written.files.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// Runs `ledgerbench compare`; exit 1 when a metric regressed, 2 on bad input.
pub fn compare(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let mut opts = Options {
        force: args.force,
        ..Options::default()
    };
    for t in &args.thresholds {
        opts.thresholds.push(compare::parse_threshold(t)?);
    }
    if let Some(only) = &args.only {
        // An empty list would judge every class: the opposite of what
        // `--only` asks, so it is refused rather than read as "all".
        if only.split(',').all(|c| c.trim().is_empty()) {
            anyhow::bail!("--only is empty: give one or more of counter, exact, timing");
        }
        for c in only.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            opts.only.push(match c {
                "counter" | "counters" => Class::Counter,
                "exact" => Class::Exact,
                "timing" | "timings" => Class::Timing,
                other => {
                    anyhow::bail!("--only `{other}`: accepted classes are counter, exact, timing")
                }
            });
        }
    }
    let (base, cur) = (load_all(&args.baseline)?, load_all(&args.current)?);
    let rows = compare::compare(&base, &cur, &opts)?;
    let (_, mut machine) = compare::differences(&base, &cur);
    // The same files on both sides agree by construction: say so, or a
    // clean table reads as evidence.
    let files = |docs: &[Loaded]| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = docs
            .iter()
            .map(|d| std::fs::canonicalize(&d.path).unwrap_or_else(|_| d.path.clone()))
            .collect();
        v.sort();
        v
    };
    if files(&base) == files(&cur) {
        let note = "the baseline and the current are the same results files: every figure is the same by construction, so this compares nothing";
        ledgerbench_core::note!("ledgerbench compare: {note}");
        machine.insert(0, format!("**Note:** {note}."));
    }
    // The file first: what the user asked to keep is kept even when the
    // printed table goes to a reader that stops early.
    if let Some(path) = &args.json {
        write_new(
            path,
            &serde_json::to_vec_pretty(&rows)?,
            args.overwrite,
            "--json",
        )?;
    }
    crate::output::say(compare::markdown(&rows, &machine));
    Ok(if compare::failed(&rows) {
        ledgerbench_core::note!("ledgerbench compare: regression past threshold (exit 1)");
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Runs `ledgerbench export`: one exporter; a single document goes to
/// standard output or the --out file, several into the --out directory.
pub fn export(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let docs = load_all(&args.results)?;
    let name = format!("{:?}", args.format).to_ascii_lowercase();
    let exporter = export::by_name(&name, render::VerdictOptions::default())
        .ok_or_else(|| anyhow::anyhow!("no exporter named `{name}`"))?;
    if matches!(args.format, ExportFormat::Bencher) {
        for why in bencher::empty_runs(&docs) {
            ledgerbench_core::note!("warning: nothing exported for {why}");
        }
    }
    let rendered = exporter.render(&docs).map_err(|e| {
        anyhow::anyhow!(
            "{e} (results: {})",
            args.results
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    match (&args.out, rendered.as_slice()) {
        (None, [one]) => crate::output::say(one.text.trim_end()),
        (Some(p), [one]) => write_new(p, one.text.as_bytes(), args.overwrite, "--out")?,
        (None, _) => anyhow::bail!(
            "`export {}` makes {} files: give --out DIR",
            exporter.name(),
            rendered.len()
        ),
        (Some(dir), _) => {
            let written = export::write(dir, &rendered, args.overwrite)?;
            ledgerbench_core::note!("export: {} files in {}", written.files.len(), dir.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

//! `ledgerbench ab`: baseline and current run alternately (A B B A ...) on
//! this machine, each timing judged against the noise of the same code
//! (`ledgerbench_report::ab` has the statistics and why,
//! `ledgerbench_runner::ab` runs the rounds); here its flags and printing.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use ledgerbench_report::ab::{self, Judgement, NoiseTarget, Side};
use ledgerbench_runner::ab::{Rounds, Samples, check_rounds, collect, max_rounds, run_rounds};
use ledgerbench_runner::output;

/// Options of `ledgerbench ab`.
#[derive(clap::Args)]
pub struct AbArgs {
    /// Baseline: a ledgerbench binary to run, or results (run directories
    /// or results files, one per run) to read.
    #[arg(long, required_unless_present = "rejudge", num_args = 1.., value_name = "BINARY|RESULTS")]
    baseline: Vec<PathBuf>,
    /// Current: a binary, or results, as --baseline.
    #[arg(long, required_unless_present = "rejudge", num_args = 1.., value_name = "BINARY|RESULTS")]
    current: Vec<PathBuf>,
    /// Judge again the samples an earlier `ab` kept in its ab.json (e.g.
    /// at another --alpha), running nothing.
    #[arg(long, value_name = "AB_JSON", conflicts_with_all = ["baseline", "current", "metrics", "noise_targets", "max_rounds", "out", "rounds"])]
    rejudge: Option<PathBuf>,
    /// Rounds: each runs baseline and current once, the order alternating
    /// (A B, B A, A B, ...).
    /// 20 by default: on the 2-core VM the gate was measured on, runs of
    /// the default workload vary by 3.5% on a quiet hour, too much for 12
    /// rounds to catch 5% reliably, and by 7% on a noisy one, too much for
    /// 20 (results/ab-2026-11-25; --noise-target adds rounds then).
    #[arg(long, default_value_t = 20)]
    rounds: usize,
    /// After --rounds, keep adding rounds (two at a time) while this
    /// metric's noise (the half-width of the interval its pairs would give,
    /// from how much each round's mean moves) is over PCT, up to
    /// --max-rounds; `*` wildcard as --metric; repeatable. A noisy session
    /// then runs longer instead of letting a change pass as "no change".
    #[arg(long = "noise-target", value_name = "METRIC=PCT")]
    noise_targets: Vec<NoiseTarget>,
    /// The most rounds --noise-target may reach (default: three times
    /// --rounds; rounds are added two at a time, so A B and B A stay even).
    #[arg(long, value_name = "N", requires = "noise_targets")]
    max_rounds: Option<usize>,
    /// Significance level of the signed-rank test; also sets the effect's
    /// and the noise band's intervals (1 - alpha). 0.01: at 0.05 the same
    /// code was called changed in 3 of 20 trials here, at 0.01 in none,
    /// in- and out of sample (results/ab-2026-11-25).
    #[arg(long, default_value_t = 0.01)]
    alpha: f64,
    /// A timing to judge (`*` wildcard, matched on `metric` or
    /// `run/metric`); repeatable. Default: summary.batch_secs and the
    /// streaming lookups' p99 (one-step and two-step).
    #[arg(long = "metric", value_name = "NAME")]
    metrics: Vec<String>,
    /// Directory for the runs, their logs and ab.json (new, or empty);
    /// default ledgerbench-ab.
    #[arg(long, value_name = "DIR", default_value = "ledgerbench-ab")]
    out: PathBuf,
    /// Also write the judgements as JSON here (a new file).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Each run's command (binaries only), after `--`: default `run stellar
    /// --preset smoke --ledgers 120 --batch-ledgers 20 --streaming-ledgers 10
    /// --close-interval-ms 100 --pregenerate --backends rocksdb-leveled
    /// --device none`.
    #[arg(last = true, value_name = "RUN COMMAND")]
    command: Vec<String>,
}

/// A side: a binary to run, or one results path per run.
enum Source {
    Binary(PathBuf),
    Results(Vec<PathBuf>),
}

fn source(flag: &str, paths: &[PathBuf]) -> anyhow::Result<Source> {
    use std::os::unix::fs::PermissionsExt;
    if let [one] = paths
        && one.is_file()
        && one.extension().is_none_or(|e| e != "json")
    {
        let mode = std::fs::metadata(one)
            .with_context(|| format!("{flag} {}", one.display()))?
            .permissions()
            .mode();
        if mode & 0o111 == 0 {
            bail!(
                "{flag} {}: a file that is neither executable nor results.json",
                one.display()
            );
        }
        return Ok(Source::Binary(one.clone()));
    }
    for p in paths {
        if !p.exists() {
            bail!("{flag} {}: no such binary or results", p.display());
        }
    }
    Ok(Source::Results(paths.to_vec()))
}

/// `ab --rejudge FILE`: the samples an earlier `ab` kept, judged again at
/// `--alpha`, running nothing.
fn rejudge(args: &AbArgs, file: &std::path::Path) -> anyhow::Result<ExitCode> {
    let j: serde_json::Value = serde_json::from_slice(
        &std::fs::read(file).with_context(|| format!("--rejudge {}", file.display()))?,
    )?;
    let samples: Samples = serde_json::from_value(j["samples"].clone()).with_context(|| {
        format!(
            "--rejudge {}: no samples of `ledgerbench ab`",
            file.display()
        )
    })?;
    // Older ab.json files have no targets.
    let targets: Vec<NoiseTarget> = match j.get("noise_targets") {
        Some(t) => serde_json::from_value(t.clone())
            .with_context(|| format!("--rejudge {}: noise_targets unreadable", file.display()))?,
        None => Vec::new(),
    };
    let rows = samples.judge(args.alpha);
    let over = ab::over_target(&samples.series(), &targets).map_err(anyhow::Error::msg)?;
    say(&rows, samples.runs.len() / 2, args.alpha, &over);
    write_json_out(args, &rows)?;
    Ok(exit_of(&rows))
}

/// Runs `ledgerbench ab`; exit 1 when a timing got worse beyond noise.
pub fn ab(args: AbArgs) -> anyhow::Result<ExitCode> {
    if !(args.alpha > 0.0 && args.alpha < 0.5) {
        bail!(
            "--alpha {}: give a level above 0 and below 0.5, e.g. 0.01",
            args.alpha
        );
    }
    if let Some(file) = &args.rejudge {
        return rejudge(&args, file);
    }
    let (a, b) = (
        source("--baseline", &args.baseline)?,
        source("--current", &args.current)?,
    );
    let ran = matches!((&a, &b), (Source::Binary(_), Source::Binary(_)));
    if !ran && !args.noise_targets.is_empty() {
        bail!("--noise-target runs more rounds: give --baseline and --current as binaries");
    }
    let rounds = Rounds {
        out: args.out.clone(),
        command: args.command.clone(),
        rounds: args.rounds,
        max_rounds: if args.noise_targets.is_empty() {
            args.rounds
        } else {
            max_rounds(args.rounds, args.max_rounds)
        },
        alpha: args.alpha,
        noise_targets: args.noise_targets.clone(),
        metrics: args.metrics.clone(),
    };
    let runs: Vec<(usize, Side, PathBuf)> = match (a, b) {
        (Source::Binary(a), Source::Binary(b)) => run_rounds(&rounds, &a, &b)?,
        (Source::Results(a), Source::Results(b)) => {
            if a.len() != b.len() {
                bail!(
                    "--baseline has {} results and --current {}: give one per run, as many of each",
                    a.len(),
                    b.len()
                );
            }
            check_rounds(a.len(), args.alpha)?;
            // Given in the order they ran; paired by position.
            ab::order(a.len())
                .into_iter()
                .map(|(r, s)| (r, s, if s == Side::A { &a[r] } else { &b[r] }.clone()))
                .collect()
        }
        _ => bail!("give --baseline and --current both as binaries, or both as results"),
    };
    let samples = collect(&args.metrics, &runs)?;
    let rows = samples.judge(args.alpha);
    let over =
        ab::over_target(&samples.series(), &args.noise_targets).map_err(anyhow::Error::msg)?;
    say(&rows, runs.len() / 2, args.alpha, &over);
    // Only runs this command made get their samples kept beside them.
    if ran {
        ledgerbench_runner::output::write_json(
            &args.out.join("ab.json"),
            &serde_json::json!({
                "alpha": args.alpha,
                "rounds": runs.len() / 2,
                "first_rounds": args.rounds,
                "noise_targets": args.noise_targets,
                "max_rounds": rounds.max_rounds,
                "over_target": over,
                "commit": ledgerbench_driver::env::GIT_COMMIT,
                "baseline": args.baseline,
                "current": args.current,
                "command": rounds.command().join(" "),
                "samples": samples,
                "judgements": rows,
            }),
        )?;
    }
    write_json_out(&args, &rows)?;
    Ok(exit_of(&rows))
}

/// `--json FILE`: the judgements, in a new file.
fn write_json_out(args: &AbArgs, rows: &[Judgement]) -> anyhow::Result<()> {
    if let Some(path) = &args.json {
        crate::output::write_new(path, &serde_json::to_vec_pretty(rows)?, false, "--json")?;
    }
    Ok(())
}

/// Exit 1 when a timing got worse beyond noise.
fn exit_of(rows: &[Judgement]) -> ExitCode {
    if rows.iter().any(Judgement::regressed) {
        ledgerbench_core::note!("ledgerbench ab: current is worse beyond the noise band (exit 1)");
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Prints the judgements, and the metrics whose noise stayed over its
/// target: there a change of that size can pass unseen.
fn say(rows: &[Judgement], rounds: usize, alpha: f64, over: &[String]) {
    let blind = if over.is_empty() {
        String::new()
    } else {
        format!(
            "\n**Noise over its target** after {rounds} rounds: {}. A change of that size can pass as \"no change\"; run again on a quieter machine or with a higher --max-rounds.\n",
            over.join("; ")
        )
    };
    output::say(format_args!(
        "## ledgerbench ab\n\n{rounds} rounds, alternating A B B A; Wilcoxon signed-rank test at alpha {alpha}, Hodges-Lehmann effect with its interval, noise band from same-code neighbours at the same level.\n\n{}{blind}",
        ab::markdown(rows, alpha)
    ));
}

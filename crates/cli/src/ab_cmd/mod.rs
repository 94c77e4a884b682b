//! `ledgerbench ab`: baseline and current run alternately (A B B A ...) on
//! this machine, each timing judged against the noise of the same code
//! (`ledgerbench_report::ab` has the statistics and why).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};
use ledgerbench_report::ab::{self, Judgement, NoiseTarget, Side};
use ledgerbench_runner::output;
use ledgerbench_runner::stellar_cmd::SPOOL_CACHE_ENV;

mod samples;
use samples::{Samples, collect};

/// The timings judged when no --metric is given: a batch's time (every
/// store's write, flush and compaction) and the streaming lookups' p99.
pub const DEFAULT_METRICS: &[&str] = &[
    "summary.batch_secs",
    "streaming.one_step.p99_us",
    "streaming.two_step.p99_us",
];

/// The workload of each run when none is given after `--`: a small
/// Stellar run (120 ledgers in 6 batches, then 10 streamed with lookups),
/// about three seconds. The ledgers are generated before the timed
/// ingestion (`--pregenerate`): otherwise the engine waits for the
/// generator and a slower engine hides in that wait.
pub const DEFAULT_COMMAND: &[&str] = &[
    "run",
    "stellar",
    "--preset",
    "smoke",
    "--ledgers",
    "120",
    "--batch-ledgers",
    "20",
    "--streaming-ledgers",
    "10",
    "--close-interval-ms",
    "100",
    "--pregenerate",
    "--backends",
    "rocksdb-leveled",
    "--device",
    "none",
];

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
    let runs: Vec<(usize, Side, PathBuf)> = match (a, b) {
        (Source::Binary(a), Source::Binary(b)) => run_rounds(&args, &a, &b)?,
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
    let samples = collect(&args, &runs)?;
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
                "max_rounds": if args.noise_targets.is_empty() { args.rounds } else { max_rounds(&args) },
                "over_target": over,
                "commit": ledgerbench_driver::env::GIT_COMMIT,
                "baseline": args.baseline,
                "current": args.current,
                "command": if args.command.is_empty() { DEFAULT_COMMAND.join(" ") } else { args.command.join(" ") },
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

/// The most rounds a noise target may reach: --rounds plus an even
/// number, so the added rounds keep A B and B A even.
fn max_rounds(args: &AbArgs) -> usize {
    let most = args.max_rounds.unwrap_or(args.rounds * 3);
    most - most.saturating_sub(args.rounds) % 2
}

/// Refuses rounds too few to reach `alpha` with the exact test.
fn check_rounds(rounds: usize, alpha: f64) -> anyhow::Result<()> {
    let need = (1..64).find(|n| ab::smallest_p(*n) < alpha).unwrap_or(64);
    if rounds < need.max(3) {
        bail!(
            "{rounds} rounds cannot show a change at alpha {alpha} (the smallest p-value of {rounds} pairs is {:.3}); give --rounds {} or more",
            ab::smallest_p(rounds),
            need.max(3)
        );
    }
    Ok(())
}

/// Runs both binaries in A B B A order, each into its own directory under
/// --out; returns each run's round, side and results directory.
fn run_rounds(args: &AbArgs, a: &Path, b: &Path) -> anyhow::Result<Vec<(usize, Side, PathBuf)>> {
    check_rounds(args.rounds, args.alpha)?;
    let command: Vec<String> = if args.command.is_empty() {
        DEFAULT_COMMAND.iter().map(|s| s.to_string()).collect()
    } else {
        args.command.clone()
    };
    if command
        .iter()
        .any(|c| c == "--out" || c.starts_with("--out="))
    {
        bail!("drop --out from the run command: ab gives each run its own directory under --out");
    }
    if ledgerbench_core::fsutil::holds_files(&args.out)
        .with_context(|| format!("--out {}", args.out.display()))?
    {
        bail!(
            "--out {} holds files; give a new or empty directory",
            args.out.display()
        );
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let most = max_rounds(args);
    if most < args.rounds {
        bail!(
            "--max-rounds {most} is below --rounds {}: give at least as many",
            args.rounds
        );
    }
    let _caches = RemoveOnDrop(
        [Side::A, Side::B]
            .map(|s| args.out.join(spool_cache(s)))
            .to_vec(),
    );
    let mut planned = args.rounds;
    let mut done = Vec::new();
    loop {
        let order = ab::order(planned);
        for (i, (round, side)) in order.iter().enumerate().skip(done.len()) {
            done.push(run_one(
                args,
                &command,
                (a, b),
                i,
                (*round, *side),
                planned,
            )?);
            if i == 0 {
                check_targets(args, &done)?;
            }
        }
        if args.noise_targets.is_empty() {
            return Ok(done);
        }
        // Whether to go on looks at the rounds' means, never at which run
        // was B (ab::noise_pct says why), so it cannot steer the verdict.
        let over = ab::over_target(&collect(args, &done)?.series(), &args.noise_targets)
            .map_err(anyhow::Error::msg)?;
        if over.is_empty() || planned >= most {
            return Ok(done);
        }
        planned = (planned + 2).min(most);
        ledgerbench_core::note!(
            "ab: noise over its target ({}): on to {planned} rounds",
            over.join("; ")
        );
    }
}

/// Directories ab made, removed however it ends.
struct RemoveOnDrop(Vec<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        for d in &self.0 {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Refuses, after the first run rather than after --rounds, a noise
/// target that names none of the judged timings.
fn check_targets(args: &AbArgs, done: &[(usize, Side, PathBuf)]) -> anyhow::Result<()> {
    ab::over_target(&collect(args, done)?.series(), &args.noise_targets)
        .map(drop)
        .map_err(anyhow::Error::msg)
}

/// The directory under --out where `side`'s runs keep their pregenerated
/// ledgers; removed when the rounds are done.
fn spool_cache(side: Side) -> &'static str {
    match side {
        Side::A => "spool-baseline",
        Side::B => "spool-current",
    }
}

/// Runs run `i` of the order (`round`, `side`) into its own directory.
fn run_one(
    args: &AbArgs,
    command: &[String],
    (a, b): (&Path, &Path),
    i: usize,
    (round, side): (usize, Side),
    planned: usize,
) -> anyhow::Result<(usize, Side, PathBuf)> {
    let (bin, name) = match side {
        Side::A => (a, "baseline"),
        Side::B => (b, "current"),
    };
    let dir = args.out.join(format!("{i:03}-{name}"));
    let log = args.out.join(format!("{i:03}-{name}.log"));
    let t = Instant::now();
    // One file for both streams: two opens of it would each write from
    // offset 0 over the other's lines.
    let out = std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
    let status = Command::new(bin)
        .args(command)
        .arg("--out")
        .arg(&dir)
        // Each side generates its ledgers once, not every round (a binary
        // that predates the cache generates them each time, untimed too).
        .env(SPOOL_CACHE_ENV, args.out.join(spool_cache(side)))
        .stdin(Stdio::null())
        .stderr(out.try_clone()?)
        .stdout(out)
        .status()
        .with_context(|| format!("starting {}", bin.display()))?;
    if !status.success() {
        bail!(
            "the {name} run of round {} failed ({status}); its output is in {}",
            round + 1,
            log.display()
        );
    }
    ledgerbench_core::note!(
        "ab: round {}/{planned}: {name} in {:.1} s",
        round + 1,
        t.elapsed().as_secs_f64()
    );
    Ok((round, side, dir))
}

//! `ledgerbench ab`'s runs: baseline and current started alternately (A B
//! B A ...) on this machine, each into its own directory, more rounds
//! while a noise target is missed; and their judged timings
//! ([`samples`]). The statistics are `ledgerbench_report::ab`'s; the
//! command's flags and printing are the CLI's.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};
use ledgerbench_report::ab::{self, NoiseTarget, Side};

use crate::stellar_cmd::SPOOL_CACHE_ENV;

pub mod samples;
pub use samples::{Samples, collect};

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

/// What rounds to run, and how long to go on.
#[derive(Debug, Clone)]
pub struct Rounds {
    /// Where each run, its log and the spool caches go.
    pub out: PathBuf,
    /// Each run's command, without `--out` (empty: [`DEFAULT_COMMAND`]).
    pub command: Vec<String>,
    /// Rounds first.
    pub rounds: usize,
    /// The most rounds the noise targets may reach.
    pub max_rounds: usize,
    /// The test's level.
    pub alpha: f64,
    /// Metrics whose noise must come under a share, else more rounds.
    pub noise_targets: Vec<NoiseTarget>,
    /// The timings judged (`--metric`).
    pub metrics: Vec<String>,
}

impl Rounds {
    /// The command each run gets.
    pub fn command(&self) -> Vec<String> {
        if self.command.is_empty() {
            DEFAULT_COMMAND.iter().map(|s| s.to_string()).collect()
        } else {
            self.command.clone()
        }
    }
}

/// The most rounds a noise target may reach: `rounds` plus an even
/// number (default: three times `rounds`), so the added rounds keep A B
/// and B A even.
pub fn max_rounds(rounds: usize, asked: Option<usize>) -> usize {
    let most = asked.unwrap_or(rounds * 3);
    most - most.saturating_sub(rounds) % 2
}

/// Refuses rounds too few to reach `alpha` with the exact test.
pub fn check_rounds(rounds: usize, alpha: f64) -> anyhow::Result<()> {
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
/// `r.out`; returns each run's round, side and results directory.
pub fn run_rounds(r: &Rounds, a: &Path, b: &Path) -> anyhow::Result<Vec<(usize, Side, PathBuf)>> {
    check_rounds(r.rounds, r.alpha)?;
    let command = r.command();
    if command
        .iter()
        .any(|c| c == "--out" || c.starts_with("--out="))
    {
        bail!("drop --out from the run command: ab gives each run its own directory under --out");
    }
    if ledgerbench_core::fsutil::holds_files(&r.out)
        .with_context(|| format!("--out {}", r.out.display()))?
    {
        bail!(
            "--out {} holds files; give a new or empty directory",
            r.out.display()
        );
    }
    if r.max_rounds < r.rounds {
        bail!(
            "--max-rounds {} is below --rounds {}: give at least as many",
            r.max_rounds,
            r.rounds
        );
    }
    std::fs::create_dir_all(&r.out).with_context(|| format!("creating {}", r.out.display()))?;
    let _caches = RemoveOnDrop(
        [Side::A, Side::B]
            .map(|s| r.out.join(spool_cache(s)))
            .to_vec(),
    );
    let mut planned = r.rounds;
    let mut done = Vec::new();
    loop {
        let order = ab::order(planned);
        for (i, (round, side)) in order.iter().enumerate().skip(done.len()) {
            done.push(run_one(r, &command, (a, b), i, (*round, *side), planned)?);
            if i == 0 {
                check_targets(r, &done)?;
            }
        }
        if r.noise_targets.is_empty() {
            return Ok(done);
        }
        // Whether to go on looks at the rounds' means, never at which run
        // was B (ab::noise_pct says why), so it cannot steer the verdict.
        let over = ab::over_target(&collect(&r.metrics, &done)?.series(), &r.noise_targets)
            .map_err(anyhow::Error::msg)?;
        if over.is_empty() || planned >= r.max_rounds {
            return Ok(done);
        }
        planned = (planned + 2).min(r.max_rounds);
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

/// Refuses, after the first run rather than after all rounds, a noise
/// target that names none of the judged timings.
fn check_targets(r: &Rounds, done: &[(usize, Side, PathBuf)]) -> anyhow::Result<()> {
    ab::over_target(&collect(&r.metrics, done)?.series(), &r.noise_targets)
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
    r: &Rounds,
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
    let dir = r.out.join(format!("{i:03}-{name}"));
    let log = r.out.join(format!("{i:03}-{name}.log"));
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
        .env(SPOOL_CACHE_ENV, r.out.join(spool_cache(side)))
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

//! `ledgerbench run soak WORKLOAD`: a workload that can run indefinitely,
//! run for `--duration` on each backend, a sample of every meter each
//! `--interval` (a segment, with its own latencies), then judged metric by
//! metric: flat, drifting or stepped (`crates/report/src/soak.rs`).

use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;
use ledgerbench_driver::ops::Window;
use ledgerbench_report::soak::parse_time;
use ledgerbench_results::workload::SoakConfig;

use crate::replay_cmd::{GenArgs, generated};

/// The workloads a soak can run: each runs as long as it is let.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum SoakWorkload {
    /// Blobs with a time to live (LittDB's shape).
    Blobs,
    /// The Solana blockstore with retention.
    Solana,
    /// YCSB's run phase after its load.
    Ycsb,
    /// Account state in blocks.
    Accounts,
}

impl SoakWorkload {
    fn name(self) -> &'static str {
        match self {
            Self::Blobs => "blobs",
            Self::Solana => "solana",
            Self::Ycsb => "ycsb",
            Self::Accounts => "accounts",
        }
    }

    /// The setting that bounds the stream, set past any soak unless given:
    /// the soak's `--duration` ends the run instead.
    fn length_key(self) -> &'static str {
        match self {
            Self::Blobs => "batches",
            Self::Solana => "slots",
            Self::Ycsb | Self::Accounts => "operations",
        }
    }
}

/// Options of `ledgerbench run soak`.
#[derive(clap::Args)]
pub struct Args {
    /// The workload.
    #[arg(value_enum)]
    workload: SoakWorkload,
    /// How long each backend runs: 90s, 30m, 2h (the run ends at the first
    /// batch boundary after it).
    #[arg(long, default_value = "2h", value_name = "TIME")]
    duration: String,
    /// One sample of every meter this often (at the first batch boundary
    /// after it).
    #[arg(long, default_value = "10s", value_name = "TIME")]
    interval: String,
    /// Set aside before judging: `auto` (the workload's ramp: the first
    /// expiry, the start of retention, the load), a time (30m) or a share (25%).
    #[arg(long, default_value = "auto", value_name = "WHEN")]
    warmup: String,
    /// A change smaller than this share of a metric's level is not called
    /// a drift or a step: 10% or 0.1.
    #[arg(long, default_value = "10%", value_name = "SHARE")]
    drift_threshold: String,
    #[command(flatten)]
    run: GenArgs,
}

impl Args {
    /// Where the run writes.
    pub fn output(&self) -> &crate::flags::OutputArgs {
        self.run.output()
    }
}

/// A soak's settings, checked.
pub struct Soak {
    /// As the results record them.
    pub config: SoakConfig,
    /// As the driver takes them.
    pub window: Window,
    /// The setting that bounds the workload's stream.
    pub length_key: &'static str,
}

impl Soak {
    /// Fits a workload's settings and threads to the soak: one client
    /// thread, and a stream that does not end before `--duration` does.
    pub fn prepare(&self, params: &mut serde_json::Value, threads: &[u64]) -> anyhow::Result<()> {
        if threads != [1] {
            bail!(
                "--threads {threads:?}: a soak runs one client thread for now (every thread would have to agree on where an interval ends)"
            );
        }
        if let Some(map) = params.as_object_mut() {
            map.entry(self.length_key)
                .or_insert(serde_json::json!(1_000_000_000_000u64));
        }
        Ok(())
    }
}

/// Checks the settings and runs the soak.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let time = |flag: &str, v: &str| {
        parse_time(v).ok_or_else(|| {
            anyhow::anyhow!("{flag} {v}: give a time above zero such as 90s, 30m or 2h")
        })
    };
    let duration = time("--duration", &args.duration)?;
    let interval = time("--interval", &args.interval)?;
    if interval > duration {
        bail!(
            "--interval {} is longer than --duration {}: a soak needs many intervals (give at least 20 in the run)",
            args.interval,
            args.duration
        );
    }
    let t = args.drift_threshold.trim();
    let drift_threshold = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().ok().map(|v| v / 100.0),
        None => t.parse::<f64>().ok(),
    }
    .filter(|v| v.is_finite() && *v > 0.0 && *v < 10.0)
    .ok_or_else(|| anyhow::anyhow!("--drift-threshold {t}: give a share such as 10% or 0.1"))?;
    let w = args.warmup.trim();
    ledgerbench_report::soak::check_warmup(w)?;
    if parse_time(w).is_some_and(|secs| secs >= duration) {
        bail!(
            "--warmup {w} is not shorter than --duration {}: nothing would be left to judge (give a shorter warm-up, a share such as 25%, or `auto`)",
            args.duration
        );
    }
    let soak = Soak {
        config: SoakConfig {
            duration_secs: duration,
            interval_secs: interval,
            warmup: w.to_string(),
            drift_threshold,
        },
        window: Window {
            interval: Duration::from_secs_f64(interval),
            duration: Some(Duration::from_secs_f64(duration)),
        },
        length_key: args.workload.length_key(),
    };
    generated(args.workload.name(), args.run, Some(&soak), None)
}

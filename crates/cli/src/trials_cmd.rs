//! `ledgerbench drift-trials`: the drift verdict's known-answer trials,
//! printed as the table `results/drift-trials-2026-11-28/` publishes and
//! `scripts/republish.sh` derives again.

use std::process::ExitCode;

use ledgerbench_stats::drift;
use ledgerbench_stats::trials::{Setup, table};

/// Options of `ledgerbench drift-trials`.
#[derive(clap::Args)]
pub struct Args {
    /// Series per cell (the published trials: 20; more narrow the rates).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    series: u64,
    /// The first series' seed (the published trials: 20261127).
    #[arg(long)]
    seed: Option<u64>,
    /// The trend test's correction for autocorrelation: `ar1` (the
    /// verdict's) or `significant-lags` (pymannkendall's Hamed-Rao, which
    /// the verdict set aside: it calls flat persistent series drifting).
    #[arg(long, value_enum, default_value_t = Correction::Ar1)]
    correction: Correction,
}

/// `--correction`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Correction {
    Ar1,
    SignificantLags,
}

/// Runs the trials and prints their settings and table.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut setup = Setup::published();
    setup.count = args.series as usize;
    if let Some(s) = args.seed {
        setup.seed = s;
    }
    setup.options.correction = match args.correction {
        Correction::Ar1 => drift::Correction::Ar1,
        Correction::SignificantLags => drift::Correction::SignificantLags,
    };
    let cells = setup.run();
    let o = &setup.options;
    let mut text = format!(
        "Drift verdict trials: {} series a cell of {} samples (a 2-hour soak at 10 s), seed {} (series k of a cell: seed + k, the cell's place mixed in).\n",
        setup.count, setup.n, setup.seed
    );
    text.push_str(&format!(
        "Verdict settings: trend test corrected by {}, alpha {}, threshold {:.0}%, slopes projected over {} samples (14 days at 10 s), segment penalty {} ln(n) long-run variances, segments of at least {} samples.\n\n",
        match o.correction {
            drift::Correction::Ar1 => "Hamed-Rao from an AR(1) model of the ranks",
            drift::Correction::SignificantLags => "Hamed-Rao over the significant lags",
        },
        o.alpha,
        o.threshold * 100.0,
        o.horizon,
        o.penalty_factor,
        o.min_segment
    ));
    text.push_str(&table(&cells));
    let missed = cells.iter().filter(|c| !c.passes()).count();
    text.push_str(&format!(
        "\n{} of {} cells meet their bar.",
        cells.len() - missed,
        cells.len()
    ));
    // Through `say`: a closed stdout (`| head`) ends the printing quietly.
    ledgerbench_runner::output::say(text);
    Ok(ExitCode::SUCCESS)
}

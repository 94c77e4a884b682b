//! `ledgerbench plan` and `ledgerbench run --job`: the command line side of
//! `ledgerbench_runner::plan_cmd`.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use ledgerbench_runner::{output, plan_cmd, stellar_cmd};

use crate::{Cli, Command, Workload};

/// Options of `ledgerbench plan`.
#[derive(clap::Args)]
pub struct PlanArgs {
    /// Where the plan goes: `matrix.json` and `jobs/NNN.json` (a new or
    /// empty directory).
    #[arg(long, value_name = "DIR", default_value = "ledgerbench-plan")]
    dir: PathBuf,
    /// The sweep, as you would run it in one process: `run stellar ...`.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "RUN COMMAND"
    )]
    command: Vec<String>,
}

/// Runs `ledgerbench plan`.
pub fn plan(args: PlanArgs) -> anyhow::Result<ExitCode> {
    let cli =
        Cli::try_parse_from(std::iter::once("ledgerbench".to_string()).chain(args.command.clone()))
            .map_err(|e| {
                let text = e.render().to_string();
                anyhow::anyhow!(
                    "the planned command: {}",
                    text.trim_start_matches("error: ").trim_end()
                )
            })?;
    let planned = match &cli.command {
        Command::Run {
            workload: Some(Workload::Stellar(a)),
            ..
        } => stellar_cmd::planned(a)?,
        Command::Run { job: Some(_), .. } => anyhow::bail!("a job cannot be planned again"),
        _ => anyhow::bail!(
            "ledgerbench plan splits `run stellar` sweeps (backends x --sweep-limits x --repeat); other workloads: one job per backend with `--backends NAME`"
        ),
    };
    let n = plan_cmd::write(&args.dir, &args.command, &planned)?;
    let d = args.dir.display();
    output::say(format_args!(
        "plan: {n} jobs in {d}/jobs, listed in {d}/matrix.json\n\
         each job {}\n\
         run each (in any order, on any machine of one kind): ledgerbench run --job {d}/jobs/NNN.json --out-dir cells\n\
         then merge: ledgerbench report cells/* --out report",
        planned.expected
    ));
    Ok(ExitCode::SUCCESS)
}

/// Runs `ledgerbench run --job FILE`: this binary again, in this process
/// (so a scheduler's signals and exit code are the run's), with the job's
/// command limited to its cell.
pub fn run_job(file: &Path, out_dir: &Path) -> anyhow::Result<ExitCode> {
    let argv = plan_cmd::job_command(file, out_dir)?;
    let exe = std::env::current_exe()?;
    let e = std::process::Command::new(&exe).args(&argv).exec();
    Err(anyhow::anyhow!("starting {}: {e}", exe.display()))
}

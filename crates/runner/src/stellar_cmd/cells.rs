//! A Stellar sweep as a scheduler's cells (`ledgerbench plan run stellar`)
//! and the one cell a job runs (`ledgerbench run --job`).

use anyhow::bail;
use ledgerbench_driver::results::Cell;

use super::Args;
use super::plan::{Plan, plan};
use crate::plan_cmd::{Job, Planned, PlannedCell};

/// The sweep `args` makes, cell by cell: every planned run at every repeat,
/// in the single-process order (repeats interleaved).
pub fn planned(args: &Args) -> anyhow::Result<Planned> {
    if args.output.out.is_some() || args.output.force {
        bail!(
            "drop --out and --force from the planned command: each job writes its own directory, under `ledgerbench run --job FILE --out-dir DIR`"
        );
    }
    if args.cell.is_some() {
        bail!("--cell is how `run --job` runs one cell; a plan cannot be made of one");
    }
    if args.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    let p = plan(args)?;
    let cells = (0..args.repeat)
        .flat_map(|repeat| {
            p.runs.iter().map(move |r| PlannedCell {
                label: r.label.clone(),
                design: r.design.clone(),
                backends: r.specs.iter().map(|s| s.name.clone()).collect(),
                memory_limit_bytes: r.memory_limit,
                repeat,
            })
        })
        .collect();
    Ok(Planned {
        workload: "stellar".into(),
        preset: p.preset.clone(),
        seed: p.workload.seed,
        config: serde_json::to_value(&p.workload)?,
        cells,
        expected: super::plan::expected(&p, std::path::Path::new(".")),
    })
}

/// The job `--cell FILE` names, checked against the plan these flags make:
/// its run must be one of them, with the same label, limit and seed, and a
/// repeat within the sweep's `--repeat`.
pub(super) fn the_cell(args: &Args, plan: &Plan) -> anyhow::Result<Option<(Job, Cell)>> {
    let Some(file) = &args.cell else {
        return Ok(None);
    };
    let job = Job::load(file)?;
    let found = plan
        .runs
        .iter()
        .any(|r| r.label == job.label && r.memory_limit == job.memory_limit_bytes);
    if !found || job.repeat >= args.repeat || job.seed != plan.workload.seed {
        bail!(
            "job {} (run {} repeat {}, seed {}) is not a cell of the sweep its command plans here; plan it again with this build",
            job.cell.id,
            job.label,
            job.repeat,
            job.seed
        );
    }
    let cell = job.cell.clone();
    Ok(Some((job, cell)))
}

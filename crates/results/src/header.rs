//! The fields every `results.json` begins with, whatever the workload.

use serde::{Deserialize, Serialize};

use crate::env::EnvInfo;

/// What, when, where and how a run ran: flattened into every results file
/// (Stellar, op-stream, point-read and crash runs), so a reader finds the
/// same fields at the top of each.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunHeader {
    /// [`crate::SCHEMA_VERSION`] at write time.
    pub schema_version: u32,
    /// ledgerbench version (absent in point-read results from before it was kept).
    #[serde(default)]
    pub ledgerbench_version: String,
    /// Workload name (`stellar`, `ycsb-a`, `point-reads`, `crash`, ...).
    pub workload: String,
    /// Seed of every generator in the run.
    pub seed: u64,
    /// Start time, UTC RFC 3339.
    pub started_at: String,
    /// The command line that produced this result.
    pub command: String,
    /// Where it ran.
    pub env: EnvInfo,
    /// The durability level every store of the run was set to; absent in
    /// results from before levels existed, and in crash runs, whose level
    /// is per run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<ledgerbench_core::Durability>,
    /// The sweep cell this run is, when it ran from a plan's job file
    /// (`ledgerbench run --job`); absent for a run of a whole command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<Cell>,
    /// The batch scheduler's job this run ran in, when it ran under one
    /// (Slurm, a Kubernetes Job): so a reader sees which cells shared a node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<Scheduled>,
}

/// Where a scheduler placed a run: its job, its task in an array and its node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scheduled {
    /// `slurm` or `kubernetes`.
    pub scheduler: String,
    /// The job's id (Slurm: the array's job id, else the job's; Kubernetes:
    /// the Job's name).
    pub job: String,
    /// The task's index in an array job (Slurm's array task id, a
    /// Kubernetes Indexed Job's completion index).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// The node the scheduler ran it on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

impl Scheduled {
    /// From the variables the scheduler sets in a job's environment, read
    /// through `var`; `None` outside a scheduler.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Option<Self> {
        if let Some(job) = var("SLURM_ARRAY_JOB_ID").or_else(|| var("SLURM_JOB_ID")) {
            return Some(Self {
                scheduler: "slurm".into(),
                job,
                task: var("SLURM_ARRAY_TASK_ID"),
                node: var("SLURMD_NODENAME"),
            });
        }
        let index = var("JOB_COMPLETION_INDEX")?;
        Some(Self {
            scheduler: "kubernetes".into(),
            job: var("JOB_NAME").unwrap_or_else(|| "?".into()),
            task: Some(index),
            node: var("NODE_NAME"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Scheduled;

    #[test]
    fn a_slurm_array_task_is_named_by_array_job_task_and_node() {
        let env = |k: &str| {
            match k {
                "SLURM_JOB_ID" => Some("17"),
                "SLURM_ARRAY_JOB_ID" => Some("12"),
                "SLURM_ARRAY_TASK_ID" => Some("3"),
                "SLURMD_NODENAME" => Some("n1"),
                _ => None,
            }
            .map(str::to_string)
        };
        let s = Scheduled::from_env(env).expect("slurm");
        assert_eq!(
            (
                s.scheduler.as_str(),
                s.job.as_str(),
                s.task.as_deref(),
                s.node.as_deref()
            ),
            ("slurm", "12", Some("3"), Some("n1"))
        );
        assert_eq!(Scheduled::from_env(|_| None), None);
        let k8s = Scheduled::from_env(|k| (k == "JOB_COMPLETION_INDEX").then(|| "2".to_string()));
        assert_eq!(
            k8s.map(|s| (s.scheduler, s.task)),
            Some(("kubernetes".into(), Some("2".into())))
        );
    }
}

/// One cell of a planned sweep (`ledgerbench plan`): which plan, which of
/// its jobs. Cells of one plan merge into the report of the whole sweep.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cell {
    /// The plan's id: a digest of its command line and build, the same in
    /// every job file of the plan.
    pub plan: String,
    /// The job's index in the plan's `matrix.json`.
    pub index: usize,
    /// How many jobs the plan has.
    pub of: usize,
    /// The job's name, also its results directory's.
    pub id: String,
}

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

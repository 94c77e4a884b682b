//! The flags that shape the Stellar ingestion protocol, shared by
//! `run stellar` and `record stellar`.

use ledgerbench_driver::stellar::StellarConfig;

use super::parse_compaction;
use crate::size;

/// Flags that shape the Stellar ingestion protocol (`run stellar`, `record stellar`).
#[derive(clap::Args)]
pub struct ShapeArgs {
    /// Ledgers to ingest.
    #[arg(long)]
    ledgers: Option<u64>,
    /// Ledgers per batch.
    #[arg(long)]
    batch_ledgers: Option<u32>,
    /// Ledgers per write commit inside a batch (0: the largest that fits
    /// the harness budget). A batch is flushed and compacted as one
    /// whatever its commits.
    #[arg(long)]
    commit_ledgers: Option<u32>,
    /// Most heap ledgerbench may hold for generated data (commit chunks in
    /// flight), e.g. 64MiB; recorded with the run.
    #[arg(long, value_name = "SIZE")]
    harness_budget: Option<String>,
    /// Seed of every generator.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run every backend once per memory limit in this list (e.g.
    /// 512MiB,256MiB,128MiB), labelled NAME@LIMIT: the data/memory ratios
    /// the report's cost model is fitted to and checked against.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub(super) sweep_limits: Vec<String>,
    /// End a backend's ingestion after the first batch slower than this
    /// many seconds (recorded as where it fell off, not as a failure).
    #[arg(long, value_name = "SECS")]
    max_batch_secs: Option<f64>,
    /// After each batch: manual, background or none.
    #[arg(long, value_parser = ["manual", "background", "none"])]
    compaction: Option<String>,
    /// Generate every ledger before the timed ingestion (into a spool file
    /// in the run directory, removed after) and stream it from there, so
    /// the engines, not the generator, set the pace.
    #[arg(long)]
    pregenerate: bool,
    /// Sync the stores after every batch (outside its timing) and keep them
    /// if the run stops, so `--resume DIR` goes on from the last batch.
    #[arg(long)]
    checkpoint: bool,
}

impl ShapeArgs {
    /// The flags given that shape a run but not a recorded trace (`ledgerbench
    /// record` refuses them rather than ignore them); with `stellar` false,
    /// every flag but --seed (a generated workload takes --param).
    pub fn not_for_record(&self, stellar: bool) -> Vec<&'static str> {
        let mut given = Vec::new();
        let mut flag = |on: bool, name| {
            if on {
                given.push(name);
            }
        };
        flag(!self.sweep_limits.is_empty(), "--sweep-limits");
        flag(self.max_batch_secs.is_some(), "--max-batch-secs");
        flag(self.pregenerate, "--pregenerate");
        flag(self.checkpoint, "--checkpoint");
        if !stellar {
            flag(self.ledgers.is_some(), "--ledgers");
            flag(self.batch_ledgers.is_some(), "--batch-ledgers");
            flag(self.commit_ledgers.is_some(), "--commit-ledgers");
            flag(self.harness_budget.is_some(), "--harness-budget");
            flag(self.compaction.is_some(), "--compaction");
        }
        given
    }

    /// Applies the flags that were given to `w`.
    pub fn apply(&self, w: &mut StellarConfig) -> anyhow::Result<()> {
        if let Some(v) = self.ledgers {
            w.ledgers = v;
        }
        if let Some(v) = self.max_batch_secs {
            w.max_batch_secs = Some(v);
        }
        if self.pregenerate {
            w.pregenerate = true;
        }
        if self.checkpoint {
            w.checkpoint = true;
        }
        if let Some(s) = &self.harness_budget {
            w.harness_budget = size::parse_named("--harness-budget", s)?;
        }
        if let Some(v) = self.batch_ledgers {
            w.batch_ledgers = v;
        }
        if let Some(v) = self.commit_ledgers {
            w.commit_ledgers = v;
        }
        if let Some(v) = self.seed {
            w.seed = v;
        }
        if let Some(c) = &self.compaction {
            w.compaction = parse_compaction(c)?;
        }
        Ok(())
    }
}

//! Results of `kvbench run crash`.

use kvbench_core::{CrashKind, Durability};
use serde::{Deserialize, Serialize};

use super::shape::CrashShape;
use super::verify::Recovered;
use crate::env::EnvInfo;
use crate::results::StoreSetup;

/// One crash and what the reopened stores held.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cycle {
    /// Cycle number, from 0.
    pub cycle: u32,
    /// Batches the writer acknowledged before the crash, per store, counted
    /// from the store's start (so batch numbers `0..acked`).
    pub acked: Vec<u64>,
    /// Batches acknowledged in this cycle (all stores' commits together).
    pub new_acks: u64,
    /// The writer reported a compaction running at its last acknowledgement
    /// (RocksDB only; absent for engines that do not report it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub during_compaction: Option<bool>,
    /// Time from the crash to the reopened store answering, seconds (open only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_secs: Option<f64>,
    /// Why the store did not open (or the checker died), if it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_error: Option<String>,
    /// Per store, what was there.
    pub stores: Vec<Recovered>,
    /// Acknowledged batches missing, over all stores.
    pub lost: u64,
    /// Of those, batches the durability level promised to keep.
    pub lost_promised: u64,
    /// The store was started afresh after this cycle (it did not open, or
    /// held torn or corrupt data), so the next cycle begins at batch 0.
    pub reset: bool,
}

/// Totals of one engine config x durability level x crash kind.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CrashSummary {
    /// Cycles run.
    pub cycles: u32,
    /// Commits acknowledged, all stores together.
    pub acked: u64,
    /// Acknowledged batches missing after a crash.
    pub lost: u64,
    /// Of those, ones the level promised to keep (a broken promise).
    pub lost_promised: u64,
    /// Batches partly present.
    pub torn: u64,
    /// Keys with wrong values or failed reads.
    pub corrupt: u64,
    /// Whole batches after a missing one (not a prefix).
    pub out_of_order: u64,
    /// Reopens that failed.
    pub failed_opens: u32,
    /// Crashes that hit while the writer reported a running compaction.
    pub during_compaction: u32,
    /// Recovery (open) time, median, seconds.
    pub recovery_p50_secs: Option<f64>,
    /// Recovery (open) time, 99th percentile, seconds.
    pub recovery_p99_secs: Option<f64>,
    /// Whether the level held: nothing promised lost, nothing torn, corrupt
    /// or out of order, every open fine (where the level promises that).
    pub promise_kept: bool,
}

/// One engine config at one level under one kind of crash.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CrashRun {
    /// Backend name, e.g. `rocksdb-leveled`.
    pub backend: String,
    /// Durability level.
    pub durability: Durability,
    /// How the writer was ended.
    pub kind: CrashKind,
    /// Each store's engine, version and full settings.
    pub stores: Vec<StoreSetup>,
    /// Memory cgroup limit of the writer and checker, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_bytes: Option<u64>,
    /// Every cycle.
    pub cycles: Vec<Cycle>,
    /// Totals.
    pub summary: CrashSummary,
    /// What stopped the run early, if anything did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Results of `kvbench run crash` (results.json).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CrashResults {
    /// Schema version of this file.
    pub schema_version: u32,
    /// kvbench version.
    pub kvbench_version: String,
    /// `crash`.
    pub workload: String,
    /// Seed of the batches and of the crash points.
    pub seed: u64,
    /// Start time, RFC 3339.
    pub started_at: String,
    /// The command line.
    pub command: String,
    /// Where it ran.
    pub env: EnvInfo,
    /// What each batch writes.
    pub shape: CrashShape,
    /// Most batches a writer commits per cycle.
    pub batches_per_cycle: u64,
    /// Every run.
    pub runs: Vec<CrashRun>,
}

impl CrashSummary {
    /// Totals of `cycles` at `level` under `kind`.
    pub fn of(cycles: &[Cycle], level: Durability, kind: CrashKind) -> Self {
        let mut s = CrashSummary {
            cycles: cycles.len() as u32,
            ..CrashSummary::default()
        };
        let mut rec = Vec::new();
        for c in cycles {
            s.acked += c.new_acks;
            s.lost += c.lost;
            s.lost_promised += c.lost_promised;
            s.failed_opens += u32::from(c.open_error.is_some());
            s.during_compaction += u32::from(c.during_compaction == Some(true));
            for r in &c.stores {
                s.torn += r.torn;
                s.corrupt += r.corrupt;
                s.out_of_order += r.out_of_order;
            }
            rec.extend(c.recovery_secs);
        }
        kvbench_core::quantile::sort(&mut rec);
        s.recovery_p50_secs = kvbench_core::quantile::quantile_sorted(&rec, 0.5);
        s.recovery_p99_secs = kvbench_core::quantile::quantile_sorted(&rec, 0.99);
        let intact = s.torn == 0 && s.corrupt == 0 && s.out_of_order == 0 && s.failed_opens == 0;
        s.promise_kept = s.lost_promised == 0 && (level.may_corrupt(kind) || intact);
        s
    }
}

//! Results of `ledgerbench run crash`.

use ledgerbench_core::{CrashKind, Durability};
use serde::{Deserialize, Serialize};

use crate::RunHeader;
use crate::StoreSetup;

mod fs;
mod shape;

pub use fs::{FsCrash, LOST_NAMES_LISTED, TornWrite};
pub use shape::{CrashShape, Fate, KeyKind, StoreShape};

/// What one store held after a crash, against the batches written to it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recovered {
    /// Batches `0..recovered` are all there, byte for byte.
    pub recovered: u64,
    /// Batches read key by key.
    pub checked: u64,
    /// Batches partly there: some of their writes, not all (a missing
    /// put, overwrite or delete is charged to the batch that made it).
    pub torn: u64,
    /// Keys there with a wrong value, or whose read failed.
    pub corrupt: u64,
    /// Batches past the recovered prefix with writes there (whole batches
    /// after one that is not, or a later batch's overwrite or delete): what
    /// survived is not a prefix of the commit order.
    pub out_of_order: u64,
    /// The first read error, if a read failed.
    pub error: Option<String>,
}

/// One crash and what the reopened stores held.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
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
    /// Acknowledged batches missing, over all stores (all acknowledged
    /// batches when the store did not open).
    pub lost: u64,
    /// Of those, batches the durability level promised to keep.
    pub lost_promised: u64,
    /// The store was started afresh after this cycle (it did not open, or
    /// held torn or corrupt data), so the next cycle begins at batch 0.
    pub reset: bool,
    /// Time from the checker starting to open until its first read
    /// returned, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_read_secs: Option<f64>,
    /// Bytes the device read from the checker's start to its first read
    /// (with the page cache dropped first, so recovery reads from the device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_read_bytes: Option<u64>,
    /// What the crash filesystem kept of the unsynced writes (its kinds only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs_crash: Option<FsCrash>,
    /// Commits acknowledged per second between the writer's first
    /// acknowledgement and the one the crash was aimed at (absent below two).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commits_per_sec: Option<f64>,
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
    /// Crashes that hit while the writer reported a running compaction;
    /// absent for engines that report no compactions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub during_compaction: Option<u32>,
    /// Recovery (open) time, median, seconds.
    pub recovery_p50_secs: Option<f64>,
    /// Recovery (open) time, 99th percentile, seconds.
    pub recovery_p99_secs: Option<f64>,
    /// Time to the first successful read after the crash, median, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_read_p50_secs: Option<f64>,
    /// Time to the first successful read, 99th percentile, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_read_p99_secs: Option<f64>,
    /// Device bytes read until the first read, median over cycles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_read_p50_bytes: Option<f64>,
    /// The writer's commits per second, median over cycles: with and
    /// without the crash filesystem, the layer's overhead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commits_per_sec_p50: Option<f64>,
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

/// Results of `ledgerbench run crash` (results.json).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CrashResults {
    /// Schema, version, workload (`crash`), seed, time, command, machine.
    #[serde(flatten)]
    pub header: RunHeader,
    /// What each batch writes.
    pub shape: CrashShape,
    /// Most batches a writer commits per cycle.
    pub batches_per_cycle: u64,
    /// Every run.
    pub runs: Vec<CrashRun>,
    /// The rule the stored summaries were counted by ([`SUMMARY_RULE`]);
    /// files from before the rule was recorded read 1.
    #[serde(default = "first_rule")]
    pub summary_rule: u32,
    /// The signal that stopped the run before its plan was done, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    /// Batches below the cycle's first write each check read in full (all
    /// from there up are read).
    #[serde(default = "window")]
    pub check_window: u64,
    /// Batches below the window each check but the last sampled at random
    /// (the last cycle's check reads every batch).
    #[serde(default = "samples")]
    pub check_samples: u64,
}

/// Batches below a cycle's first write its check reads in full: a batch
/// the writer rewrote may be the one missing.
pub const WINDOW: u64 = 64;
/// Batches sampled at random below the window by every check but the last.
pub const SAMPLES: u64 = 32;

// Every file written before these were recorded was checked with them.
fn window() -> u64 {
    WINDOW
}

fn samples() -> u64 {
    SAMPLES
}

/// How summaries are counted now. 1: a cycle whose store did not reopen
/// counted its batches as not lost (nothing could be checked); 2: every
/// batch such a cycle acknowledged is lost ([`Cycle::lost_batches`]).
pub const SUMMARY_RULE: u32 = 2;

fn first_rule() -> u32 {
    1
}

impl CrashResults {
    /// Recounts every run's stored summary from its cycles under the
    /// current rule, so the JSON says what the report says; returns how
    /// many summaries changed.
    pub fn migrate(&mut self) -> usize {
        let mut changed = 0;
        for run in &mut self.runs {
            let now = CrashSummary::of(&run.cycles, run.durability, run.kind);
            if serde_json::to_value(&now).ok() != serde_json::to_value(&run.summary).ok() {
                changed += 1;
            }
            run.summary = now;
        }
        self.summary_rule = SUMMARY_RULE;
        changed
    }
}

impl Cycle {
    /// Acknowledged batches not recovered, over all stores: every one of
    /// them when the store did not open (nothing of it can be read).
    pub fn lost_batches(&self) -> u64 {
        if self.open_error.is_some() {
            return self.acked.iter().sum();
        }
        self.acked
            .iter()
            .zip(&self.stores)
            .map(|(a, r)| a.saturating_sub(r.recovered))
            .sum()
    }
}

impl Cycle {
    /// Torn batches, corrupt keys and batches out of order, over all stores.
    pub fn damage(&self) -> (u64, u64, u64) {
        self.stores.iter().fold((0, 0, 0), |a, r| {
            (a.0 + r.torn, a.1 + r.corrupt, a.2 + r.out_of_order)
        })
    }

    /// The store did not reopen, or held torn, corrupt or out-of-order data.
    pub fn damaged(&self) -> bool {
        let (torn, corrupt, late) = self.damage();
        self.open_error.is_some() || torn + corrupt + late > 0
    }

    /// Whether this cycle broke what `level` promises under `kind`: an
    /// acknowledged batch lost where none may be, or damage where none may be.
    pub fn broke_promise(&self, level: Durability, kind: CrashKind) -> bool {
        (!level.may_lose(kind) && self.lost_batches() > 0)
            || (!level.may_corrupt(kind) && self.damaged())
    }
}

impl CrashSummary {
    /// Totals of `cycles` at `level` under `kind`.
    pub fn of(cycles: &[Cycle], level: Durability, kind: CrashKind) -> Self {
        let mut s = CrashSummary {
            cycles: cycles.len() as u32,
            ..CrashSummary::default()
        };
        let (mut rec, mut first, mut read, mut rate) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for c in cycles {
            s.acked += c.new_acks;
            // From the cycle's facts, not its stored totals, so results
            // written before a definition changed are summed the same way.
            let lost = c.lost_batches();
            s.lost += lost;
            if !level.may_lose(kind) {
                s.lost_promised += lost;
            }
            s.failed_opens += u32::from(c.open_error.is_some());
            if let Some(busy) = c.during_compaction {
                *s.during_compaction.get_or_insert(0) += u32::from(busy);
            }
            let (torn, corrupt, late) = c.damage();
            s.torn += torn;
            s.corrupt += corrupt;
            s.out_of_order += late;
            rec.extend(c.recovery_secs);
            first.extend(c.first_read_secs);
            read.extend(c.recovery_read_bytes.map(|b| b as f64));
            rate.extend(c.commits_per_sec);
        }
        use ledgerbench_core::quantile::{quantile_sorted as q, sort};
        for v in [&mut rec, &mut first, &mut read, &mut rate] {
            sort(v);
        }
        s.recovery_p50_secs = q(&rec, 0.5);
        s.recovery_p99_secs = q(&rec, 0.99);
        s.first_read_p50_secs = q(&first, 0.5);
        s.first_read_p99_secs = q(&first, 0.99);
        s.recovery_read_p50_bytes = q(&read, 0.5);
        s.commits_per_sec_p50 = q(&rate, 0.5);
        s.promise_kept = !cycles.iter().any(|c| c.broke_promise(level, kind));
        s
    }
}

#[cfg(test)]
mod tests {
    use ledgerbench_core::{CrashKind, Durability};

    use super::*;

    fn cycle(acked: u64, recovered: Option<u64>, torn: u64) -> Cycle {
        Cycle {
            cycle: 0,
            acked: vec![acked],
            new_acks: acked,
            during_compaction: None,
            recovery_secs: recovered.map(|_| 0.01),
            open_error: recovered.is_none().then(|| "MDBX_CORRUPTED".into()),
            stores: recovered
                .map(|r| {
                    vec![Recovered {
                        recovered: r,
                        torn,
                        ..Recovered::default()
                    }]
                })
                .unwrap_or_default(),
            ..Cycle::default()
        }
    }

    #[test]
    fn a_store_that_does_not_open_lost_everything_it_acknowledged() {
        let c = [cycle(10, Some(8), 0), cycle(5, None, 0)];
        let s = CrashSummary::of(&c, Durability::None, CrashKind::PowerCut);
        assert_eq!((s.lost, s.lost_promised, s.failed_opens), (2 + 5, 0, 1));
        assert!(s.promise_kept, "none may lose and corrupt on a power cut");
        let s = CrashSummary::of(&c, Durability::Process, CrashKind::PowerCut);
        assert_eq!(s.lost_promised, 0, "process may lose on a power cut");
        assert!(!s.promise_kept, "but never fail to open");
        let s = CrashSummary::of(&c[..1], Durability::Power, CrashKind::Kill);
        assert_eq!(s.lost_promised, 2);
        assert!(!s.promise_kept);
        let torn = [cycle(10, Some(10), 1)];
        assert!(!CrashSummary::of(&torn, Durability::Process, CrashKind::PowerCut).promise_kept);
        assert!(CrashSummary::of(&torn, Durability::None, CrashKind::PowerCut).promise_kept);
        assert_eq!(s.recovery_p50_secs, Some(0.01));
        assert_eq!(s.during_compaction, None, "no cycle reported compactions");
        let mut busy = cycle(3, Some(3), 0);
        busy.during_compaction = Some(true);
        let s = CrashSummary::of(
            &[busy, cycle(2, Some(2), 0)],
            Durability::Power,
            CrashKind::Kill,
        );
        assert_eq!(s.during_compaction, Some(1));
    }
}

//! What the verdict needs of a workload, so that it answers "which engine
//! for each store" for any workload with batches or segments, not only
//! Stellar's three stores: the stores in order, what a batch counts, the
//! horizon predicted to, and each batch's stores as measured.
//!
//! Stellar's shape is its report's month (234 batches of 550,000
//! transactions); a workload of operations (a replay, `run synth`, YCSB)
//! has the horizon the reader asks for (`ledgerbench report --horizon
//! 10x`): its segments after the initial state's load are its batches,
//! each store's entries written their count.

use ledgerbench_results::{BackendRun, StoreBatch};

use super::{MONTH_BATCHES, MONTH_TXS};

/// How far a verdict on operations predicts (`--horizon`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Horizon {
    /// The runs' length times this (`10x`).
    Times(f64),
    /// This many batches (segments).
    Batches(u32),
}

/// A `--horizon` that is no factor and no count, with what to give.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadHorizon(pub String);

impl Horizon {
    /// `10x`, `0.5x` (the runs' length times that) or `500` (batches).
    pub fn parse(s: &str) -> Result<Self, BadHorizon> {
        let t = s.trim();
        let bad = || {
            BadHorizon(format!(
                "--horizon {s}: give the runs' length times a factor (10x) or a number of batches (500)"
            ))
        };
        match t.strip_suffix(['x', 'X']) {
            Some(f) => match f.trim().parse::<f64>() {
                Ok(v) if v.is_finite() && v > 0.0 && v <= 1e6 => Ok(Horizon::Times(v)),
                _ => Err(bad()),
            },
            None => match t.parse::<u32>() {
                Ok(n) if n > 0 => Ok(Horizon::Batches(n)),
                _ => Err(bad()),
            },
        }
    }
}

/// A workload as the verdict reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// The stores, in the report's order.
    pub stores: Vec<String>,
    /// Batches predicted.
    pub batches: u32,
    /// What a batch counts at the horizon (transactions, entries written).
    pub per_batch: f64,
    /// The word for what is predicted: `month` (Stellar) or `horizon`.
    pub word: &'static str,
    /// The horizon in a sentence, for the answer's last line.
    pub horizon: String,
    /// The store whose lookups the bound weighs, looked up in one step
    /// (Stellar's `txdata`); the others in two.
    pub bounded: Option<String>,
    /// The mark ending the initial state's load: segments up to it are
    /// stored data, not batches of the workload.
    pub load: Option<String>,
    /// Stellar's text (its intro, its lookups, its months measured).
    pub stellar: bool,
}

impl Shape {
    /// The Stellar report's month over its three stores.
    pub fn stellar() -> Self {
        Self {
            stores: ledgerbench_workloads::stellar::STORES
                .iter()
                .map(|s| s.to_string())
                .collect(),
            batches: MONTH_BATCHES,
            per_batch: MONTH_TXS,
            word: "month",
            horizon: "The month is the Stellar report's (234 batches of 550,000 transactions)"
                .into(),
            bounded: Some("txdata".into()),
            load: None,
            stellar: true,
        }
    }

    /// Workload `name`'s runs in `runs` (segments of operations) predicted
    /// to `h`: its stores as its first run has them, a batch the mean
    /// entries written a segment after the load; `None` without segments.
    pub fn ops(name: &str, runs: &[&BackendRun], h: Horizon) -> Option<Self> {
        let load = ledgerbench_workloads::load_mark(name).map(str::to_string);
        let mut stores: Vec<String> = Vec::new();
        let (mut entries, mut segments) = (0u64, 0usize);
        for r in runs {
            let bs = batches(r, load.as_deref());
            for b in bs.iter().filter(|b| !b.load) {
                for s in b.stores {
                    if !stores.contains(&s.store) {
                        stores.push(s.store.clone());
                    }
                    entries += s.entries;
                }
                segments += 1;
            }
        }
        if segments == 0 {
            return None;
        }
        let per_batch = entries as f64 / segments as f64;
        let mean_run = segments as f64 / runs.len().max(1) as f64;
        let (batches, why) = match h {
            Horizon::Times(f) => (
                (mean_run * f).round().clamp(1.0, f64::from(u32::MAX)) as u32,
                format!("{f}x the runs' {mean_run:.0} segments"),
            ),
            Horizon::Batches(n) => (n, "as asked".to_string()),
        };
        Some(Self {
            stores,
            batches,
            per_batch,
            word: "horizon",
            horizon: format!(
                "The horizon is {batches} batches ({why}) of {per_batch:.0} entries written each, over all stores, `{name}`'s segments after its load"
            ),
            bounded: None,
            load,
            stellar: false,
        })
    }

    /// The store whose points give all stores' data over memory.
    pub(super) fn ratio_store(&self) -> &str {
        self.bounded
            .as_deref()
            .or(self.stores.first().map(String::as_str))
            .unwrap_or("")
    }
}

/// One batch of a run as the verdict reads it.
pub(in crate::render) struct BatchView<'a> {
    /// Its transactions (Stellar's batches); `None` for a segment, whose
    /// stores count their entries written.
    pub(in crate::render) txs: Option<u64>,
    /// Part of the initial state's load: stored, not a batch.
    pub(in crate::render) load: bool,
    /// Each store's share.
    pub(in crate::render) stores: &'a [StoreBatch],
}

impl BatchView<'_> {
    /// What the batch counts for `s`: the batch's transactions, or the
    /// store's entries written.
    pub(in crate::render) fn units(&self, s: &StoreBatch) -> f64 {
        self.txs.unwrap_or(s.entries) as f64
    }
}

/// The run's batches: a Stellar run's, or its segments, those up to the
/// `load` mark marked as the load.
pub(in crate::render) fn batches<'a>(r: &'a BackendRun, load: Option<&str>) -> Vec<BatchView<'a>> {
    if !r.batches.is_empty() {
        return r
            .batches
            .iter()
            .map(|b| BatchView {
                txs: Some(b.txs),
                load: false,
                stores: &b.stores,
            })
            .collect();
    }
    let Some(replay) = &r.replay else {
        return Vec::new();
    };
    let segs = &replay.segments;
    let end = load
        .and_then(|m| segs.iter().position(|s| s.mark == m))
        .map_or(0, |i| i + 1);
    segs.iter()
        .enumerate()
        .map(|(i, s)| BatchView {
            txs: None,
            load: i < end,
            stores: &s.stores,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_horizon_is_a_factor_or_a_count() {
        assert_eq!(Horizon::parse("10x"), Ok(Horizon::Times(10.0)));
        assert_eq!(Horizon::parse(" 0.5X "), Ok(Horizon::Times(0.5)));
        assert_eq!(Horizon::parse("500"), Ok(Horizon::Batches(500)));
        for bad in ["", "x", "0", "0x", "-3x", "nanx", "1e9x", "ten"] {
            let e = Horizon::parse(bad).expect_err(bad);
            assert!(e.0.contains("--horizon"), "{e}");
        }
    }
}

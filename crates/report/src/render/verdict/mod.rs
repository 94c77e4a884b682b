//! The verdict section: per store, every engine and config side by side
//! once data outgrows memory, the cost model fitted to each, the largest
//! measured data/memory ratio held out and predicted, and the report's full
//! month predicted.

use std::fmt::Write;

use ledgerbench_results::BackendRun;

use super::stellar::run_note;
use super::*;
use crate::model::{self, Fit, Point, Scenario};
use crate::table::Table;

mod answer;
mod debt;
mod growth;
mod lookup;
mod measured;
mod recommend;
mod shape;
mod store;
pub use answer::Answer;
use growth::Growth;
use ledgerbench_results::fanout::FanOutRun;
use lookup::{Standing, month_lookup, worse};
use recommend::{Candidate, recommend};
pub use shape::{Horizon, Shape};

/// The Stellar report's month: 234 batches of about 550,000 transactions.
pub const MONTH_BATCHES: u32 = 234;
/// Transactions per batch of the report's month.
pub const MONTH_TXS: f64 = 550_000.0;

/// What the verdict predicts for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VerdictOptions {
    /// Memory of the machine the month is predicted on, bytes (the
    /// report does not state its machines'; `ledgerbench report
    /// --predict-memory` sets it).
    pub predict_memory: u64,
    /// The lookup bound, microseconds: a `txdata` design whose GET p99
    /// (existing or missing key) at the month's batch count, measured by a
    /// fan-out run among the results, is over it is not recommended
    /// (`ledgerbench report --lookup-bound-ms`).
    pub lookup_bound_us: f64,
    /// Fit results of different hardware together (`ledgerbench report
    /// --mixed-machines`); refused otherwise.
    pub mixed_machines: bool,
    /// How far a verdict on runs of operations predicts (`ledgerbench
    /// report --horizon`); without it, such runs get no verdict.
    pub horizon: Option<Horizon>,
    /// Fit a backend's runs in different folders as one config where their
    /// engine settings are the same (`ledgerbench report --pool-folders`):
    /// a grid's cells differ in memory limit and scale, not in config.
    pub pool_folders: bool,
}

impl Default for VerdictOptions {
    /// 64 GiB; 10 ms: an RPC lookup's budget of ten device reads at about
    /// a millisecond each, the cost of a read on this VM's virtual disk.
    fn default() -> Self {
        Self {
            predict_memory: 64 << 30,
            lookup_bound_us: 10_000.0,
            mixed_machines: false,
            horizon: None,
            pool_folders: false,
        }
    }
}

/// One store's measured batches in a run: (txs, data after, seconds).
pub(in crate::render) fn points(r: &BackendRun, store: &str) -> Vec<Point> {
    points_in(r, store, None)
}

/// One store's measured batches in a run, its segments after the `load`
/// mark for a run of operations (the load's bytes count as stored).
pub(in crate::render) fn points_in(r: &BackendRun, store: &str, load: Option<&str>) -> Vec<Point> {
    let Some(memory) = r.memory_limit_bytes else {
        return Vec::new();
    };
    let (mut data, mut total) = (0u64, 0u64);
    shape::batches(r, load)
        .iter()
        .filter_map(|b| {
            total += b.stores.iter().map(|s| s.logical_bytes).sum::<u64>();
            let s = b.stores.iter().find(|s| s.store == store)?;
            data += s.logical_bytes;
            (!b.load).then(|| Point {
                txs: b.units(s),
                data: data as f64,
                total: total as f64,
                memory: memory as f64,
                secs: s.write_secs + s.flush_secs + s.compact_secs.unwrap_or(0.0),
            })
        })
        .collect()
}

/// The design a run label names, for results from before runs recorded
/// their design: a sweep labelled its runs `NAME@LIMIT`.
fn backend_of(label: &str) -> &str {
    label.rsplit_once('@').map_or(label, |(b, _)| b)
}

/// A run of a backend group: its label, the run and its store's batches.
struct Member<'a> {
    label: &'a str,
    run: &'a BackendRun,
    points: Vec<Point>,
}

/// The held-out check of a backend group.
struct HeldOut {
    /// Index of the member held out (its last third, when alone).
    member: usize,
    /// Its last batch: measured and predicted seconds.
    measured: f64,
    predicted: f64,
    /// Mean absolute error over the held-out batches, percent.
    error_pct: f64,
}

/// The fit and its held-out check for the runs of one backend: the run
/// reaching the largest data/memory ratio is held out when there are
/// several, else the last third of the only run's batches.
struct Checked {
    held_out: Option<HeldOut>,
    /// The fit on every batch, for the prediction.
    all: Option<Fit>,
}

fn check(runs: &[Member<'_>]) -> Checked {
    let ratio = |m: &Member<'_>| m.points.last().map_or(0.0, |x| x.total / x.memory);
    let all_points: Vec<Point> = runs.iter().flat_map(|m| m.points.clone()).collect();
    let all = model::fit(&all_points);
    let Some(held) = (0..runs.len()).max_by(|&a, &b| ratio(&runs[a]).total_cmp(&ratio(&runs[b])))
    else {
        return Checked {
            held_out: None,
            all,
        };
    };
    let (train, test): (Vec<Point>, &[Point]) = if runs.len() >= 2 {
        let train = runs
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != held)
            .flat_map(|(_, m)| m.points.clone())
            .collect();
        (train, &runs[held].points)
    } else {
        let p = &runs[held].points;
        let cut = p.len() - p.len() / 3;
        (p[..cut].to_vec(), &p[cut..])
    };
    let held_out = model::fit(&train)
        .zip(test.last())
        .map(|(f, last)| HeldOut {
            member: held,
            measured: last.secs,
            predicted: f.predict(last),
            error_pct: test
                .iter()
                .map(|p| (f.predict(p) - p.secs).abs() / p.secs.max(1e-9))
                .sum::<f64>()
                / test.len() as f64
                * 100.0,
        });
    Checked { held_out, all }
}

fn secs(v: f64) -> String {
    if v >= 3600.0 {
        format!("{:.1} h", v / 3600.0)
    } else if v >= 60.0 {
        format!("{:.1} min", v / 60.0)
    } else {
        format!("{v:.2} s")
    }
}

/// Renders the verdict for the limited Stellar runs in `runs`; nothing when
/// no run had a memory limit.
pub(super) fn verdict_section(
    out: &mut Out,
    runs: &[(String, &BackendRun)],
    opts: &VerdictOptions,
    fanouts: &[(String, &FanOutRun)],
) -> Option<Answer> {
    // Month runs are evidence for the configs they measure, not candidates:
    // their batches are smaller than the sweeps', their month not the
    // report's full one.
    let (months, limited): (Vec<&(String, &BackendRun)>, Vec<_>) = runs
        .iter()
        .filter(|(_, r)| r.memory_limit_bytes.is_some() && !r.batches.is_empty())
        .partition(|(_, r)| crate::render::month::is_month(r));
    if limited.is_empty() {
        return None;
    }
    let shape = Shape::stellar();
    let mut answer = Answer::of(&limited, &shape);
    answer.months = measured::all(&months, "txdata");
    // The bound is weighed only when lookups at the month were measured:
    // by fan-out runs, or by a month run after its last batch.
    let month_lookups = answer.months.iter().any(|m| m.lookup_at_month().is_some());
    let bound = (!fanouts.is_empty() || month_lookups).then_some(opts.lookup_bound_us);
    answer.lookup_bound_us = bound;
    intro(&mut out.md, opts);
    if !months.is_empty() {
        let _ = writeln!(
            out.md,
            "{} month run(s) are among the results (checkpointed runs of the month's {MONTH_BATCHES} batches at a smaller scale, `--preset month`). \
             Each is evidence for the config set up as it is (backend, durability, settings, compaction after each batch or not), not a candidate: \
             its month measured stands beside the config's predicted one, a debt that rose over it sets the config aside, \
             and its lookups after batch {MONTH_BATCHES} meet the lookup bound beside any fan-out run of the config, the worse of the two standing.\n",
            months.len()
        );
    }
    let ctx = store::Ctx {
        opts,
        fanouts,
        bound,
        months: &months,
        shape: &shape,
    };
    for store in &shape.stores {
        store::section(out, store, &limited, &ctx, &mut answer);
    }
    Some(answer)
}

/// Renders the verdict for the runs of operations of workload `name`
/// under a memory limit, predicted to `h`; nothing when none ran under
/// one.
pub(super) fn ops_verdict_section(
    out: &mut Out,
    name: &str,
    runs: &[(String, &BackendRun)],
    opts: &VerdictOptions,
    h: Horizon,
) -> Option<Answer> {
    let limited: Vec<&(String, &BackendRun)> = runs
        .iter()
        .filter(|(_, r)| r.memory_limit_bytes.is_some() && r.replay.is_some())
        .collect();
    let all: Vec<&BackendRun> = limited.iter().map(|(_, r)| *r).collect();
    let shape = Shape::ops(name, &all, h)?;
    let mut answer = Answer::of(&limited, &shape);
    ops_intro(&mut out.md, name, &shape, opts);
    let ctx = store::Ctx {
        opts,
        fanouts: &[],
        bound: None,
        months: &[],
        shape: &shape,
    };
    for store in &shape.stores {
        store::section(out, store, &limited, &ctx, &mut answer);
    }
    Some(answer)
}

/// What the verdict on runs of operations reads and predicts.
fn ops_intro(md: &mut String, name: &str, shape: &Shape, opts: &VerdictOptions) {
    let _ = writeln!(
        md,
        "## Verdict: `{name}` once data outgrows memory\n\n\
         Per store, every engine and config that ran `{name}` under a memory limit. A batch is a segment of the run after its initial state's load \
         (loaded data counts as stored); its cost is the store's commit + flush + compaction seconds, its count the entries the store wrote. \
         The model, fitted per run group: `secs = a * entries + b * entries * miss + c * data`, with `miss = max(0, 1 - memory / data of all stores)` \
         and `data` the bytes written so far (overwrites and deletes included), coefficients kept non-negative. \
         The run reaching the largest data/memory ratio is held out of the fit and predicted (the last third of the batches when a backend ran once). \
         The horizon (`--horizon`): {} batches of {:.0} entries, each store growing by its measured bytes per entry, under {} GiB of memory (`--predict-memory`). \
         Gets are not in a batch's cost: their latencies are in the operations' section.\n",
        shape.batches,
        shape.per_batch,
        opts.predict_memory >> 30
    );
    if opts.pool_folders {
        md.push_str(
            "A backend's runs in different folders are one config, fitted together, where their engine settings are the same (`--pool-folders`).\n\n",
        );
    }
}

/// What the verdict's tables hold and how the model reads them.
fn intro(md: &mut String, opts: &VerdictOptions) {
    let _ = writeln!(
        md,
        "## Verdict: ingestion once data outgrows memory\n\n\
         Per store, every engine and config that ran under a memory limit. Batch cost is the store's write + flush + compaction seconds. \
         The model, fitted per run group: `secs = a * txs + b * txs * miss + c * data`, with `miss = max(0, 1 - memory / data of all stores)` (they share \
         the page cache) the share of random keys not in memory (`a`: an insert that hits memory, `b`: one that must read its page or block, `c`: compaction rewriting what \
         is stored), coefficients kept non-negative. Lookups through the store: one-step for `txdata`, two-step (`txindex`, then `ledgers`) for the others, \
         while ledgers stream in. Device reads per GET: over the verification lookups after ingestion (random transactions of the whole history, \
         nothing writing), from the store's private device. Compaction debt: the engine's pending compaction bytes after the last batch (RocksDB counts level 0 only past its compaction trigger), \
         `rising` when it rose across the run: the batch-to-batch changes' Hodges-Lehmann estimate over 1% of a batch's data, its one-sided 99% lower bound above zero, \
         over at least 10 batches. A config with a run whose debt rose is not recommended, as its month, predicted from batch times, leaves out the work it deferred. \
         A harness-bound run's engine waited for generated data part of each batch, time its background compaction had free; \
         `--pregenerate` takes the generator out of the way. The run reaching the largest data/memory ratio is held out of the fit and predicted \
         (the last third of the batches when a backend ran once). The month is the report's: {MONTH_BATCHES} batches of {} transactions, \
         each store growing by its measured bytes per transaction, under {} GiB of memory (the report does not state its machines'; \
         `--predict-memory` sets it).\n",
        MONTH_TXS as u64,
        opts.predict_memory >> 30
    );
}

/// Device reads and KiB per GET of `store` over the verification lookups,
/// marked when background compaction read meanwhile (then the figures are
/// not the lookups' alone).
fn reads_per_get(r: &BackendRun, store: &str) -> String {
    let Some(s) = r
        .lookup_reads
        .as_ref()
        .and_then(|l| l.stores.iter().find(|s| s.store == store))
    else {
        return "n/a".into();
    };
    let (Some(n), Some(kib)) = (s.device_reads_per_get(), s.device_kib_per_get()) else {
        return "n/a".into();
    };
    let mark = if s.compaction_ran() == Some(true) {
        " (compaction ran)"
    } else {
        ""
    };
    format!("{n:.2} / {kib:.1}{mark}")
}

/// The share of batch time the writer waited for generated data, when
/// that made the run harness-bound.
fn harness_wait(r: &BackendRun) -> Option<f64> {
    let s = r.summary.as_ref()?;
    if s.bound != Some(ledgerbench_results::Bound::Harness) {
        return None;
    }
    Some(s.writer_wait_secs? / s.batch_secs?.max(1e-9))
}

/// The run's note, and when it was harness-bound, what that means for the
/// engine's background work.
fn verdict_note(r: &BackendRun) -> String {
    let mut n = run_note(r);
    if let Some(w) = harness_wait(r) {
        if !n.is_empty() {
            n.push_str("; ");
        }
        let _ = write!(
            n,
            "harness-bound: waited for data {:.0}% of batch time",
            w * 100.0
        );
    }
    n
}

#[cfg(test)]
mod tests;

//! The verdict section: per store, every engine and config side by side
//! once data outgrows memory, the cost model fitted to each, the largest
//! measured data/memory ratio held out and predicted, and the report's full
//! month predicted.

use std::fmt::Write;

use kvbench_results::BackendRun;

use super::stellar::run_note;
use super::*;
use crate::model::{self, Fit, Point, Scenario};
use crate::table::Table;

mod answer;
pub use answer::Answer;
use answer::{Growth, StoreAnswer};

/// The Stellar report's month: 234 batches of about 550,000 transactions.
pub const MONTH_BATCHES: u32 = 234;
/// Transactions per batch of the report's month.
pub const MONTH_TXS: f64 = 550_000.0;

/// What the verdict predicts for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VerdictOptions {
    /// Memory of the machine the month is predicted on, bytes (the
    /// report does not state its machines'; `kvbench report
    /// --predict-memory` sets it).
    pub predict_memory: u64,
}

impl Default for VerdictOptions {
    fn default() -> Self {
        Self {
            predict_memory: 64 << 30,
        }
    }
}

/// One store's measured batches in a run: (txs, data after, seconds).
fn points(r: &BackendRun, store: &str) -> Vec<Point> {
    let Some(memory) = r.memory_limit_bytes else {
        return Vec::new();
    };
    let (mut data, mut total) = (0u64, 0u64);
    r.batches
        .iter()
        .filter_map(|b| {
            total += b.stores.iter().map(|s| s.logical_bytes).sum::<u64>();
            let s = b.stores.iter().find(|s| s.store == store)?;
            data += s.logical_bytes;
            Some(Point {
                txs: b.txs as f64,
                data: data as f64,
                total: total as f64,
                memory: memory as f64,
                secs: s.write_secs + s.flush_secs + s.compact_secs.unwrap_or(0.0),
            })
        })
        .collect()
}

/// The backend a run label names: a sweep labels runs `NAME@LIMIT`.
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
    out: &mut Out<'_>,
    runs: &[(String, &BackendRun)],
    opts: &VerdictOptions,
) -> Result<Option<Answer>, ReportError> {
    let limited: Vec<&(String, &BackendRun)> = runs
        .iter()
        .filter(|(_, r)| r.memory_limit_bytes.is_some() && !r.batches.is_empty())
        .collect();
    if limited.is_empty() {
        return Ok(None);
    }
    let mut answer = Answer::of(&limited);
    let _ = writeln!(
        out.md,
        "## Verdict: ingestion once data outgrows memory\n\n\
         Per store, every engine and config that ran under a memory limit. Batch cost is the store's write + flush + compaction seconds. \
         The model, fitted per run group: `secs = a * txs + b * txs * miss + c * data`, with `miss = max(0, 1 - memory / data of all stores)` (they share \
         the page cache) the share of random keys not in memory (`a`: an insert that hits memory, `b`: one that must read its page or block, `c`: compaction rewriting what \
         is stored), coefficients kept non-negative. Lookups through the store: one-step for `txdata`, two-step (`txindex`, then `ledgers`) for the others, \
         while ledgers stream in. Device reads per GET: over the verification lookups after ingestion (random transactions of the whole history, \
         nothing writing), from the store's private device. Compaction debt: the engine's pending compaction bytes after the last batch. \
         A harness-bound run's engine waited for generated data part of each batch, time its background compaction had free; \
         `--pregenerate` takes the generator out of the way. The run reaching the largest data/memory ratio is held out of the fit and predicted \
         (the last third of the batches when a backend ran once). The month is the report's: {MONTH_BATCHES} batches of {} transactions, \
         each store growing by its measured bytes per transaction, under {} GiB of memory (the report does not state its machines'; \
         `--predict-memory` sets it).\n",
        MONTH_TXS as u64,
        opts.predict_memory >> 30
    );
    for store in kvbench_workloads::stellar::STORES {
        let mut t = Table::new(&[
            "run",
            ">first -> last batch",
            ">worst batch",
            ">last batch: store / all data over memory",
            ">WA engine / device",
            ">space amp",
            ">lookups through the store p50 / p99 us",
            ">device reads / KiB per GET",
            ">compaction debt at end, MiB",
            ">fit over the backend's runs: a / b / c, R2",
            ">held out: last batch measured / predicted, error",
            ">month predicted: first -> last batch, total",
            "note",
        ]);
        let mut groups: Vec<(&str, Vec<Member<'_>>)> = Vec::new();
        for (l, r) in &limited {
            let b = backend_of(l);
            let m = Member {
                label: l,
                run: r,
                points: points(r, store),
            };
            match groups.iter_mut().find(|g| g.0 == b) {
                Some(g) => g.1.push(m),
                None => groups.push((b, vec![m])),
            }
        }
        let mut series = Vec::new();
        let mut candidates: Vec<Candidate> = Vec::new();
        for (group, members) in &groups {
            answer.growth.push(Growth::of(
                store,
                group,
                members.iter().map(|m| &m.points[..]),
            ));
            let checked = check(members);
            let mut eligible: Vec<Option<Candidate>> = Vec::new();
            for (i, m) in members.iter().enumerate() {
                let (l, r, pts) = (m.label, m.run, &m.points);
                let sum = r.summary.as_ref().and_then(|s| s.stores.get(store));
                let lookup = r.streaming.as_ref().map(|s| {
                    if store == "txdata" {
                        &s.one_step
                    } else {
                        &s.two_step
                    }
                });
                let txs: f64 = pts.iter().map(|p| p.txs).sum::<f64>().max(1.0);
                let bytes_per_tx = pts.last().map_or(0.0, |p| p.data) / txs;
                let all_per_tx = pts.last().map_or(0.0, |p| p.total) / txs;
                let month = checked.all.map(|f| {
                    model::predict_run(
                        &f,
                        &Scenario {
                            batches: MONTH_BATCHES,
                            txs: MONTH_TXS,
                            bytes: bytes_per_tx * MONTH_TXS,
                            total: all_per_tx * MONTH_TXS,
                            memory: opts.predict_memory as f64,
                        },
                    )
                });
                t.row([
                    l.to_string(),
                    match (pts.first(), pts.last()) {
                        (Some(a), Some(b)) => format!("{} -> {}", secs(a.secs), secs(b.secs)),
                        _ => "n/a".into(),
                    },
                    // Stalls come and go with background compaction: the
                    // first and last batch alone can miss them.
                    pts.iter()
                        .map(|p| p.secs)
                        .reduce(f64::max)
                        .map_or("n/a".into(), secs),
                    pts.last().map_or("n/a".into(), |p| {
                        format!("{:.2}x / {:.2}x", p.data / p.memory, p.total / p.memory)
                    }),
                    sum.map_or("n/a".into(), |s| {
                        format!(
                            "{} / {}",
                            opt(s.write_amp_engine, 2),
                            opt(s.write_amp_device, 2)
                        )
                    }),
                    sum.map_or("n/a".into(), |s| format!("{:.2}", s.space_amp)),
                    lookup.and_then(|l| l.as_ref()).map_or("n/a".into(), |l| {
                        format!("{:.0} / {:.0}", l.p50_us, l.p99_us)
                    }),
                    reads_per_get(r, store),
                    r.batches
                        .last()
                        .and_then(|b| b.stores.iter().find(|s| s.store == store))
                        .and_then(|s| s.engine.pending_compaction_bytes)
                        .map_or("n/a".into(), mib),
                    checked.all.map_or("n/a".into(), |f| {
                        format!(
                            "{:.2e} / {:.2e} / {:.2e}, {:.2}",
                            f.per_tx, f.per_miss, f.per_byte, f.r2
                        )
                    }),
                    match &checked.held_out {
                        Some(h) if h.member == i => format!(
                            "{} / {}, {:.0}%",
                            secs(h.measured),
                            secs(h.predicted),
                            h.error_pct
                        ),
                        _ => String::new(),
                    },
                    month.map_or("n/a".into(), |(a, b, total)| {
                        format!("{} -> {}, {}", secs(a), secs(b), secs(total))
                    }),
                    verdict_note(r),
                ]);
                // FIFO drops the oldest data: it does not keep the store,
                // so it is no answer for one that must.
                let evicts = r
                    .stores
                    .iter()
                    .any(|s| s.store == store && s.config["compaction"]["style"] == "fifo");
                eligible.push(
                    month
                        .filter(|_| r.error.is_none() && r.stopped_early.is_none() && !evicts)
                        .map(|(_, _, total)| Candidate {
                            label: group.to_string(),
                            month: total,
                            wa: sum.and_then(|s| s.write_amp_device.or(s.write_amp_engine)),
                            space: sum.map(|s| s.space_amp),
                            error_pct: checked.held_out.as_ref().map(|h| h.error_pct),
                            runs: members.len(),
                            harness_bound: harness_wait(r).is_some(),
                        }),
                );
                series.push(Series {
                    name: l.to_string(),
                    points: pts.iter().map(|p| (p.total / p.memory, p.secs)).collect(),
                });
            }
            // One candidate per config, not per memory limit: the month is
            // predicted from the whole group. A config counts only when
            // every run of it finished; its amplification is that of its
            // most memory-starved run (the one held out).
            let pick = checked
                .held_out
                .as_ref()
                .map_or(members.len() - 1, |h| h.member);
            if eligible.iter().all(Option::is_some)
                && let Some(c) = eligible.into_iter().nth(pick).flatten()
            {
                candidates.push(c);
            }
        }
        let _ = writeln!(out.md, "### {store}\n");
        // Thirteen columns told as two tables: what a batch cost, then
        // lookups and the model.
        out.md.push_str("Cost of the store's batches:\n\n");
        out.md
            .push_str(&t.columns(&[0, 1, 2, 3, 4, 5, 8, 12]).render());
        out.md
            .push_str("\nLookups, and the model fitted to each config:\n\n");
        out.md.push_str(&t.columns(&[0, 6, 7, 9, 10, 11]).render());
        out.md.push('\n');
        let (text, picked) = recommend(store, candidates);
        out.md.push_str(&text);
        answer.stores.push(picked);
        out.chart(
            &format!("Batch cost against data / memory: {store}"),
            svg::line_chart(
                &format!("Batch cost against data / memory: {store}"),
                "all stores' data / memory",
                "seconds",
                &series,
            ),
        )?;
    }
    Ok(Some(answer))
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

/// A run that finished, with what the recommendation weighs.
#[derive(Clone)]
struct Candidate {
    label: String,
    /// Predicted month, seconds.
    month: f64,
    wa: Option<f64>,
    space: Option<f64>,
    /// The held-out prediction's error of its group, percent.
    error_pct: Option<f64>,
    /// Runs of the config (memory limits of a sweep) the month is fitted on.
    runs: usize,
    /// The engine waited for the generator (its background work got that
    /// time free).
    harness_bound: bool,
}

/// The share of batch time the writer waited for generated data, when
/// that made the run harness-bound.
fn harness_wait(r: &BackendRun) -> Option<f64> {
    let s = r.summary.as_ref()?;
    if s.bound != Some(kvbench_results::Bound::Harness) {
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

/// The recommended run for `store`: the lowest predicted month among runs
/// that finished, beside the next one, and what would change the choice.
fn recommend(store: &'static str, mut c: Vec<Candidate>) -> (String, StoreAnswer) {
    c.sort_by(|a, b| a.month.total_cmp(&b.month));
    let picked = StoreAnswer::of(store, &c);
    let Some(best) = c.first() else {
        return (
            format!("No recommendation for `{store}`: no run finished with a fitted model.\n\n"),
            picked,
        );
    };
    let amp = |x: &Candidate| {
        let over = if x.runs > 1 {
            format!(
                " (fitted over its {} memory limits; amplification at the smallest)",
                x.runs
            )
        } else {
            String::new()
        };
        let bound = if x.harness_bound {
            "; harness-bound, so background work had idle time a node ingesting at full speed would not give it"
        } else {
            ""
        };
        format!(
            "{over}; write amplification {}, space amplification {}{bound}",
            opt(x.wa, 2),
            opt(x.space, 2)
        )
    };
    let mut s = format!(
        "**Recommended for `{store}`: `{}`**, the lowest predicted month ({}) of {} config(s) whose runs all finished and keep every entry{}.",
        best.label,
        secs(best.month),
        c.len(),
        amp(best)
    );
    if let Some(next) = c.get(1) {
        let margin = (next.month / best.month.max(1e-9) - 1.0) * 100.0;
        let _ = write!(
            s,
            " Next: `{}`, {} ({margin:.0}% more){}.",
            next.label,
            secs(next.month),
            amp(next)
        );
        // The choice stands only as far as the model predicts: a margin
        // inside its measured error is not a difference.
        let err = best
            .error_pct
            .into_iter()
            .chain(next.error_pct)
            .fold(0.0, f64::max);
        if err > 50.0 {
            let _ = write!(
                s,
                " Weak evidence: the model missed a held-out batch by {err:.0}%, so the month is a trend, not a figure."
            );
        }
        if err > 0.0 && margin <= err {
            let _ = write!(
                s,
                " The margin is within the model's held-out error ({err:.0}%): on this evidence the two are not told apart."
            );
        } else if err > 0.0 {
            let _ = write!(
                s,
                " It would change if the held-out error ({err:.0}%) grew past the margin at a larger data/memory ratio, or if write or space amplification weighs more than time for this store."
            );
        }
    }
    s.push_str("\n\n");
    (s, picked)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(label: &str, month: f64, error_pct: Option<f64>) -> Candidate {
        Candidate {
            label: label.into(),
            month,
            wa: Some(2.0),
            space: None,
            error_pct,
            runs: 1,
            harness_bound: false,
        }
    }

    #[test]
    fn the_lowest_month_wins_and_a_margin_inside_the_error_is_no_difference() {
        let (r, a) = recommend(
            "txdata",
            vec![cand("b", 105.0, Some(10.0)), cand("a", 100.0, None)],
        );
        assert_eq!(a.best.as_ref().map(|b| b.label.as_str()), Some("a"));
        assert!(a.reading().contains("not told apart"), "{}", a.reading());
        assert!(r.contains("`txdata`: `a`**"), "{r}");
        assert!(r.contains("Next: `b`") && r.contains("(5% more)"), "{r}");
        assert!(r.contains("not told apart"), "{r}");
        assert!(r.contains("space amplification n/a"), "absent, not 0: {r}");
        let (r, _) = recommend(
            "txdata",
            vec![cand("a", 100.0, Some(80.0)), cand("b", 1000.0, None)],
        );
        assert!(
            r.contains("Weak evidence") && r.contains("would change"),
            "{r}"
        );
        let mut fast = cand("fast", 10.0, None);
        fast.harness_bound = true;
        let (r, a) = recommend("txdata", vec![fast]);
        assert!(a.reading().contains("harness-bound"), "{}", a.reading());
        assert!(
            r.contains("harness-bound, so background work had idle time"),
            "{r}"
        );
        let (r, _) = recommend("ledgers", Vec::new());
        assert!(r.contains("No recommendation for `ledgers`"), "{r}");
    }
}

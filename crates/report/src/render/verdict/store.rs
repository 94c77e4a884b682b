//! One store's part of the verdict: a row per limited run, the fit per
//! config, the configs that qualify and the recommendation among them.

use ledgerbench_results::StoreBatch;

use super::*;

/// What every store's section reads besides its runs.
pub(super) struct Ctx<'a> {
    pub(super) opts: &'a VerdictOptions,
    pub(super) fanouts: &'a [(String, &'a FanOutRun)],
    /// The lookup bound, microseconds, when fan-out results are inputs.
    pub(super) bound: Option<f64>,
    /// The month runs among the results: each config's measured month.
    pub(super) months: &'a [&'a (String, &'a BackendRun)],
    /// The workload's stores, horizon and words.
    pub(super) shape: &'a Shape,
}

/// The columns, the horizon's word put in where `{}` stands.
const COLUMNS: [&str; 13] = [
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
    ">{} predicted: first -> last batch, total",
    "note",
];

/// Renders `store`'s tables, recommendation and chart, and adds its growth
/// and pick to `answer`.
pub(super) fn section(
    out: &mut Out,
    store: &str,
    limited: &[&(String, &BackendRun)],
    ctx: &Ctx<'_>,
    answer: &mut Answer,
) {
    let columns = columns(ctx.shape.word);
    let mut t = Table::new(&columns.iter().map(String::as_str).collect::<Vec<_>>());
    let mut series = Vec::new();
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut left: Vec<(String, &'static str)> = Vec::new();
    let pool = ctx.opts.pool_folders;
    for (group, members) in groups(limited, store, ctx.shape.load.as_deref(), pool) {
        let group = group.as_str();
        answer.growth.push(Growth::of(
            store,
            group,
            members.iter().map(|m| &m.points[..]),
        ));
        let checked = check(&members);
        let mut eligible: Vec<Option<Candidate>> = Vec::new();
        for (i, m) in members.iter().enumerate() {
            let row = Row::new(m, i, store, &checked, ctx);
            t.row(row.cells());
            let why = row.set_aside();
            note_left(&mut left, group, why);
            eligible.push(match why {
                None => row.candidate(group, members.len(), ctx),
                Some(_) => None,
            });
            series.push(curve(m));
        }
        // One candidate per config, not per memory limit: the month is
        // predicted from the whole group. A config counts only when every
        // run of it finished; its amplification is that of its most
        // memory-starved run (the one held out).
        let pick = checked
            .held_out
            .as_ref()
            .map_or(members.len() - 1, |h| h.member);
        // Its debt is that of the run where it rose the most: one run
        // falling behind is enough to set the config aside.
        let rising = members
            .iter()
            .filter_map(|m| debt::rising(m.label, m.run, store, ctx.shape.load.as_deref()))
            .max_by(|a, b| a.rise_pct.total_cmp(&b.rise_pct));
        if eligible.iter().all(Option::is_some)
            && let Some(mut c) = eligible.into_iter().nth(pick).flatten()
        {
            // A debt that rose only over the measured month counts too: it
            // is the same config, run longer.
            c.debt = rising.or_else(|| c.measured.as_ref().and_then(|m| m.debt.clone()));
            c.batches = members.iter().map(|m| m.points.len()).sum();
            candidates.push(c);
        }
    }
    let _ = writeln!(out.md, "### {store}\n");
    // Thirteen columns told as two tables: what a batch cost, then lookups
    // and the model.
    out.md.push_str("Cost of the store's batches:\n\n");
    out.md
        .push_str(&t.columns(&[0, 1, 2, 3, 4, 5, 8, 12]).render());
    out.md
        .push_str("\nLookups, and the model fitted to each config:\n\n");
    out.md.push_str(&t.columns(&[0, 6, 7, 9, 10, 11]).render());
    out.md.push('\n');
    let (text, picked) = recommend(store, ctx.shape.word, candidates, ctx.bound);
    out.md.push_str(&(text + &not_candidates(&left)));
    answer.stores.push(picked);
    let title = format!("Batch cost against data / memory: {store}");
    out.chart(
        &title,
        svg::line_chart(&title, "all stores' data / memory", "seconds", &series),
    );
}

/// A run's batch cost against its data over memory, for the chart.
fn curve(m: &Member<'_>) -> Series {
    Series {
        name: m.label.to_string(),
        marked: false,
        points: m
            .points
            .iter()
            .map(|p| (p.total / p.memory, p.secs))
            .collect(),
    }
}

/// Keeps the first reason a config's run gives for setting it aside.
fn note_left(left: &mut Vec<(String, &'static str)>, group: &str, why: Option<&'static str>) {
    if let Some(w) = why.filter(|_| !left.iter().any(|l| l.0 == group)) {
        left.push((group.to_string(), w));
    }
}

/// The configs that were no candidate, each with why (none: nothing).
fn not_candidates(left: &[(String, &'static str)]) -> String {
    if left.is_empty() {
        return String::new();
    }
    let each: Vec<String> = left
        .iter()
        .map(|(g, why)| format!("`{g}` ({why})"))
        .collect();
    format!("Not a candidate: {}.\n\n", each.join("; "))
}

/// [`COLUMNS`] with the horizon's `word` in.
fn columns(word: &str) -> Vec<String> {
    COLUMNS.iter().map(|c| c.replace("{}", word)).collect()
}

/// The limited runs grouped by config (a sweep's runs of one backend at
/// several limits form one group), in first-seen order. With `pool`
/// (`report --pool-folders`), runs of one design in different folders form
/// one group when their engine settings are the same; settings that differ
/// keep their folder's name.
fn groups<'a>(
    limited: &[&'a (String, &'a BackendRun)],
    store: &str,
    load: Option<&str>,
    pool: bool,
) -> Vec<(String, Vec<Member<'a>>)> {
    let mut groups: Vec<(String, Vec<Member<'_>>)> = Vec::new();
    for (l, r) in limited.iter().copied() {
        // Pooled: the design alone, unless a group of that name was set up
        // otherwise.
        let b = match config_of(l.rsplit('/').next().unwrap_or(l), r) {
            p if pool
                && groups
                    .iter()
                    .find(|g| g.0 == p)
                    .is_none_or(|g| same_settings(g.1[0].run, r)) =>
            {
                p
            }
            _ => config_of(l, r),
        };
        let m = Member {
            label: l,
            run: r,
            points: points_in(r, store, load),
        };
        match groups.iter_mut().find(|g| g.0 == b) {
            Some(g) => g.1.push(m),
            None => groups.push((b, vec![m])),
        }
    }
    groups
}

/// The config a run belongs to: its design, behind the prefix its label
/// got in a merged report (its directory or machine). The prefix counts:
/// two sweeps of one design with different settings are two configs, and
/// one model fitted over both would be neither's.
fn config_of(label: &str, run: &BackendRun) -> String {
    match &run.design {
        Some(design) => {
            let prefix = label.rfind(run.label.as_str()).map_or("", |i| &label[..i]);
            format!("{prefix}{design}")
        }
        // Results from before runs recorded their design.
        None => backend_of(label).to_string(),
    }
}

/// Whether two runs' stores were set up alike (engine and settings, as
/// recorded): what lets `--pool-folders` fit them as one config.
fn same_settings(a: &BackendRun, b: &BackendRun) -> bool {
    a.stores.len() == b.stores.len()
        && a.stores
            .iter()
            .zip(&b.stores)
            .all(|(x, y)| x.store == y.store && x.backend == y.backend && x.config == y.config)
}

/// One run's row of a store's table and what it offers as a candidate.
struct Row<'a> {
    m: &'a Member<'a>,
    /// Its index in the group, to find the held-out run.
    i: usize,
    store: &'a str,
    checked: &'a Checked,
    /// The store is looked up in one step (Stellar's `txdata`).
    one_step: bool,
    /// The run's last batch's share of the store.
    last: Option<&'a StoreBatch>,
    /// The workload's batches that count (after any load).
    load: Option<&'a str>,
    /// The month predicted from the group's fit: first and last batch, total.
    month: Option<(f64, f64, f64)>,
}

impl<'a> Row<'a> {
    fn new(
        m: &'a Member<'a>,
        i: usize,
        store: &'a str,
        checked: &'a Checked,
        ctx: &Ctx<'a>,
    ) -> Self {
        let (opts, shape) = (ctx.opts, ctx.shape);
        let pts = &m.points;
        let txs: f64 = pts.iter().map(|p| p.txs).sum::<f64>().max(1.0);
        let bytes_per_tx = pts.last().map_or(0.0, |p| p.data) / txs;
        let all_per_tx = pts.last().map_or(0.0, |p| p.total) / txs;
        let month = checked.all.map(|f| {
            model::predict_run(
                &f,
                &Scenario {
                    batches: shape.batches,
                    txs: shape.per_batch,
                    bytes: bytes_per_tx * shape.per_batch,
                    total: all_per_tx * shape.per_batch,
                    memory: opts.predict_memory as f64,
                },
            )
        });
        let load = shape.load.as_deref();
        let last = shape::batches(m.run, load).last().and_then(|b| {
            let stores: &'a [StoreBatch] = b.stores;
            stores.iter().find(|s| s.store == store)
        });
        Self {
            m,
            i,
            store,
            checked,
            one_step: shape.bounded.as_deref() == Some(store),
            last,
            load,
            month,
        }
    }

    /// The store's totals: ingestion's, or a run of operations'.
    fn summary(&self) -> Option<&'a ledgerbench_results::StoreSummary> {
        let r: &'a BackendRun = self.m.run;
        r.summary
            .as_ref()
            .and_then(|s| s.stores.get(self.store))
            .or_else(|| r.replay.as_ref()?.summary.as_ref()?.stores.get(self.store))
    }

    /// The thirteen cells of [`COLUMNS`].
    fn cells(&self) -> Vec<String> {
        let (r, pts, store) = (self.m.run, &self.m.points, self.store);
        let sum = self.summary();
        let lookup = r.streaming.as_ref().map(|s| {
            if self.one_step {
                &s.one_step
            } else {
                &s.two_step
            }
        });
        vec![
            self.m.label.to_string(),
            match (pts.first(), pts.last()) {
                (Some(a), Some(b)) => format!("{} -> {}", secs(a.secs), secs(b.secs)),
                _ => "n/a".into(),
            },
            // Stalls come and go with background compaction: the first and
            // last batch alone can miss them.
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
            opt(sum.and_then(|s| s.space_amp), 2),
            lookup.and_then(|l| l.as_ref()).map_or("n/a".into(), |l| {
                format!("{:.0} / {:.0}", l.p50_us, l.p99_us)
            }),
            reads_per_get(r, store),
            self.last
                .and_then(|s| s.engine.pending_compaction_bytes)
                .map_or("n/a".into(), |d| {
                    let rose = debt::rising(self.m.label, r, store, self.load).is_some();
                    format!("{}{}", mib(d), if rose { ", rising" } else { "" })
                }),
            self.checked.all.map_or("n/a".into(), |f| {
                format!(
                    "{:.2e} / {:.2e} / {:.2e}, {:.2}",
                    f.per_tx, f.per_miss, f.per_byte, f.r2
                )
            }),
            match &self.checked.held_out {
                Some(h) if h.member == self.i => format!(
                    "{} / {}, {:.0}%",
                    secs(h.measured),
                    secs(h.predicted),
                    h.error_pct
                ),
                _ => String::new(),
            },
            self.month.map_or("n/a".into(), |(a, b, total)| {
                format!("{} -> {}, {}", secs(a), secs(b), secs(total))
            }),
            verdict_note(r),
        ]
    }

    /// Why the run cannot stand for its config, in words for the report:
    /// it evicts what the store must keep, it did not finish, or nothing
    /// could be predicted from it.
    fn set_aside(&self) -> Option<&'static str> {
        let r = self.m.run;
        if r.stores
            .iter()
            .any(|s| s.store == self.store && s.evicts_oldest())
        {
            Some("it drops its oldest data, and the store must keep every entry")
        } else if r.error.is_some() || r.stopped_early.is_some() {
            Some("a run of it did not finish")
        } else if self.month.is_none() {
            Some("no model could be fitted to its runs")
        } else {
            None
        }
    }

    /// The run as a candidate for the store, once [`Row::set_aside`] found
    /// no reason against it (an engine that evicts its oldest data is no
    /// answer for a store that must keep it); none without a month.
    fn candidate(&self, group: &str, runs: usize, ctx: &Ctx<'_>) -> Option<Candidate> {
        let (r, store) = (self.m.run, self.store);
        let (_, _, total) = self.month?;
        let sum = self.summary();
        let backend = r.stores.iter().find(|s| s.store == store);
        // Months are measured of Stellar's stores only (`--preset month`).
        let measured = ledgerbench_workloads::stellar::STORES
            .iter()
            .find(|s| **s == store)
            .and_then(|s| measured::of(ctx.months, r, s).into_iter().next());
        // The design's own month and a fan-out run can both have measured
        // lookups at the month's count, in different states of the store
        // (the month's compaction debt, the fan-out's settled load): the
        // worse one stands.
        let own = measured.as_ref().and_then(|m| m.lookup_at_month().cloned());
        let lookup = worse(backend.and_then(|b| month_lookup(ctx.fanouts, b)), own);
        Some(Candidate {
            label: group.to_string(),
            month: total,
            wa: sum.and_then(|s| s.write_amp_device.or(s.write_amp_engine)),
            space: sum.and_then(|s| s.space_amp),
            error_pct: self.checked.held_out.as_ref().map(|h| h.error_pct),
            runs,
            batches: 0,
            harness_bound: harness_wait(r).is_some(),
            lookup: Standing::of(
                ctx.bound.is_some() && self.one_step,
                lookup,
                ctx.opts.lookup_bound_us,
            ),
            debt: None,
            measured,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_design_swept_in_two_folders_is_two_configs() {
        let run = |label: &str, design: Option<&str>| {
            let mut r: BackendRun = serde_json::from_value(serde_json::json!({
                "label": label, "stores": [], "batches": []
            }))
            .expect("run");
            r.design = design.map(str::to_string);
            r
        };
        let a = run("rocksdb-partitioned@512MiB", Some("rocksdb-partitioned"));
        assert_eq!(
            config_of("filters-in-heap/rocksdb-partitioned@512MiB", &a),
            "filters-in-heap/rocksdb-partitioned"
        );
        assert_eq!(
            config_of("defaults/rocksdb-partitioned@512MiB", &a),
            "defaults/rocksdb-partitioned"
        );
        // A folder named like the run keeps its whole prefix; one file
        // has none; a repeat's `#N` is not part of the config.
        assert_eq!(
            config_of("rocksdb-partitioned/rocksdb-partitioned@512MiB#2", &a),
            "rocksdb-partitioned/rocksdb-partitioned"
        );
        assert_eq!(
            config_of("rocksdb-partitioned@512MiB", &a),
            "rocksdb-partitioned"
        );
        // Older results: the label without its limit.
        let old = run("manual/rocksdb-leveled@128MiB", None);
        assert_eq!(
            config_of("manual/rocksdb-leveled@128MiB", &old),
            "manual/rocksdb-leveled"
        );
    }
}

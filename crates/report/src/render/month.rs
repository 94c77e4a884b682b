//! A month measured (`--preset month`, any checkpointed run): the cost
//! model fitted on the first batches against every later batch measured,
//! the report's S0 headline beside the run's own compaction growth, the
//! lookups timed during the run, and every stop and resume.

use std::fmt::Write;

use ledgerbench_results::BackendRun;

use super::verdict::points;
use super::{Out, lat_ms};
use crate::model;
use crate::svg::{self, Series};

/// Batches the model is fitted on: what the verdict's outgrow-memory runs
/// measure (18 batches), so the rest of the run tests it out of sample.
pub const FIT_BATCHES: usize = 18;

/// The report's `txdata` compaction seconds per batch of its own config on
/// the c5.4xlarge (S0: 10.7 s at batch 2, 15.8 s at 3, 7 min at 39, 23.5
/// min at 124), as ratios to its batch 3.
const REPORT_C5: &[(f64, f64)] = &[(2.0, 10.7), (3.0, 15.8), (39.0, 420.0), (124.0, 1410.0)];
/// The report's i4i.4xlarge at batch 39 (41 s); its batch 3 is not
/// reported, so it is shown against the c5's.
const REPORT_I4I: &[(f64, f64)] = &[(39.0, 41.0)];

/// One store of one run: measured and predicted seconds per batch.
pub(in crate::render) struct Tested {
    label: String,
    store: &'static str,
    /// (batch, measured, predicted) for every batch after the fitted ones.
    after: Vec<(u32, f64, f64)>,
    /// Seconds of the fitted batches, measured.
    fitted_secs: f64,
}

impl Tested {
    /// The run's seconds in the store, every batch.
    pub(in crate::render) fn measured(&self) -> f64 {
        self.fitted_secs + self.after.iter().map(|a| a.1).sum::<f64>()
    }

    /// The same, the batches after the fitted ones predicted.
    pub(in crate::render) fn predicted(&self) -> f64 {
        self.fitted_secs + self.after.iter().map(|a| a.2).sum::<f64>()
    }
}

/// Whether a run is a checkpointed (month) run.
pub(in crate::render) fn is_month(r: &BackendRun) -> bool {
    r.batches.iter().any(|b| b.checkpoint_secs.is_some())
}

/// The model fitted on the run's first [`FIT_BATCHES`] batches of `store`
/// against every later one; none for a shorter run.
pub(in crate::render) fn tested(
    label: &str,
    r: &BackendRun,
    store: &'static str,
) -> Option<Tested> {
    let pts = points(r, store);
    if pts.len() <= FIT_BATCHES {
        return None;
    }
    let fit = model::fit(&pts[..FIT_BATCHES])?;
    let after = pts[FIT_BATCHES..]
        .iter()
        .zip(&r.batches[FIT_BATCHES..])
        .map(|(p, b)| (b.batch, p.secs, fit.predict(p)))
        .collect();
    Some(Tested {
        label: label.to_string(),
        store,
        after,
        fitted_secs: pts[..FIT_BATCHES].iter().map(|p| p.secs).sum(),
    })
}

/// The section, when any run is a checkpointed one.
pub(super) fn month_section(out: &mut Out, runs: &[(String, &BackendRun)]) {
    let months: Vec<&(String, &BackendRun)> = runs.iter().filter(|(_, r)| is_month(r)).collect();
    if months.is_empty() {
        return;
    }
    out.md.push_str("## The month measured\n\n");
    let tests: Vec<Tested> = months
        .iter()
        .flat_map(|(l, r)| ["ledgers", "txdata", "txindex"].map(|s| tested(l, r, s)))
        .flatten()
        .collect();
    measured_against_predicted(out, &tests);
    s0_chart(out, &months);
    lookups(out, &months);
    stops(out, &months);
}

fn measured_against_predicted(out: &mut Out, tests: &[Tested]) {
    let _ = writeln!(
        out.md,
        "The cost model (`secs = a*txs + b*txs*miss(data/memory) + c*data`) fitted on each run's first {FIT_BATCHES} batches predicts every later batch from that batch's own data size: an out-of-sample test of the model the verdict's predicted months rest on.\n"
    );
    out.md.push_str("| run | store | batches | month measured | month predicted | error | last batch measured | predicted | error |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for t in tests {
        let Some(&(batch, m, p)) = t.after.last() else {
            continue;
        };
        let _ = writeln!(
            out.md,
            "| `{}` | {} | {batch} | {} | {} | {} | {} | {} | {} |",
            t.label,
            t.store,
            secs_text(t.measured()),
            secs_text(t.predicted()),
            error(t.predicted(), t.measured()),
            secs_text(m),
            secs_text(p),
            error(p, m),
        );
    }
    out.md.push('\n');
    let series: Vec<Series> = tests
        .iter()
        .filter(|t| t.store == "txdata")
        .flat_map(|t| {
            [
                Series {
                    marked: false,
                    name: format!("{} measured", t.label),
                    points: t.after.iter().map(|a| (f64::from(a.0), a.1)).collect(),
                },
                Series {
                    marked: false,
                    name: format!("{} predicted", t.label),
                    points: t.after.iter().map(|a| (f64::from(a.0), a.2)).collect(),
                },
            ]
        })
        .collect();
    out.chart(
        "txdata seconds per batch, measured and predicted from the first 18",
        svg::line_chart(
            "txdata per batch: measured, and predicted from the first 18",
            "batch",
            "seconds",
            &series,
        ),
    );
}

/// Seconds as a person reads them: `41.2 s`, `7.0 min`, `1.2 h`.
fn secs_text(s: f64) -> String {
    match s {
        s if s < 10.0 => format!("{s:.2} s"),
        s if s < 120.0 => format!("{s:.1} s"),
        s if s < 7200.0 => format!("{:.1} min", s / 60.0),
        s => format!("{:.2} h", s / 3600.0),
    }
}

/// `predicted` against `measured`, signed percent.
fn error(predicted: f64, measured: f64) -> String {
    if measured <= 0.0 {
        return "n/a".into();
    }
    format!("{:+.0}%", (predicted - measured) / measured * 100.0)
}

/// The report's S0 beside the runs': `txdata` compaction per batch as a
/// ratio to batch 3, for every run that compacts after each batch.
fn s0_chart(out: &mut Out, months: &[&(String, &BackendRun)]) {
    let mut series: Vec<Series> = months
        .iter()
        .filter_map(|(l, r)| {
            let c: Vec<(f64, f64)> = r
                .batches
                .iter()
                .filter_map(|b| {
                    let s = b.stores.iter().find(|s| s.store == "txdata")?;
                    Some((f64::from(b.batch), s.compact_secs?))
                })
                .collect();
            let third = c.iter().find(|(b, _)| *b == 3.0)?.1;
            (third > 0.0).then(|| Series {
                marked: false,
                name: l.clone(),
                points: c.iter().map(|(b, s)| (*b, s / third)).collect(),
            })
        })
        .collect();
    if series.is_empty() {
        return;
    }
    let c5_third = REPORT_C5[1].1;
    series.push(Series {
        name: "the report, c5.4xlarge".into(),
        marked: true,
        points: REPORT_C5.iter().map(|(b, s)| (*b, s / c5_third)).collect(),
    });
    series.push(Series {
        name: "the report, i4i.4xlarge (against the c5's batch 3)".into(),
        marked: true,
        points: REPORT_I4I.iter().map(|(b, s)| (*b, s / c5_third)).collect(),
    });
    out.md.push_str("The report's headline (S0): its own config's `txdata` compaction time per batch grew from 15.8 s at batch 3 to 7 min at batch 39 and 23.5 min at batch 124 on the c5.4xlarge (41 s at 39 on the i4i.4xlarge). Each run that compacts after every batch is shown the same way, as a ratio to its batch 3.\n\n");
    out.chart(
        "S0: txdata compaction per batch, as a ratio to batch 3, with the report's",
        svg::line_chart(
            "txdata compaction per batch / batch 3 (the report's points marked)",
            "batch",
            "ratio to batch 3",
            &series,
        ),
    );
}

/// The lookups timed during each run.
fn lookups(out: &mut Out, months: &[&(String, &BackendRun)]) {
    let rows: Vec<String> = months
        .iter()
        .flat_map(|(l, r)| {
            r.batches.iter().filter_map(move |b| {
                let k = b.lookups.as_ref()?;
                let reads = k
                    .reads
                    .stores
                    .iter()
                    .find(|s| s.store == "txdata")
                    .and_then(|s| Some(s.device_reads? as f64 / s.gets.max(1) as f64));
                Some(format!(
                    "| `{l}` | {} | {} | {} | {} |",
                    b.batch,
                    lat_ms(&k.one_step),
                    lat_ms(&k.two_step),
                    reads.map_or("n/a".into(), |r| format!("{r:.2}")),
                ))
            })
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    out.md.push_str("Lookups timed after a batch, nothing else running (random transactions, each checked):\n\n| run | after batch | one-step (txdata), ms p50 / p99 / max | two-step (txindex, ledgers), ms | txdata device reads per GET |\n|---|---:|---|---|---:|\n");
    for r in rows {
        out.md.push_str(&r);
        out.md.push('\n');
    }
    out.md.push('\n');
}

/// Every stop and resume of each run.
fn stops(out: &mut Out, months: &[&(String, &BackendRun)]) {
    for (l, r) in months {
        for s in &r.resumes {
            let _ = writeln!(
                out.md,
                "- `{l}` stopped after batch {} ({}); resumed at {} by build `{}`.",
                s.after_batch, s.why, s.at, s.commit
            );
        }
    }
    if months.iter().any(|(_, r)| !r.resumes.is_empty()) {
        out.md.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A checkpointed run of `n` batches whose txdata costs `secs(batch)`,
    /// all compaction, under 64 MiB.
    fn run(n: u32, secs: impl Fn(u32) -> f64) -> BackendRun {
        let batches: Vec<serde_json::Value> = (1..=n)
            .map(|b| {
                let store = |name: &str, s: f64| {
                    serde_json::json!({"store": name, "entries": 100, "logical_bytes": 1 << 20,
                        "raw_bytes": 1 << 21, "write_secs": 0.0, "flush_secs": 0.0, "compact_secs": s,
                        "engine": {}, "disk": {"allocated_bytes": 0, "apparent_bytes": 0, "files": 0}})
                };
                serde_json::json!({"label": "x", "batch": b, "first_ledger": b, "ledgers": 1,
                    "txs": 100, "generate_secs": 0.0, "compress_secs": 0.0, "writer_wait_secs": 0.0,
                    "total_secs": secs(b), "checkpoint_secs": 0.01,
                    "stores": [store("ledgers", 0.01), store("txdata", secs(b)), store("txindex", 0.01)]})
            })
            .collect();
        serde_json::from_value(serde_json::json!({"label": "x", "stores": [],
            "batches": batches, "memory_limit_bytes": 64u64 << 20}))
        .expect("a run")
    }

    fn render(runs: &[(String, &BackendRun)]) -> Out {
        let mut out = Out {
            md: String::new(),
            documents: Vec::new(),
            charts: 0,
            svgs: Default::default(),
        };
        month_section(&mut out, runs);
        out
    }

    #[test]
    fn a_cost_the_model_cannot_see_coming_shows_as_the_error_of_its_prediction() {
        // Linear growth with the data: the model (its data term) predicts it.
        let steady = run(60, |b| 0.1 * f64::from(b));
        let out = render(&[("steady".into(), &steady)]);
        let row = out
            .md
            .lines()
            .find(|l| l.contains("| txdata |"))
            .expect("row");
        assert!(row.contains("| 60 |") && row.contains("| +0% |"), "{row}");
        // A cliff after the fitted batches: predicted far under measured.
        let cliff = run(60, |b| if b > 30 { 10.0 } else { 0.1 * f64::from(b) });
        let out = render(&[("cliff".into(), &cliff)]);
        let row = out
            .md
            .lines()
            .find(|l| l.contains("| txdata |"))
            .expect("row");
        assert!(row.contains("| -"), "the month is under-predicted: {row}");
        // The S0 chart and the predicted-measured chart were drawn.
        assert_eq!(out.charts, 2, "{}", out.md);
        assert!(
            out.svgs
                .values()
                .any(|s| s.contains("the report, c5.4xlarge"))
        );
    }

    #[test]
    fn runs_that_were_not_checkpointed_get_no_section() {
        let mut r = run(60, |_| 1.0);
        for b in &mut r.batches {
            b.checkpoint_secs = None;
        }
        assert!(render(&[("x".into(), &r)]).md.is_empty());
    }
}

//! A soak's section: the drift verdict of every engine first (what a soak
//! is for), then one chart per metric, every engine in it, in LittDB's
//! panel order (what was written, device bytes, footprint, latencies,
//! backlog, then the process's operations and memory).

use super::*;
use crate::soak;

/// The soak runs among `docs`, labelled as the report labels them.
fn soaks<'a>(
    docs: &'a [Loaded],
    label: &dyn Fn(&Loaded, &str) -> String,
) -> Vec<(
    String,
    &'a BackendRun,
    &'a ledgerbench_results::workload::OpsConfig,
)> {
    docs.iter()
        .filter_map(|d| match &d.doc {
            Doc::Stellar(r) => match &r.config {
                ledgerbench_results::workload::WorkloadConfig::Ops(o) if o.soak.is_some() => {
                    Some((d, r, o))
                }
                _ => None,
            },
            _ => None,
        })
        .flat_map(|(d, r, o)| r.runs.iter().map(move |run| (label(d, &run.label), run, o)))
        .collect()
}

/// The drift tables and the panel of charts of every soak run in `docs`;
/// nothing when there is none.
pub(super) fn soak_section(
    out: &mut Out,
    docs: &[Loaded],
    label: &dyn Fn(&Loaded, &str) -> String,
) {
    let runs = soaks(docs, label);
    if runs.is_empty() {
        return;
    }
    out.md.push_str("## Soak: drift over time\n\nEach metric sampled once an interval and judged after the warm-up: **flat**, **drifting** (Mann-Kendall with an autocorrelation correction rejects at 1% and the Theil-Sen slope, projected over 14 days, moves the metric past the threshold), **stepped** (a change of level past the threshold, located by PELT, that lasts) or **swinging** (such changes that keep turning back: a sawtooth). \"Smallest drift it could see\": the drift over the run this metric's noise let the test find 19 times in 20; a flat call rules out no smaller drift. Method and trials: the guide's soak chapter.\n\n");
    for (l, run, ops) in &runs {
        out.md.push_str(&soak::run_section("###", l, run, ops));
    }
    // One chart per metric and store in the panel's order, every run in it.
    let mut stores: Vec<String> = Vec::new();
    for (_, run, _) in &runs {
        for s in run
            .replay
            .iter()
            .flat_map(|r| r.segments.first())
            .flat_map(|g| &g.stores)
        {
            if !stores.contains(&s.store) {
                stores.push(s.store.clone());
            }
        }
    }
    for (store, metric, unit) in soak::panel(&stores) {
        let series: Vec<Series> = runs
            .iter()
            .map(|(l, run, _)| Series {
                marked: false,
                name: l.clone(),
                points: soak::series(run, &store, metric),
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        if series.is_empty() {
            continue;
        }
        let what = if store.is_empty() {
            metric.to_string()
        } else {
            format!("{store}: {metric}")
        };
        out.chart(
            &format!("Soak: {what}"),
            svg::line_chart(&what, "minutes", unit, &series),
        );
    }
}

//! Open-loop lookups: latency from when each request was due beside the
//! service time alone, what was shed, and a rate sweep's highest sustained
//! rate.

use std::fmt::Write;

use ledgerbench_results::{BackendRun, Latency, OpenLoopResult};

use crate::table::Table;

fn p50_p99(l: &Option<Latency>) -> String {
    l.as_ref().map_or("n/a".into(), |l| {
        format!("{:.0} / {:.0}", l.p50_us, l.p99_us)
    })
}

/// The open-loop table of labelled runs (one row per rate), or `None` when
/// no run had open-loop lookups.
pub fn open_loop_table(runs: &[(String, &BackendRun)]) -> Option<String> {
    let mut t = Table::new(&[
        "run",
        ">rate /s",
        "arrival",
        ">served /s",
        ">shed",
        ">1-step p50 / p99 us corrected",
        ">(uncorrected)",
        ">2-step p50 / p99 us corrected",
        ">(uncorrected)",
        ">dispatch late p99 us",
        "within bound",
    ]);
    let mut any = false;
    let mut notes = String::new();
    for (label, run) in runs {
        let Some(st) = &run.streaming else { continue };
        let points: Vec<&OpenLoopResult> = st.open_loop.iter().chain(&st.rate_sweep).collect();
        for p in &points {
            any = true;
            t.row([
                label.clone(),
                format!("{:.0}", p.rate_per_sec),
                p.arrival.clone(),
                format!("{:.0}", p.achieved_per_sec),
                p.shed.to_string(),
                p50_p99(&p.one_step),
                p50_p99(&p.one_step_uncorrected),
                p50_p99(&p.two_step),
                p50_p99(&p.two_step_uncorrected),
                p.dispatch_lateness
                    .as_ref()
                    .map_or("n/a".into(), |l| format!("{:.0}", l.p99_us)),
                match (p.sustained, p.p99_bound_us) {
                    (Some(ok), Some(b)) => {
                        format!("{} ({:.1} ms)", if ok { "yes" } else { "no" }, b / 1000.0)
                    }
                    _ => "n/a".into(),
                },
            ]);
        }
        if !st.rate_sweep.is_empty() {
            let _ = writeln!(
                notes,
                "\n{label}: highest rate sustained while ingesting: {}",
                st.max_sustained_rate_per_sec
                    .map_or("none of the rates swept".into(), |r| format!(
                        "{r:.0} lookups/s"
                    ))
            );
        }
    }
    any.then(|| {
        format!(
            "Open-loop lookups: requests arrive on a schedule whether or not earlier ones returned; corrected latency runs from when each was due, uncorrected from when a lookup thread took it (what a closed loop reports). Shed requests found the queue full and were not timed.\n\n{}{notes}",
            t.render()
        )
    })
}

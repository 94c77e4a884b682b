//! The crash-test table: one row per backend x durability level x crash kind.

use ledgerbench_core::CrashKind;
use ledgerbench_results::crash::{CrashResults, CrashSummary};

/// The crash kind as flags and tables spell it.
pub fn kind_name(k: CrashKind) -> &'static str {
    k.name()
}

/// One line of totals, for progress output.
pub fn one_line(s: &CrashSummary, error: Option<&str>) -> String {
    let mut line = format!(
        "{} cycles, {} commits acknowledged, {} lost ({} promised), {} torn, {} corrupt, {} out of order, {} failed opens: {}",
        s.cycles,
        s.acked,
        s.lost,
        s.lost_promised,
        s.torn,
        s.corrupt,
        s.out_of_order,
        s.failed_opens,
        if s.promise_kept {
            "level held"
        } else {
            "LEVEL BROKEN"
        }
    );
    if let Some(e) = error {
        line.push_str(&format!("; stopped: {e}"));
    }
    line
}

/// The crash table: one row per backend x level x crash kind.
pub fn crash_table(r: &CrashResults) -> String {
    let ms = |s: Option<f64>| s.map_or("n/a".to_string(), |v| format!("{:.0}", v * 1e3));
    let mut t = crate::table::Table::new(&[
        "backend",
        "durability",
        "crash",
        ">cycles",
        ">commits acked",
        ">lost",
        ">lost (promised)",
        ">torn",
        ">corrupt",
        ">out of order",
        ">failed opens",
        ">in compaction",
        "recovery p50 / p99 ms",
        "level held",
    ]);
    for run in &r.runs {
        // Summed again from the cycles: the stored summary may predate a
        // change of definition.
        let s = &CrashSummary::of(&run.cycles, run.durability, run.kind);
        let held = match (s.promise_kept, &run.error) {
            (_, Some(_)) => "stopped (see results)",
            (true, None) => "yes",
            (false, None) => "**no**",
        };
        t.row([
            run.backend.clone(),
            run.durability.to_string(),
            kind_name(run.kind).to_string(),
            s.cycles.to_string(),
            s.acked.to_string(),
            s.lost.to_string(),
            s.lost_promised.to_string(),
            s.torn.to_string(),
            s.corrupt.to_string(),
            s.out_of_order.to_string(),
            s.failed_opens.to_string(),
            s.during_compaction
                .map_or("n/a".to_string(), |n| n.to_string()),
            format!("{} / {}", ms(s.recovery_p50_secs), ms(s.recovery_p99_secs)),
            held.to_string(),
        ]);
    }
    // Fourteen columns told as two tables: whether the level held, then
    // how what was not kept broke.
    format!(
        "# Crash test: {} shape, up to {} batches a cycle, seed {}\n\nWhat each level kept:\n\n{}\nHow the rest broke, and recovery:\n\n{}",
        r.shape.name,
        r.batches_per_cycle,
        r.header.seed,
        t.columns(&[0, 1, 2, 3, 4, 5, 6, 13]).render(),
        t.columns(&[0, 1, 2, 7, 8, 9, 10, 11, 12]).render()
    )
}

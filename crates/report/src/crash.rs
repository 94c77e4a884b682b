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
        "first read p50 / p99 ms",
        ">recovery read MiB p50",
        ">commits/s p50",
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
            format!(
                "{} / {}",
                ms(s.first_read_p50_secs),
                ms(s.first_read_p99_secs)
            ),
            s.recovery_read_p50_bytes
                .map_or("n/a".into(), |b| format!("{:.1}", b / f64::from(1 << 20))),
            s.commits_per_sec_p50
                .map_or("n/a".into(), |r| format!("{r:.0}")),
        ]);
    }
    // Seventeen columns told as two tables: whether the level held, then
    // how what was not kept broke, and recovery.
    let mut out = format!(
        "# Crash test: {} shape, up to {} batches a cycle, seed {}\n\n{}\n\nWhat each level kept:\n\n{}\nHow the rest broke, and recovery (from a cold page cache: open, first read, device bytes read until it):\n\n{}",
        r.shape.name,
        r.batches_per_cycle,
        r.header.seed,
        shape_line(r),
        t.columns(&[0, 1, 2, 3, 4, 16, 5, 6, 13]).render(),
        t.columns(&[0, 1, 2, 7, 8, 9, 10, 11, 12, 14, 15]).render()
    );
    let overhead = fs_overhead(r);
    if !overhead.is_empty() {
        out.push_str("\nThe crash filesystem's cost (the writer's commits/s, median of cycles, same run):\n\n");
        for l in overhead {
            out.push_str(&format!("- {l}\n"));
        }
    }
    out
}

/// What each batch wrote and how much of it each check read.
fn shape_line(r: &CrashResults) -> String {
    let stores: Vec<String> = r
        .shape
        .stores
        .iter()
        .map(|s| {
            format!(
                "`{}` {} keys x {} B{}",
                s.name,
                s.keys_per_batch,
                s.value_bytes,
                if s.mixed {
                    ", and overwrites, deletes and a range delete of keys of the three batches before"
                } else {
                    ", puts only"
                }
            )
        })
        .collect();
    format!(
        "Each batch: {}. Each check reads every batch from {} below the cycle's first write up, and {} sampled at random below that; the last cycle's check reads every batch.",
        stores.join("; "),
        r.check_window,
        r.check_samples
    )
}

/// Per backend and level run both under `kill` (no layer) and on the crash
/// filesystem: the writer's commit rate with and without it.
fn fs_overhead(r: &CrashResults) -> Vec<String> {
    let rate = |run: &ledgerbench_results::crash::CrashRun| {
        CrashSummary::of(&run.cycles, run.durability, run.kind).commits_per_sec_p50
    };
    let mut out = Vec::new();
    for base in r.runs.iter().filter(|x| x.kind == CrashKind::Kill) {
        let Some(without) = rate(base) else { continue };
        let on: Vec<String> = r
            .runs
            .iter()
            .filter(|x| {
                x.kind.on_crash_fs() && x.backend == base.backend && x.durability == base.durability
            })
            .filter_map(|x| {
                let with = rate(x)?;
                Some(format!(
                    "{:.0} under {} ({:+.0}%)",
                    with,
                    x.kind.name(),
                    (with / without - 1.0) * 100.0
                ))
            })
            .collect();
        if !on.is_empty() {
            out.push(format!(
                "{} at {}: {without:.0} without the layer (kill), {}",
                base.backend,
                base.durability,
                on.join(", ")
            ));
        }
    }
    out
}

//! The durability matrix of crash results, as the README tables it: one row
//! per backend and level, one column per crash kind, each cell held or
//! broken with its counts. `ledgerbench report --summary` prints it for
//! crash results, so the README's table is re-derived from committed files.

use std::collections::BTreeSet;

use ledgerbench_core::{CrashKind, Durability};
use ledgerbench_results::crash::{CrashResults, CrashRun, CrashSummary};

/// Thousands separated, as the README writes counts.
fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// One cell: whether the level held, with what was lost of what was
/// acknowledged, and how it broke.
fn cell(run: &CrashRun) -> String {
    let s = CrashSummary::of(&run.cycles, run.durability, run.kind);
    let lost = format!("{} of {} lost", count(s.lost), count(s.acked));
    let mut how = Vec::new();
    if s.failed_opens > 0 {
        how.push(format!("{} of {} opens failed", s.failed_opens, s.cycles));
    }
    for (n, what) in [
        (s.torn, "torn"),
        (s.corrupt, "corrupt"),
        (s.out_of_order, "out of order"),
    ] {
        if n > 0 {
            how.push(format!("{} {what}", count(n)));
        }
    }
    let how = if how.is_empty() {
        String::new()
    } else {
        format!(", {}", how.join(", "))
    };
    // A cell stopped early is shown with what it ran: its cycles say so.
    let short = match &run.error {
        Some(_) => format!(" (stopped after {} cycles)", s.cycles),
        None => String::new(),
    };
    if s.promise_kept {
        format!("held: {lost}{how}{short}")
    } else {
        format!("**broken**: {lost}{how}{short}")
    }
}

/// The matrix of every run in `results`, in the order backends and levels
/// first appear; kinds in their canonical order.
pub fn matrix(results: &[&CrashResults]) -> String {
    let runs: Vec<&CrashRun> = results.iter().flat_map(|r| &r.runs).collect();
    let mut rows: Vec<(&str, Durability)> = Vec::new();
    for r in &runs {
        if !rows.contains(&(r.backend.as_str(), r.durability)) {
            rows.push((r.backend.as_str(), r.durability));
        }
    }
    let kinds: Vec<CrashKind> = CrashKind::ALL
        .into_iter()
        .filter(|k| runs.iter().any(|r| r.kind == *k))
        .collect();
    let mut t = crate::table::Table::new(
        &std::iter::once("engine")
            .chain(std::iter::once("level"))
            .chain(kinds.iter().map(|k| k.name()))
            .collect::<Vec<_>>(),
    );
    for (backend, level) in &rows {
        let mut row = vec![backend.to_string(), level.to_string()];
        for k in &kinds {
            // The last run of a cell wins: a cell run again replaces it.
            let run = runs
                .iter()
                .rev()
                .find(|r| r.backend == *backend && r.durability == *level && r.kind == *k);
            row.push(run.map_or("not run".into(), |r| cell(r)));
        }
        t.row(row);
    }
    let set = |f: &dyn Fn(&CrashResults) -> String| -> String {
        let v: BTreeSet<String> = results.iter().map(|r| f(r)).collect();
        v.into_iter().collect::<Vec<_>>().join(", ")
    };
    let cycles: BTreeSet<u32> = runs.iter().map(|r| r.cycles.len() as u32).collect();
    let cycles = cycles
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{} cells; cycles per cell: {cycles}; up to {} batches a cycle; seed {}; shape {}; commits {}.\n\n{}",
        runs.len(),
        set(&|r| r.batches_per_cycle.to_string()),
        set(&|r| r.header.seed.to_string()),
        set(&|r| r.shape.name.clone()),
        set(&|r| format!("`{}`", r.header.env.git_commit)),
        t.render()
    )
}

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
    let verdict = if s.promise_kept { "held" } else { "**broken**" };
    match &run.error {
        // Stopped early: what it ran is no verdict on the cell.
        Some(_) if s.promise_kept => format!("stopped after {} cycles: {lost}{how}", s.cycles),
        Some(_) => format!("{verdict} (stopped after {} cycles): {lost}{how}", s.cycles),
        None => format!("{verdict}: {lost}{how}"),
    }
}

/// The matrix of every run in `results`, in the order backends and levels
/// first appear; kinds in their canonical order.
pub fn matrix(results: &[&CrashResults]) -> String {
    let runs: Vec<(&CrashResults, &CrashRun)> = results
        .iter()
        .flat_map(|r| r.runs.iter().map(move |run| (*r, run)))
        .collect();
    let mut rows: Vec<(&str, Durability)> = Vec::new();
    for (_, r) in &runs {
        if !rows.contains(&(r.backend.as_str(), r.durability)) {
            rows.push((r.backend.as_str(), r.durability));
        }
    }
    let kinds: Vec<CrashKind> = CrashKind::ALL
        .into_iter()
        .filter(|k| runs.iter().any(|(_, r)| r.kind == *k))
        .collect();
    let mut t = crate::table::Table::new(
        &["engine", "level"]
            .into_iter()
            .chain(kinds.iter().map(|k| k.name()))
            .collect::<Vec<_>>(),
    );
    // The runs shown: per cell the last given (a cell run again, listed
    // after the first, replaces it).
    let mut shown: Vec<(&CrashResults, &CrashRun)> = Vec::new();
    for (backend, level) in &rows {
        let mut row = vec![backend.to_string(), level.to_string()];
        for k in &kinds {
            let run = runs
                .iter()
                .rev()
                .find(|(_, r)| r.backend == *backend && r.durability == *level && r.kind == *k);
            row.push(run.map_or("not run".into(), |&(_, r)| cell(r)));
            shown.extend(run);
        }
        t.row(row);
    }
    let set = |f: &dyn Fn(&CrashResults, &CrashRun) -> String| -> String {
        let v: BTreeSet<String> = shown.iter().map(|(r, run)| f(r, run)).collect();
        v.into_iter().collect::<Vec<_>>().join(", ")
    };
    format!(
        "{} cells; cycles per cell: {}; up to {} batches a cycle; seed {}; shape {}; commits {}.\n\n{}",
        shown.len(),
        set(&|_, run| run.cycles.len().to_string()),
        set(&|r, _| r.batches_per_cycle.to_string()),
        set(&|r, _| r.header.seed.to_string()),
        set(&|r, _| r.shape.name.clone()),
        set(&|r, _| format!("`{}`", r.header.env.git_commit)),
        t.render()
    )
}

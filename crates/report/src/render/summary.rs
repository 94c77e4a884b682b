//! What a run prints when it ends: the report's own tables of its results,
//! text only, so the terminal and the report never disagree.

use super::*;

/// The summary a Stellar or replayed run prints at its end: the tables the
/// report renders for these results (per run, per store, per batch, or the
/// replayed operations), without charts or files.
pub fn run_summary(r: &RunResult) -> String {
    let label = |b: &BackendRun| match b.repeat {
        0 => b.label.clone(),
        n => format!("{}#{}", b.label, n + 1),
    };
    let runs: Vec<(String, &BackendRun)> = r.runs.iter().map(|b| (label(b), b)).collect();
    let (replays, ingest): (Vec<_>, Vec<_>) =
        runs.into_iter().partition(|(_, b)| b.replay.is_some());
    let mut md = format!(
        "# {}: seed {}{}\n\n",
        r.header.workload,
        r.header.seed,
        r.preset
            .as_ref()
            .map_or(String::new(), |p| format!(", preset {p}"))
    );
    if !ingest.is_empty() {
        stellar::stellar_tables(&mut md, &ingest);
    }
    if !replays.is_empty() {
        md.push_str(&replay_tables(&replays));
    }
    md
}

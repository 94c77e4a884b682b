//! What a run prints when it ends: the report's own tables of its results,
//! text only, so the terminal and the report never disagree.

use super::*;

/// A soak's drift verdict per run, first: what a soak is for.
fn soak_tables(
    runs: &[(String, &BackendRun)],
    ops: &ledgerbench_results::workload::OpsConfig,
) -> String {
    runs.iter()
        .map(|(label, b)| {
            crate::soak::run_section("##", &format!("Drift over the soak: {label}"), b, ops)
        })
        .collect()
}

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
    if let ledgerbench_results::workload::WorkloadConfig::Ops(ops) = &r.config {
        md.push_str(&soak_tables(&replays, ops));
    }
    if !ingest.is_empty() {
        stellar::stellar_tables(&mut md, &ingest);
    }
    if !replays.is_empty() {
        md.push_str(&replay_tables(&replays));
    }
    md
}

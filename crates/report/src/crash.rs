//! The crash-test table: one row per backend x durability level x crash kind.

use ledgerbench_core::CrashKind;
use ledgerbench_results::crash::{CrashResults, CrashRun, CrashSummary, Cycle};

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

/// Every figure of the crash table, one row per backend x level x crash
/// kind, from the sums of each run's cycles.
fn crash_rows(r: &CrashResults, sums: &[CrashSummary]) -> crate::table::Table {
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
    for (run, s) in r.runs.iter().zip(sums) {
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
    t
}

/// The crash table: one row per backend x level x crash kind.
pub fn crash_table(r: &CrashResults) -> String {
    // Summed again from the cycles: the stored summary may predate a
    // change of definition.
    let sums: Vec<CrashSummary> = r
        .runs
        .iter()
        .map(|run| CrashSummary::of(&run.cycles, run.durability, run.kind))
        .collect();
    let t = crash_rows(r, &sums);
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
    let broken = broken_promises(r);
    if !broken.is_empty() {
        out.push_str("\nPromises broken, each with a run of its cell alone that replays the same crash schedule up to the first broken cycle (where a kill or cut lands within a commit is up to timing, so a replay may need more cycles):\n\n");
        for l in broken {
            out.push_str(&format!("- {l}\n"));
        }
    }
    let overhead = fs_overhead(r, &sums);
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

/// Why cycle `c` of `run` broke its level's promise, if it did.
fn broke(run: &CrashRun, c: &Cycle) -> Option<String> {
    if !c.broke_promise(run.durability, run.kind) {
        return None;
    }
    let lost = c.lost_batches();
    let mut why = Vec::new();
    if lost > 0 && !run.durability.may_lose(run.kind) {
        why.push(format!("{lost} acknowledged batches lost"));
    }
    if !run.durability.may_corrupt(run.kind) {
        let (torn, corrupt, late) = c.damage();
        for (n, what) in [(torn, "torn"), (corrupt, "corrupt"), (late, "out of order")] {
            if n > 0 {
                why.push(format!("{n} {what}"));
            }
        }
        if let Some(e) = &c.open_error {
            why.push(format!("the store did not open (`{}`)", engine_words(e)));
        }
    }
    Some(why.join(", "))
}

/// An open error in the engine's own words: what follows the last part
/// naming a path (the harness's and the engine's prefixes), or the last
/// two parts when the message ends in a path.
fn engine_words(e: &str) -> String {
    let parts: Vec<&str> = e.split(": ").collect();
    let from = parts
        .iter()
        .rposition(|p| p.contains('/'))
        .map_or(0, |i| i + 1);
    let from = if from < parts.len() {
        from
    } else {
        parts.len().saturating_sub(2)
    };
    parts[from..].join(": ")
}

/// Per broken run: its first broken cycle, why, and the command that
/// replays the cell alone up to it.
fn broken_promises(r: &CrashResults) -> Vec<String> {
    r.runs
        .iter()
        .filter_map(|run| {
            let (c, why) = run.cycles.iter().find_map(|c| Some((c, broke(run, c)?)))?;
            let mut cmd = format!(
                "ledgerbench run crash --backends {} --durability {} --kinds {} --seed {} --cycles {} --batches-per-cycle {}",
                run.backend,
                run.durability,
                run.kind.name(),
                r.header.seed,
                c.cycle + 1,
                r.batches_per_cycle
            );
            if r.shape.name != "generic" {
                cmd.push_str(&format!(" --shape {}", r.shape.name));
            }
            if let Some(b) = run.memory_limit_bytes {
                cmd.push_str(&format!(" --memory-limit {}MiB", b >> 20));
            }
            let names = c
                .fs_crash
                .as_ref()
                .filter(|f| !f.lost_names.is_empty())
                .map_or(String::new(), |f| {
                    format!("; the crash undid {}", f.lost_names.join(", "))
                });
            Some(format!(
                "{} at {} under {}: cycle {}: {why}{names}. `{cmd}`",
                run.backend,
                run.durability,
                run.kind.name(),
                c.cycle
            ))
        })
        .collect()
}

/// Per backend and level run both under `kill` (no layer) and on the crash
/// filesystem: the writer's commit rate with and without it (`sums` are
/// the runs' summaries, in order).
fn fs_overhead(r: &CrashResults, sums: &[CrashSummary]) -> Vec<String> {
    let runs: Vec<(&CrashRun, Option<f64>)> = r
        .runs
        .iter()
        .zip(sums.iter().map(|s| s.commits_per_sec_p50))
        .collect();
    let mut out = Vec::new();
    for &(base, without) in runs.iter().filter(|(x, _)| x.kind == CrashKind::Kill) {
        let Some(without) = without else { continue };
        let on: Vec<String> = runs
            .iter()
            .filter(|(x, _)| {
                x.kind.on_crash_fs() && x.backend == base.backend && x.durability == base.durability
            })
            .filter_map(|&(x, with)| {
                let with = with?;
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

#[cfg(test)]
mod tests {
    use ledgerbench_core::Durability;
    use ledgerbench_results::RunHeader;
    use ledgerbench_results::crash::{CrashShape, FsCrash, Recovered};

    use super::*;

    fn cycle(n: u32, acked: u64, recovered: u64, rate: f64) -> Cycle {
        Cycle {
            cycle: n,
            acked: vec![acked],
            new_acks: acked,
            recovery_secs: Some(0.01),
            stores: vec![Recovered {
                recovered,
                ..Recovered::default()
            }],
            commits_per_sec: Some(rate),
            ..Cycle::default()
        }
    }

    fn run(kind: CrashKind, cycles: Vec<Cycle>) -> CrashRun {
        CrashRun {
            backend: "goleveldb".into(),
            durability: Durability::Power,
            kind,
            stores: Vec::new(),
            memory_limit_bytes: None,
            summary: CrashSummary::of(&cycles, Durability::Power, kind),
            cycles,
            error: None,
        }
    }

    #[test]
    fn a_broken_promise_names_its_cycle_and_the_command_that_replays_it() {
        let mut lost = cycle(1, 10, 7, 80.0);
        lost.fs_crash = Some(FsCrash {
            lost_names: vec!["create kv/db/000002.log".into()],
            ..FsCrash::default()
        });
        let r = CrashResults {
            header: RunHeader {
                schema_version: 1,
                ledgerbench_version: "test".into(),
                workload: "crash".into(),
                seed: 42,
                started_at: "2026-11-24T00:00:00Z".into(),
                command: "ledgerbench run crash".into(),
                env: Default::default(),
                durability: None,
                cell: None,
                scheduler: None,
            },
            shape: CrashShape::generic(),
            batches_per_cycle: 30,
            runs: vec![
                run(CrashKind::Kill, vec![cycle(0, 5, 5, 100.0)]),
                run(CrashKind::Lose, vec![cycle(0, 5, 5, 80.0), lost]),
            ],
            summary_rule: ledgerbench_results::crash::SUMMARY_RULE,
            interrupted: None,
            check_window: 64,
            check_samples: 32,
        };
        let t = crash_table(&r);
        assert!(
            t.contains("goleveldb at power under lose: cycle 1: 3 acknowledged batches lost; the crash undid create kv/db/000002.log. `ledgerbench run crash --backends goleveldb --durability power --kinds lose --seed 42 --cycles 2 --batches-per-cycle 30`"),
            "{t}"
        );
        assert!(!t.contains("under kill: cycle"), "kill held: {t}");
        // The layer's cost: 80 commits/s on it against 100 without.
        assert!(
            t.contains("goleveldb at power: 100 without the layer (kill), 80 under lose (-20%)"),
            "{t}"
        );
        assert!(t.contains("overwrites, deletes and a range delete"), "{t}");
    }

    #[test]
    fn an_open_error_is_quoted_in_the_engines_words() {
        let badger = "opening store `kv` in /d/backing/kv: badger: open failed on /d/backing/kv/db: open /d/backing/kv/db: while opening memtables err: while opening fid: 1 err: Create a new file";
        assert_eq!(
            engine_words(badger),
            "while opening memtables err: while opening fid: 1 err: Create a new file"
        );
        let leveldb = "opening store `kv` in /d/kv: goleveldb: open failed on /d/kv/db: leveldb: manifest corrupted (field 'comparer'): missing [file=MANIFEST-000002]";
        assert_eq!(
            engine_words(leveldb),
            "leveldb: manifest corrupted (field 'comparer'): missing [file=MANIFEST-000002]"
        );
        // A message ending in a path keeps its last two parts.
        assert_eq!(engine_words("x: open /d/kv/LOCK"), "x: open /d/kv/LOCK");
    }
}

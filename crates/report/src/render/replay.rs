//! Replayed and generated operation streams: one row per run, then per
//! run and store, and a chart of time per segment.

use std::fmt::Write;

use super::stellar::phases_table;
use super::*;

pub(super) fn replay_section(out: &mut Out, runs: &[(String, &BackendRun)]) {
    out.md.push_str("## Replayed operations\n\nEach run replays the same operations (a trace, or a generator's stream); a segment ends at each mark of the stream (a batch).\n\n");
    out.md.push_str(&replay_tables(runs));
    out.md.push('\n');
    phases_table(&mut out.md, runs);
    let series: Vec<Series> = runs
        .iter()
        .map(|(l, r)| Series {
            marked: false,
            name: l.clone(),
            points: r
                .replay
                .iter()
                .flat_map(|x| x.segments.iter())
                .map(|g| (f64::from(g.segment), g.total_secs))
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    out.chart(
        "Replay: time per segment",
        svg::line_chart("Time per segment", "segment", "seconds", &series),
    );
    let wa: Vec<Series> = runs
        .iter()
        .flat_map(|(l, r)| {
            [("engine", false), ("device", true)].map(|(what, device)| Series {
                marked: false,
                name: format!("{l} ({what})"),
                points: write_amp_curve(r, device),
            })
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    if !wa.is_empty() {
        out.chart(
            "Replay: write amplification against data written",
            svg::line_chart(
                "Write amplification so far",
                "GiB written by the workload",
                "bytes written / bytes given",
                &wa,
            ),
        );
    }
    super::threads::threads_section(out, runs);
}

/// After each segment: the workload's bytes so far (GiB, every store) and
/// the engine's (or the device's) bytes written over them; nothing when a
/// segment lacks the figure, so a curve never mixes measured and missing.
fn write_amp_curve(r: &BackendRun, device: bool) -> Vec<(f64, f64)> {
    let (mut given, mut written) = (0u64, 0u64);
    let mut points = Vec::new();
    for seg in r.replay.iter().flat_map(|x| x.segments.iter()) {
        for s in &seg.stores {
            let w = if device {
                s.device_write_bytes
            } else {
                s.engine_write_bytes
            };
            let Some(w) = w else { return Vec::new() };
            given += s.logical_bytes;
            written += w;
        }
        if given > 0 {
            points.push((
                given as f64 / f64::from(1u32 << 30),
                written as f64 / given as f64,
            ));
        }
    }
    points
}

/// Deletes, and range deletes with how the stores carried them out (a
/// tombstone each, or a delete per key) where the run had any.
fn deletes(x: &ledgerbench_results::OpsSummary, run: &BackendRun) -> String {
    if x.range_deletes == 0 {
        return x.deletes.to_string();
    }
    let mut how: Vec<&str> = run
        .stores
        .iter()
        .map(|s| s.range_delete.map_or("not recorded", |r| r.name()))
        .collect();
    how.sort_unstable();
    how.dedup();
    format!(
        "{} + {} ranges ({})",
        x.deletes,
        x.range_deletes,
        how.join(", ")
    )
}

/// Which runs were given their initial state (`--state-cache`): they
/// opened a cold copy of it and have no load segment.
fn given_states(runs: &[(String, &BackendRun)], s: &mut String) {
    let given: Vec<String> = runs
        .iter()
        .filter_map(|(label, r)| {
            let g = r.replay.as_ref()?.initial_state.as_ref()?;
            Some(format!(
                "{label} (loaded {} in {:.1} s at {}, {} MiB)",
                if g.made_here {
                    "by this run"
                } else {
                    "earlier"
                },
                g.load_secs,
                g.made_at,
                g.bytes >> 20
            ))
        })
        .collect();
    if !given.is_empty() {
        let _ = writeln!(
            s,
            "\nGiven their initial state from `--state-cache` (loaded once, copied onto the run's own stores and opened cold, as a restarted node; no load segment): {}.",
            given.join("; ")
        );
    }
}

/// Tables of replayed runs: one row per run, then one per run and store.
pub fn replay_tables(runs: &[(String, &BackendRun)]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| run | segments | puts | deletes | gets | scans | mismatches | wall s | ops/s | WA engine | WA device | space amp | stall s | drift: segment time / RSS, last vs first quarter | error |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"
    );
    for (label, run) in runs {
        let sum = run.replay.as_ref().and_then(|x| x.summary.as_ref());
        let _ = writeln!(
            s,
            "| {label} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            sum.map_or("n/a".into(), |x| x.segments.to_string()),
            sum.map_or("n/a".into(), |x| x.puts.to_string()),
            sum.map_or("n/a".into(), |x| deletes(x, run)),
            sum.map_or("n/a".into(), |x| x.gets.to_string()),
            sum.map_or("n/a".into(), |x| x.scans.to_string()),
            sum.map_or("n/a".into(), |x| x.mismatches.to_string()),
            opt(sum.map(|x| x.wall_secs), 1),
            opt(sum.map(|x| x.ops_per_sec), 0),
            opt(sum.and_then(|x| x.total.write_amp_engine), 2),
            opt(sum.and_then(|x| x.total.write_amp_device), 2),
            opt(sum.and_then(|x| x.total.space_amp), 2),
            opt(sum.and_then(|x| x.total.stall_secs), 2),
            sum.and_then(|x| x.drift.as_ref())
                .map_or("n/a".into(), |d| format!(
                    "{:.2}x / {}{}",
                    d.segment_secs_ratio,
                    d.rss_first
                        .zip(d.rss_last)
                        .map_or("n/a".into(), |(a, b)| format!(
                            "{:.2}x",
                            b as f64 / a.max(1) as f64
                        )),
                    if d.drifted { " (drifts)" } else { "" }
                )),
            run.error.as_deref().unwrap_or("")
        );
    }
    run_phase_table(&mut s, runs);
    store_table(&mut s, runs);
    content_table(&mut s, runs);
    given_states(runs, &mut s);
    s
}

/// What each run's reads found and what it left in its stores: the same
/// on every engine that ran the same stream (found gets may differ between
/// thread counts, as threads interleave reads and writes differently).
fn content_table(s: &mut String, runs: &[(String, &BackendRun)]) {
    let rows: Vec<(&String, &ledgerbench_results::OpsSummary)> = runs
        .iter()
        .filter_map(|(l, r)| Some((l, r.replay.as_ref()?.summary.as_ref()?)))
        .collect();
    let Some((first, reference)) = rows
        .iter()
        .find(|(_, x)| x.stores.values().any(|st| st.content_sha256.is_some()))
    else {
        return;
    };
    let _ = writeln!(
        s,
        "\nWhat each run found and left: gets that found their key, a digest of the values returned by gets the trace does not check (n/a where it checks every get), entries its scans visited, and each store's entries and content digest at the end (SHA-256 over keys and values in key order, first 16 hex digits), compared with `{first}`.\n\n| run | gets found | values found (digest) | entries scanned | store | entries at the end | content SHA-256 | same as {first} |\n|---|---:|---|---:|---|---:|---|---|"
    );
    let num = |v: Option<u64>| v.map_or("n/a".into(), |n| n.to_string());
    for (label, x) in &rows {
        for (store, st) in &x.stores {
            let same = match (
                &st.content_sha256,
                reference
                    .stores
                    .get(store)
                    .and_then(|r| r.content_sha256.as_ref()),
            ) {
                (Some(a), Some(b)) if a == b => "yes",
                (Some(_), Some(_)) => "**no**",
                _ => "n/a",
            };
            let _ = writeln!(
                s,
                "| {label} | {} | {} | {} | {store} | {} | {} | {same} |",
                num(x.gets_found),
                x.gets_digest.as_deref().unwrap_or("n/a"),
                num(x.scanned),
                num(st.final_entries),
                st.content_sha256
                    .as_deref()
                    .map_or("n/a", |h| &h[..h.len().min(16)]),
            );
        }
    }
}

/// After the load: the run phase's throughput and latency per run.
fn run_phase_table(s: &mut String, runs: &[(String, &BackendRun)]) {
    let _ = writeln!(
        s,
        "\nAfter the load: the run phase alone (segments after a `load` or `genesis` mark), the part of its time spent producing the operations (reading the trace or running the generator, inside the throughput's time), and latency in microseconds (p50 / p99; commits include the load's; a paced run's gets also from when each was due, `get corrected`).\n\n| run | load s | run-phase ops | run-phase ops/s | of which producing ops, s | get | get corrected | scan | commit |\n|---|---:|---:|---:|---:|---|---|---|---|"
    );
    for (label, run) in runs {
        let Some(rp) = &run.replay else { continue };
        let (loaded, rest) = run_phase(rp);
        let (ops, secs) = rest
            .iter()
            .fold((0u64, 0f64), |(o, t), g| (o + g.ops, t + g.total_secs));
        // Absent when any segment predates the measurement, and for a run
        // that ended before its run phase (an empty sum would print -0.00).
        let source: Option<f64> = (!rest.is_empty())
            .then(|| rest.iter().map(|g| g.source_secs).sum())
            .flatten();
        let lat = |f: fn(&ledgerbench_results::OpLatency) -> &Option<Latency>| {
            rp.summary
                .as_ref()
                .map(|x| {
                    x.stores
                        .values()
                        .filter_map(|st| f(&st.latency).as_ref())
                        .map(|l| format!("{:.0} / {:.0}", l.p50_us, l.p99_us))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "n/a".into())
        };
        let _ = writeln!(
            s,
            "| {label} | {} | {} | {} | {} | {} | {} | {} | {} |",
            loaded.map_or("n/a".into(), |g| format!("{:.1}", g.total_secs)),
            if rest.is_empty() {
                "n/a".to_string()
            } else {
                ops.to_string()
            },
            if secs > 0.0 {
                format!("{:.0}", ops as f64 / secs)
            } else {
                "n/a".into()
            },
            opt(source, 2),
            lat(|l| &l.get),
            lat(|l| &l.get_corrected),
            lat(|l| &l.scan),
            lat(|l| &l.commit),
        );
    }
}

/// A replay's load segment (the first, when it ends at a `load` or
/// `genesis` mark) and the run phase's segments after it.
pub(super) fn run_phase(
    rp: &ledgerbench_results::ReplayResult,
) -> (
    Option<&ledgerbench_results::SegmentRecord>,
    &[ledgerbench_results::SegmentRecord],
) {
    let segs = &rp.segments;
    let loaded = segs
        .first()
        .filter(|g| g.mark == "load" || g.mark == "genesis");
    (loaded, &segs[usize::from(loaded.is_some())..])
}

/// The run phase's operations per second, when it took any time.
pub(super) fn run_phase_rate(rp: &ledgerbench_results::ReplayResult) -> Option<f64> {
    let (ops, secs) = run_phase(rp)
        .1
        .iter()
        .fold((0u64, 0f64), |(o, t), g| (o + g.ops, t + g.total_secs));
    (secs > 0.0).then(|| ops as f64 / secs)
}

/// Per run and store: puts (every key written, overwrites included, not the
/// keys live at the end), sizes, amplification, compaction, commits.
fn store_table(s: &mut String, runs: &[(String, &BackendRun)]) {
    let _ = writeln!(
        s,
        "\n| run | store | puts | logical MiB | disk MiB | space amp | WA engine | WA device | compaction s | commit p99 ms |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for (label, run) in runs {
        let Some(sum) = run.replay.as_ref().and_then(|x| x.summary.as_ref()) else {
            continue;
        };
        for (name, st) in &sum.stores {
            let entries: u64 = run
                .replay
                .iter()
                .flat_map(|x| x.segments.iter())
                .flat_map(|g| g.stores.iter().filter(|b| &b.store == name))
                .map(|b| b.entries)
                .sum();
            let _ = writeln!(
                s,
                "| {label} | {name} | {entries} | {} | {} | {} | {} | {} | {} | {} |",
                mib(st.logical_bytes),
                mib(st.disk_allocated_bytes),
                opt(st.space_amp, 2),
                opt(st.write_amp_engine, 2),
                opt(st.write_amp_device, 2),
                opt(st.compact_secs, 2),
                opt(st.latency.commit.as_ref().map(|l| l.p99_us / 1e3), 2),
            );
        }
    }
}

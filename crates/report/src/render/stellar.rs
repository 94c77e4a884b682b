//! Stellar and replay sections: per-run tables, charts and CSV series.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::*;
use crate::table::Table;

pub(super) fn stellar_section(
    out: &mut Out,
    runs: &[(String, &BackendRun)],
) -> Result<(), ReportError> {
    stellar_tables(&mut out.md, runs);
    stellar_charts(out, runs);
    csv(out, runs)
}

/// The tables of ingestion runs: per run, per store, per phase, lookups
/// while streaming and per batch. The report and the summary a run prints
/// at its end both use them.
pub(super) fn stellar_tables(md: &mut String, runs: &[(String, &BackendRun)]) {
    md.push_str("## Ingestion\n\n");
    let mut t = Table::new(&[
        "run",
        ">ledgers",
        ">txs",
        ">wall s",
        ">ledgers/s engine (wall)",
        "pace",
        ">memory limit / peak MiB",
        ">harness heap peak MiB",
        ">RSS anon / file peak MiB",
        "device meter",
        "error",
    ]);
    // A device meter says the same long sentence for most runs: one
    // footnote per distinct sentence, referenced by number.
    let mut meters: Vec<String> = Vec::new();
    for (l, r) in runs {
        let s = r.summary.as_ref();
        let (ledgers, txs) = ingested(r);
        t.row([
            l.clone(),
            ledgers,
            txs,
            opt(s.map(|s| s.wall_secs), 1),
            format!(
                "{} ({})",
                opt(s.and_then(|s| s.engine_ledgers_per_sec), 1),
                opt(s.map(|s| s.ledgers_per_sec), 1)
            ),
            s.and_then(|s| s.bound)
                .map_or("n/a", |b| b.name())
                .to_string(),
            format!(
                "{} / {}",
                r.memory_limit_bytes
                    .map_or("none".into(), |b| (b >> 20).to_string()),
                r.memory_peak_bytes
                    .map_or("n/a".into(), |b| (b >> 20).to_string())
            ),
            peak_mib(r, |m| m.harness_heap_peak_bytes),
            format!(
                "{} / {}",
                peak_mib(r, |m| m.rss_anon_bytes),
                peak_mib(r, |m| m.rss_file_bytes)
            ),
            r.device_meter.as_ref().map_or("n/a".into(), |m| {
                let i = meters.iter().position(|x| x == m).unwrap_or_else(|| {
                    meters.push(m.clone());
                    meters.len() - 1
                });
                format!("[{}]", i + 1)
            }),
            run_note(r),
        ]);
    }
    md.push_str(&t.render());
    if !meters.is_empty() {
        md.push_str("\nDevice meters:\n\n");
        for (i, m) in meters.iter().enumerate() {
            let _ = writeln!(md, "{}. {m}", i + 1);
        }
    }
    store_tables(md, runs);
    phases_table(md, runs);
    streaming_table(md, runs);
    batch_table(md, runs);
}

/// Per store: amplification, then time and latency; then all stores together.
fn store_tables(md: &mut String, runs: &[(String, &BackendRun)]) {
    md.push_str("\n## Stores: amplification\n\nWrite amplification has two sources: the engine's own byte counters (RocksDB flush + compaction + WAL; MDBX pages written x page size; LMDB has none) and the private device's written bytes after `syncfs`. Space amplification is allocated bytes over the logical bytes written; puts counts every key written, overwrites included, not the keys live at the end.\n\n| run | store | puts | logical MiB | raw / logical | disk MiB alloc / apparent | space amp | WA engine | WA device |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    let mut time = String::from(
        "\n## Stores: time and latency\n\nSeconds over the run; latencies p50 / p99 / max in ms.\n\n| run | store | write s | flush s | compaction s | compaction first -> last s | commit ms | flush ms | compaction ms |\n|---|---|---:|---:|---:|---:|---|---|---|\n",
    );
    for (l, r) in runs {
        let Some(s) = &r.summary else { continue };
        for (name, st) in &s.stores {
            let entries: u64 = r
                .batches
                .iter()
                .flat_map(|b| b.stores.iter().filter(|x| &x.store == name))
                .map(|x| x.entries)
                .sum();
            let _ = writeln!(
                md,
                "| {l} | {name} | {entries} | {} | {:.2} | {} / {} | {} | {} | {} |",
                mib(st.logical_bytes),
                st.raw_bytes as f64 / st.logical_bytes.max(1) as f64,
                mib(st.disk_allocated_bytes),
                mib(st.disk_apparent_bytes),
                opt(st.space_amp, 2),
                opt(st.write_amp_engine, 2),
                opt(st.write_amp_device, 2),
            );
            let _ = writeln!(
                time,
                "| {l} | {name} | {:.2} | {:.2} | {} | {} | {} | {} | {} |",
                st.write_secs,
                st.flush_secs,
                opt(st.compact_secs, 2),
                st.compact_first_last_secs
                    .map_or("n/a".into(), |(a, b)| format!("{a:.2} -> {b:.2}")),
                lat_ms(&st.latency.commit),
                lat_ms(&st.latency.flush),
                lat_ms(&st.latency.compaction),
            );
        }
    }
    md.push_str(&time);
    let any_total = runs
        .iter()
        .any(|(_, r)| r.summary.as_ref().is_some_and(|s| s.total.is_some()));
    md.push_str(if any_total { "\n### All stores together\n\nProcess write amplification (`/proc/self/io` write_bytes) is the fallback where no private device exists; it misses mmap writeback the kernel does later.\n\n| run | logical MiB | WA engine | WA device | WA process | space amp |\n|---|---:|---:|---:|---:|---:|\n" } else { "" });
    for (l, r) in runs {
        let Some(t) = r.summary.as_ref().and_then(|s| s.total.as_ref()) else {
            continue;
        };
        let _ = writeln!(
            md,
            "| {l} | {} | {} | {} | {} | {} |",
            mib(t.logical_bytes),
            opt(t.write_amp_engine, 2),
            opt(t.write_amp_device, 2),
            opt(t.write_amp_process, 2),
            opt(t.space_amp, 2)
        );
    }
    md.push('\n');
}

pub(super) fn phases_table(md: &mut String, runs: &[(String, &BackendRun)]) {
    if runs.iter().all(|(_, r)| r.phases.is_empty()) {
        return;
    }
    md.push_str("## Cost per phase\n\n| run | phase | wall s | user CPU s | system CPU s | peak RSS MiB (process, so far) | major faults |\n|---|---|---:|---:|---:|---:|---:|\n");
    for (l, r) in runs {
        for p in &r.phases {
            let _ = writeln!(
                md,
                "| {l} | {} | {:.2} | {:.2} | {:.2} | {} | {} |",
                p.phase,
                p.wall_secs,
                p.usage.user_secs,
                p.usage.sys_secs,
                mib(p.usage.max_rss_bytes),
                p.usage.major_faults
            );
        }
    }
    md.push('\n');
}

pub(super) fn streaming_table(md: &mut String, runs: &[(String, &BackendRun)]) {
    if runs.iter().all(|(_, r)| r.streaming.is_none()) {
        return;
    }
    md.push_str("## Lookups while ledgers stream in\n\nLatency p50 / p90 / p99 / p99.9 / max, microseconds.\n\n| run | ledgers | lookup workers | one-step (txdata) | two-step (txindex, ledgers) | ledger commit | mismatches |\n|---|---:|---:|---|---|---|---:|\n");
    for (l, r) in runs {
        let Some(s) = &r.streaming else { continue };
        let _ = writeln!(
            md,
            "| {l} | {} | {} | {} | {} | {} | {} |",
            s.ledgers,
            s.lookup_workers,
            lat_us(&s.one_step),
            lat_us(&s.two_step),
            lat_us(&s.ledger_commit),
            s.mismatches
                .map_or("not checked (discards writes)".into(), |m| m.to_string())
        );
    }
    md.push('\n');
    if let Some(t) = super::open_loop_table(runs) {
        md.push_str(&t);
        md.push('\n');
    }
}

/// Ledgers and transactions a run ingested, as cells: from its summary, or
/// for a run interrupted before one, summed over the batches it finished.
pub fn ingested(r: &BackendRun) -> (String, String) {
    match &r.summary {
        Some(s) => (s.ledgers.to_string(), s.txs.to_string()),
        None if r.batches.is_empty() => ("n/a".into(), "n/a".into()),
        None => {
            let ledgers: u64 = r.batches.iter().map(|b| u64::from(b.ledgers)).sum();
            let txs: u64 = r.batches.iter().map(|b| b.txs).sum();
            (
                format!("{ledgers} (in {} finished batches)", r.batches.len()),
                txs.to_string(),
            )
        }
    }
}

/// First, middle and last batch of each run, as the Stellar report sampled them.
pub(super) fn batch_table(md: &mut String, runs: &[(String, &BackendRun)]) {
    md.push_str("## Per batch (first, middle, last)\n\nSeconds; device MiB written. Every batch is in the run's `batches.jsonl` and in a report's `batches.csv`.\n\n| run | batch | ledgers | total s | writer wait s | store | write s | flush s | compaction s | device write MiB | disk MiB |\n|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|\n");
    for (l, r) in runs {
        let n = r.batches.len();
        if n == 0 {
            continue;
        }
        let mut picks = vec![0, n / 2, n - 1];
        picks.dedup();
        for i in picks {
            let b = &r.batches[i];
            for s in &b.stores {
                let _ = writeln!(
                    md,
                    "| {l} | {} | {} | {:.2} | {:.2} | {} | {:.3} | {:.3} | {} | {} | {} |",
                    b.batch,
                    b.ledgers,
                    b.total_secs,
                    b.writer_wait_secs,
                    s.store,
                    s.write_secs,
                    s.flush_secs,
                    opt(s.compact_secs, 3),
                    s.device_write_bytes.map_or("n/a".into(), mib),
                    mib(s.disk.allocated_bytes)
                );
            }
        }
    }
    md.push('\n');
}

pub(super) fn stellar_charts(out: &mut Out, runs: &[(String, &BackendRun)]) {
    out.md.push_str("## Charts\n\n");
    let per_batch = |f: &dyn Fn(&ledgerbench_results::BatchRecord) -> Option<f64>| -> Vec<Series> {
        runs.iter()
            .map(|(l, r)| Series {
                marked: false,
                name: l.clone(),
                points: r
                    .batches
                    .iter()
                    .filter_map(|b| f(b).map(|v| (f64::from(b.batch), v)))
                    .collect(),
            })
            .filter(|s| !s.points.is_empty())
            .collect()
    };
    let total = per_batch(&|b| Some(b.total_secs));
    out.chart(
        "Batch time (writes, flushes, compactions)",
        svg::line_chart("Batch time per batch", "batch", "seconds", &total),
    );
    let stores: BTreeSet<String> = runs
        .iter()
        .flat_map(|(_, r)| {
            r.batches
                .iter()
                .flat_map(|b| b.stores.iter().map(|s| s.store.clone()))
        })
        .collect();
    for store in &stores {
        let series = per_batch(&|b| {
            b.stores
                .iter()
                .find(|s| &s.store == store)
                .and_then(|s| s.compact_secs)
        });
        out.chart(
            &format!("Compaction time per batch: {store}"),
            svg::line_chart(
                &format!("Compaction per batch: {store}"),
                "batch",
                "seconds",
                &series,
            ),
        );
    }
    let tput: Vec<Series> = runs
        .iter()
        .map(|(l, r)| Series {
            marked: false,
            name: l.clone(),
            points: r
                .ingest_samples
                .iter()
                .map(|s| (s.t, s.bytes as f64 / f64::from(1u32 << 20)))
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    out.chart(
        "Ingestion throughput over time (MiB per second; stalls show as dips)",
        svg::line_chart(
            "Ingest throughput (stalls show as dips)",
            "seconds",
            "MiB/s",
            &tput,
        ),
    );
    bar_charts(out, runs, &stores);
}

/// Bars per run: lookup latency, then each store's amplification.
fn bar_charts(out: &mut Out, runs: &[(String, &BackendRun)], stores: &BTreeSet<String>) {
    let cats: Vec<String> = runs.iter().map(|(l, _)| l.clone()).collect();
    let lat =
        |f: &dyn Fn(&BackendRun) -> Option<f64>| runs.iter().map(|(_, r)| f(r)).collect::<Vec<_>>();
    let one = |q: fn(&Latency) -> f64| {
        lat(&|r| {
            r.streaming
                .as_ref()
                .and_then(|s| s.one_step.as_ref())
                .map(q)
        })
    };
    out.chart(
        "One-step lookup latency (us)",
        svg::bar_chart(
            "One-step lookup latency",
            "us",
            &cats,
            &["p50".into(), "p99".into(), "p99.9".into()],
            &[one(|l| l.p50_us), one(|l| l.p99_us), one(|l| l.p999_us)],
        ),
    );
    for store in stores {
        let amp = |f: fn(&ledgerbench_results::StoreSummary) -> Option<f64>| {
            lat(&|r| {
                r.summary
                    .as_ref()
                    .and_then(|s| s.stores.get(store))
                    .and_then(f)
            })
        };
        out.chart(
            &format!("Amplification: {store}"),
            svg::bar_chart(
                &format!("Amplification: {store}"),
                "x logical bytes",
                &cats,
                &[
                    "write (engine)".into(),
                    "write (device)".into(),
                    "space".into(),
                ],
                &[
                    amp(|s| s.write_amp_engine),
                    amp(|s| s.write_amp_device),
                    amp(|s| s.space_amp),
                ],
            ),
        );
    }
}

pub(super) fn csv(out: &mut Out, runs: &[(String, &BackendRun)]) -> Result<(), ReportError> {
    let (b, s) = crate::csv_out::series(runs).map_err(|e| ReportError::Io {
        path: std::path::PathBuf::from("batches.csv"),
        source: std::io::Error::other(e),
    })?;
    out.file("batches.csv", &b);
    out.file("samples.csv", &s);
    out.md.push_str("Series: [`batches.csv`](batches.csv) (one row per batch and store), [`samples.csv`](samples.csv) (one row per second of ingestion).\n\n");
    Ok(())
}

/// What ended a run, or why its ingestion stopped early; empty when it
/// ran to the end.
pub fn run_note(r: &BackendRun) -> String {
    match (&r.error, &r.stopped_early) {
        (Some(e), _) => e.clone(),
        (None, Some(s)) => format!("stopped early (a finding): {s}"),
        (None, None) => String::new(),
    }
}

/// The largest of a per-batch memory figure over a run, MiB; `n/a` when no
/// batch has it (older results, or a meter not available).
pub fn peak_mib(
    r: &BackendRun,
    f: fn(&ledgerbench_results::MemoryRecord) -> Option<u64>,
) -> String {
    r.batches
        .iter()
        .filter_map(|b| b.memory.as_ref().and_then(f))
        .max()
        .map_or("n/a".into(), |b| {
            format!("{:.1}", b as f64 / f64::from(1 << 20))
        })
}

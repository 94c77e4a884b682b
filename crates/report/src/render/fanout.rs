//! Fan-out sections: what a random-hash lookup costs, and what the open
//! store holds, as the store grows batch by batch.

use std::fmt::Write;

use ledgerbench_results::fanout::{Checkpoint, FanOutResults, FanOutRun, PassCost};

use super::*;
use crate::table::Table;

const MIB: f64 = (1u64 << 20) as f64;

/// The heading of a fan-out run: its shape and memory.
pub fn fanout_heading(f: &FanOutResults) -> String {
    let c = &f.config;
    format!(
        "## Lookup fan-out: batches of {} keys ({} + {} bytes), measured at {} batches, memory limit {}, engine memory {} MiB",
        c.keys_per_batch,
        c.key_bytes,
        c.value_bytes,
        c.checkpoints
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        f.memory_limit_bytes
            .map_or("none".into(), |b| format!("{} MiB", b >> 20)),
        f.engine_memory_bytes >> 20
    )
}

fn f1(v: f64) -> String {
    format!("{v:.1}")
}

fn f1o(v: Option<f64>) -> String {
    v.map_or(String::new(), f1)
}

fn f2(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v:.2}"))
}

/// `p50 / p99` of a pass, `*` when it ran out of time; empty without GETs.
fn p50_p99(p: &PassCost) -> String {
    let Some(l) = &p.latency else {
        return String::new();
    };
    format!(
        "{:.0} / {:.0}{}",
        l.p50_us,
        l.p99_us,
        if p.stopped_early { "*" } else { "" }
    )
}

/// Lookup cost per checkpoint of labelled runs.
pub fn lookup_table(runs: &[(String, &FanOutRun)]) -> String {
    let mut t = Table::new(&[
        "run",
        ">batches",
        ">keys (M)",
        ">found p50 / p99 us",
        ">missing p50 / p99 us",
        ">first pass found p99 us",
        ">databases probed / GET",
        ">filter passes / GET found / missing",
        ">device reads / GET found / missing",
        ">device KiB / GET found",
        ">CPU us / GET found / missing",
    ]);
    for (label, run) in runs {
        for c in &run.checkpoints {
            let p = &c.passes;
            t.row([
                label.clone(),
                c.batches.to_string(),
                format!("{:.1}", c.keys as f64 / 1e6),
                p50_p99(&p.steady_found),
                p50_p99(&p.steady_missing),
                p.cold_found
                    .latency
                    .as_ref()
                    .map_or(String::new(), |l| format!("{:.0}", l.p99_us)),
                f2(p.steady_found.probes_per_get),
                format!(
                    "{} / {}",
                    f2(p.steady_found.filter_positives_per_get),
                    f2(p.steady_missing.filter_positives_per_get)
                ),
                format!(
                    "{} / {}",
                    f2(p.steady_found.device_reads_per_get),
                    f2(p.steady_missing.device_reads_per_get)
                ),
                f2(p.steady_found.device_kib_per_get),
                format!(
                    "{} / {}",
                    f1o(p.steady_found.cpu_us_per_get),
                    f1o(p.steady_missing.cpu_us_per_get)
                ),
            ]);
        }
    }
    t.render()
}

/// Resident bytes the open store added after reads, outside its block
/// cache (which a budget bounds), per batch it holds: what grows with the
/// partitions. Absent when resident memory was not read.
pub fn held_per_batch(c: &Checkpoint) -> Option<f64> {
    let cache = c
        .engine
        .extra
        .get("block_cache_usage_bytes")
        .copied()
        .unwrap_or(0);
    let added = c.held.added_after_reads()?;
    Some(added.saturating_sub(cache) as f64 / f64::from(c.batches.max(1)))
}

/// Memory, handles and open time per checkpoint of labelled runs.
pub fn held_table(runs: &[(String, &FanOutRun)]) -> String {
    let mut t = Table::new(&[
        "run",
        ">batches",
        ">open s",
        ">RSS added at open MiB",
        ">RSS added after reads MiB",
        ">outside the cache per batch KiB",
        ">block cache used MiB",
        ">table readers MiB",
        ">fds added",
        ">cgroup peak MiB",
        ">store GiB",
        ">settle s",
    ]);
    for (label, run) in runs {
        for c in &run.checkpoints {
            let h = &c.held;
            let extra = |k: &str| c.engine.extra.get(k).map(|v| f1(*v as f64 / MIB));
            t.row([
                label.clone(),
                c.batches.to_string(),
                format!("{:.2}", c.open_secs),
                f1o(h.added_at_open().map(|b| b as f64 / MIB)),
                f1o(h.added_after_reads().map(|b| b as f64 / MIB)),
                held_per_batch(c).map_or(String::new(), |b| format!("{:.0}", b / 1024.0)),
                extra("block_cache_usage_bytes").unwrap_or_default(),
                extra("table_readers_bytes").unwrap_or_default(),
                h.fds_added().map_or(String::new(), |n| n.to_string()),
                h.cgroup_peak_bytes
                    .map_or(String::new(), |b| f1(b as f64 / MIB)),
                format!("{:.2}", c.disk_allocated_bytes as f64 / (MIB * 1024.0)),
                match c.unsettled_bytes {
                    Some(b) => format!(
                        "{:.0} (gave up, {:.0} MiB pending)",
                        c.settle_secs,
                        b as f64 / MIB
                    ),
                    None => format!("{:.0}", c.settle_secs),
                },
            ]);
        }
    }
    t.render()
}

/// What every number in the tables means and where it comes from.
const LEGEND: &str = "Each checkpoint: the store closed, written back, the page cache dropped, reopened inside the memory cgroup (open time measured), then four passes of random GETs: existing keys and never-written keys right after the reopen (first pass: filters and indexes not yet cached), then other keys of both kinds (steady: the cache as the first pass left it). Latencies are of the steady pass; `*` marks a pass stopped at its time limit, with the GETs it made. Databases probed: the partitions a GET looked in (a partitioned store only). Filter passes: bloom filter checks that let the GET through to a table's index and data (the true one plus false positives). Device reads come from the store's private loop device, CPU from `getrusage` of the whole process. Each checkpoint is read by a fresh process inside the cgroup; RSS added: its anonymous resident memory (engine heaps and caches) over what it held before the open; outside the cache per batch: that after reads, less the block cache's use (bounded by the engine's budget), divided by the batches: the memory that grows with the partitions. Fds added: file descriptors the open store holds. Cgroup peak: memory charged to the limit, page cache included.";

/// The fan-out section of a report: a heading per file, the two tables
/// and charts of lookup p99 and memory per batch against the batch count.
pub(super) fn fanout_section(
    out: &mut Out,
    files: &[(&Loaded, &FanOutResults)],
    label: &dyn Fn(&Loaded, &str) -> String,
) {
    let mut runs: Vec<(String, &FanOutRun)> = Vec::new();
    for (d, f) in files {
        let _ = writeln!(out.md, "{}\n", fanout_heading(f));
        runs.extend(f.runs.iter().map(|r| (label(d, &r.backend), r)));
    }
    let _ = writeln!(out.md, "{LEGEND}\n\n### Lookups\n");
    out.md.push_str(&lookup_table(&runs));
    let _ = writeln!(out.md, "\n### What the open store holds\n");
    out.md.push_str(&held_table(&runs));
    for (label, run) in &runs {
        if let Some(e) = &run.error {
            let _ = writeln!(
                out.md,
                "\n- `{label}` ended early: {}",
                crate::table::escape(e)
            );
        }
    }
    out.md.push('\n');
    let series = |f: &dyn Fn(&Checkpoint) -> Option<f64>| -> Vec<Series> {
        runs.iter()
            .map(|(l, r)| Series {
                marked: false,
                name: l.clone(),
                points: r
                    .checkpoints
                    .iter()
                    .filter_map(|c| f(c).map(|v| (f64::from(c.batches), v)))
                    .collect(),
            })
            .filter(|s| !s.points.is_empty())
            .collect()
    };
    let p99 = |p: &PassCost| p.latency.as_ref().map(|l| l.p99_us);
    for (title, pick) in [
        (
            "GET p99, existing keys, by batches held",
            &(|c: &Checkpoint| p99(&c.passes.steady_found)) as &dyn Fn(&Checkpoint) -> Option<f64>,
        ),
        (
            "GET p99, missing keys, by batches held",
            &|c: &Checkpoint| p99(&c.passes.steady_missing),
        ),
    ] {
        out.chart(
            title,
            svg::line_chart(title, "batches", "p99 us", &series(pick)),
        );
    }
    let title = "Memory outside the block cache per batch held";
    out.chart(
        title,
        svg::line_chart(
            title,
            "batches",
            "KiB per batch",
            &series(&|c| held_per_batch(c).map(|b| b / 1024.0)),
        ),
    );
}

/// The end-of-run summary of `ledgerbench run fan-out`.
pub fn fanout_summary(f: &FanOutResults) -> String {
    let runs: Vec<(String, &FanOutRun)> = f.runs.iter().map(|r| (r.backend.clone(), r)).collect();
    let mut s = format!("{}\n\n", fanout_heading(f).trim_start_matches("## "));
    s.push_str(&lookup_table(&runs));
    s.push('\n');
    s.push_str(&held_table(&runs));
    for r in &f.runs {
        if let Some(e) = &r.error {
            let _ = writeln!(s, "\n{} ended early: {e}", r.backend);
        }
    }
    s
}

//! Point-read sections: IO per GET by phase and cache state.

use std::fmt::Write;

use super::*;
use crate::table::Table;
use ledgerbench_results::points::PointRun;

pub(super) fn point_section(
    out: &mut Out,
    members: &[&Loaded],
    label: &dyn Fn(&Loaded, &str) -> String,
) {
    let points: Vec<(&Loaded, &PointResults)> = members
        .iter()
        .filter_map(|d| match &d.doc {
            Doc::PointReads(p) => Some((*d, p.as_ref())),
            _ => None,
        })
        .collect();
    let Some((_, p)) = points.first() else {
        return;
    };
    let md = &mut out.md;
    let _ = writeln!(
        md,
        "{}\n\nDevice reads come from the store's private loop device (`/sys/block`), major faults from `getrusage` (how mmap engines read), engine block misses from RocksDB's block cache ticker (a miss may still hit the page cache).\n",
        point_heading(p)
    );
    let runs: Vec<(String, &PointRun)> = points
        .iter()
        .flat_map(|(d, p)| p.runs.iter().map(move |r| (label(d, &r.backend), r)))
        .collect();
    md.push_str(&point_table(&runs));
    let mut cats = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut cells: Vec<(String, String, f64)> = Vec::new();
    for (l, run) in &runs {
        cats.push(l.clone());
        for m in &run.measurements {
            let n = format!("{} {}", m.phase, cache_at(m));
            if !names.contains(&n) {
                names.push(n.clone());
            }
            if let Some(v) = m.cost.device_reads_per_get {
                cells.push((l.clone(), n, v));
            }
        }
    }
    md.push('\n');
    let values: Vec<Vec<Option<f64>>> = names
        .iter()
        .map(|n| {
            cats.iter()
                .map(|c| cells.iter().find(|x| &x.0 == c && &x.1 == n).map(|x| x.2))
                .collect()
        })
        .collect();
    out.chart(
        "Device reads per GET",
        svg::bar_chart("Device reads per GET", "reads", &cats, &names, &values),
    );
    super::threads::depth_section(out, &runs);
}

/// The measurement's cache state, and its thread count when it read with
/// several (`cold x8`).
fn cache_at(m: &ledgerbench_results::points::Measurement) -> String {
    match m.cost.threads {
        Some(n) if n > 1 => format!("{} x{n}", m.cache.name()),
        _ => m.cache.name().to_string(),
    }
}

/// The heading of a point-read run: its shape, reads and memory limit.
pub fn point_heading(p: &PointResults) -> String {
    format!(
        "## Point reads: {} keys of {} + {} bytes, {} GETs per measurement, memory limit {}",
        p.config.keys,
        p.config.key_bytes,
        p.config.value_bytes,
        p.config.reads,
        p.memory_limit_bytes
            .map_or("none".into(), |b| format!("{} MiB", b >> 20))
    )
}

/// IO per GET of labelled point-read runs, one row per measurement, then
/// what each run skipped and the error that ended it.
pub fn point_table(runs: &[(String, &PointRun)]) -> String {
    let mut t = Table::new(&[
        "run",
        "phase",
        "cache",
        ">device reads / GET",
        ">device KiB / GET",
        ">major faults / GET",
        ">engine block misses / GET",
        ">device reads / missing GET",
        ">p50 / p99 us",
        ">disk MiB",
        ">mismatches",
    ]);
    let mut notes = String::new();
    for (l, run) in runs {
        for m in &run.measurements {
            let c = &m.cost;
            t.row([
                l.clone(),
                m.phase.clone(),
                cache_at(m),
                opt(c.device_reads_per_get, 2),
                opt(c.device_bytes_per_get.map(|b| b / 1024.0), 2),
                format!("{:.2}", c.major_faults_per_get),
                opt(c.engine_block_misses_per_get, 2),
                opt(c.device_reads_per_missing_get, 2),
                c.latency.as_ref().map_or("n/a".into(), |x| {
                    format!("{:.0} / {:.0}", x.p50_us, x.p99_us)
                }),
                mib(m.disk_allocated_bytes),
                c.mismatches.to_string(),
            ]);
        }
        if let Some(rp) = &run.read_path {
            let ra = rp.read_ahead_kb.map_or("no private device".into(), |kb| {
                format!("read-ahead {kb} KiB ({})", rp.read_ahead_source)
            });
            let page = rp
                .page_size_bytes
                .map_or(String::new(), |p| format!(", {} KiB pages", p / 1024));
            let _ = writeln!(notes, "\n{l}: {} reads, {ra}{page}", rp.reads);
        }
        if let Some(load) = run.load_device_write_bytes {
            let total = load + run.compact_device_write_bytes.unwrap_or(0);
            let _ = writeln!(
                notes,
                "\n{l}: the device took {} MiB of writes for the load{} ({:.2}x the {} MiB loaded)",
                mib(total),
                if run.compact_device_write_bytes.is_some() {
                    " and the full compaction"
                } else {
                    ""
                },
                total as f64 / run.logical_bytes.max(1) as f64,
                mib(run.logical_bytes)
            );
        }
        for s in &run.skipped {
            let _ = writeln!(notes, "\n{l}: skipped {s}");
        }
        if let Some(e) = &run.error {
            let _ = writeln!(notes, "\n{l}: failed: {e}");
        }
    }
    format!("{}{notes}", t.render())
}

/// The end-of-run summary of one point-read results file.
pub fn point_summary(p: &PointResults) -> String {
    let runs: Vec<(String, &PointRun)> = p.runs.iter().map(|r| (r.backend.clone(), r)).collect();
    let depth =
        super::threads::depth_table(&runs).map_or(String::new(), |(md, _)| format!("\n{md}"));
    format!("{}\n\n{}{depth}", point_heading(p), point_table(&runs))
}

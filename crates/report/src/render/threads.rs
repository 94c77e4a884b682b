//! Client-thread sweeps: an op stream's throughput and latency against the
//! number of threads, with a one-writer engine's queueing apart; point
//! reads' GET rate at each queue depth beside the device's own (fio).

use std::fmt::Write;

use super::replay::run_phase_rate;
use super::*;
use crate::table::Table;
use ledgerbench_results::points::PointRun;

/// The sweep section of op-stream runs, when any ran with several threads.
///
/// Long because one table row per swept run and two charts built from the same rows.
pub(super) fn threads_section(out: &mut Out, runs: &[(String, &BackendRun)]) {
    let swept: Vec<(&String, &BackendRun, u64)> = runs
        .iter()
        .filter_map(|(l, r)| Some((l, *r, r.replay.as_ref()?.threads?)))
        .collect();
    if !swept.iter().any(|(_, _, n)| *n > 1) {
        return;
    }
    let _ = writeln!(
        out.md,
        "## Client threads\n\nThe run phase at each number of client threads (`--threads`). `writers` is how the engine takes several writers: `single` (one write transaction at a time: the harness takes the turn for it, so the wait for the turn is timed apart from the commit in the engine), `concurrent` (the engine queues and merges writers itself: its queueing is inside the commit time), `serial` (every request waits for the one before, e.g. the Go sidecar's single pipe before it served a connection per thread). Latency in microseconds, p50 / p99, over every store and thread.\n"
    );
    let mut t = Table::new(&[
        "run",
        ">threads",
        "split",
        "writers",
        ">run-phase ops/s",
        ">get",
        ">commit in engine",
        ">wait for the writer's turn",
        ">turn wait / (wait + commit)",
    ]);
    let lat = |l: Option<&Latency>| {
        l.map_or("n/a".into(), |l| {
            format!("{:.0} / {:.0}", l.p50_us, l.p99_us)
        })
    };
    for (label, run, n) in &swept {
        let rp = run.replay.as_ref();
        let sum = rp.and_then(|r| r.summary.as_ref());
        let store = sum.and_then(|s| s.stores.values().next());
        let commit = store.and_then(|s| s.latency.commit.as_ref());
        let wait = store.and_then(|s| s.latency.commit_wait.as_ref());
        let share = wait.zip(commit).map(|(w, c)| {
            let (w, c) = (w.mean_us * w.count as f64, c.mean_us * c.count as f64);
            format!("{:.0}%", 100.0 * w / (w + c).max(1e-9))
        });
        t.row([
            (*label).clone(),
            n.to_string(),
            rp.and_then(|r| r.split.clone())
                .unwrap_or_else(|| "-".into()),
            run.stores
                .first()
                .and_then(|s| s.writers)
                .map_or("n/a".into(), |w| w.name().to_string()),
            opt(rp.and_then(run_phase_rate), 0),
            lat(store.and_then(|s| s.latency.get.as_ref())),
            lat(commit),
            lat(wait),
            share.unwrap_or_else(|| "n/a".into()),
        ]);
    }
    out.md.push_str(&t.render());
    out.md.push('\n');
    let series = |y: &dyn Fn(&BackendRun) -> Option<f64>| -> Vec<Series> {
        let mut v: Vec<Series> = Vec::new();
        for (_, run, n) in &swept {
            let Some(y) = y(run) else { continue };
            let design = run.design.clone().unwrap_or_else(|| run.label.clone());
            match v.iter_mut().find(|s| s.name == design) {
                Some(s) => s.points.push((*n as f64, y)),
                None => v.push(Series {
                    name: design,
                    marked: false,
                    points: vec![(*n as f64, y)],
                }),
            }
        }
        for s in &mut v {
            s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        v
    };
    let rate = series(&|r| r.replay.as_ref().and_then(run_phase_rate));
    out.chart(
        "Throughput against client threads",
        svg::line_chart("Run-phase throughput", "client threads", "ops/s", &rate),
    );
    let p99 = series(&|r| {
        let s = r.replay.as_ref()?.summary.as_ref()?;
        Some(s.stores.values().next()?.latency.get.as_ref()?.p99_us)
    });
    out.chart(
        "GET p99 against client threads",
        svg::line_chart("GET p99", "client threads", "microseconds", &p99),
    );
}

/// The queue-depth section of point-read runs, when any read with several
/// threads or measured the device with fio.
pub(super) fn depth_section(out: &mut Out, runs: &[(String, &PointRun)]) {
    let Some((md, rate)) = depth_table(runs) else {
        return;
    };
    out.md.push_str(&md);
    out.chart(
        "GETs per second against queue depth",
        svg::line_chart(
            "GETs/s and the device's reads/s",
            "threads (queue depth)",
            "per second",
            &rate,
        ),
    );
}

/// The queue-depth table (and its notes) and the GET-rate series of
/// point-read runs; `None` when none read with several threads or ran fio.
///
/// Long because one row per measurement with its fio figure at the same depth, and the chart series gathered in the same pass.
pub(super) fn depth_table(runs: &[(String, &PointRun)]) -> Option<(String, Vec<Series>)> {
    let deep = runs
        .iter()
        .any(|(_, r)| !r.fio.is_empty() || r.measurements.iter().any(|m| m.cost.threads > Some(1)));
    if !deep {
        return None;
    }
    let mut md = String::from(
        "### GETs at queue depth\n\nEach thread count is a queue depth: that many threads issue GETs at once. fio reads the same private device at the same depths (4 KiB random reads, O_DIRECT, one synchronous reader per thread, as a GET thread reads), after the engine's reads. `GETs/s of fio` is the engine's GETs per second over fio's reads per second at that depth: above 1 where caches serve GETs without the device; `device reads/s of fio` near 1 means the engine keeps the device as busy as fio can.\n\n",
    );
    let mut t = Table::new(&[
        "run",
        "phase",
        "cache",
        ">threads",
        ">GETs/s",
        ">device reads / GET",
        ">device reads/s",
        ">GET p50 / p99 us",
        ">fio reads/s",
        ">fio p50 / p99 us",
        ">GETs/s of fio",
        ">device reads/s of fio",
    ]);
    let mut rate: Vec<Series> = Vec::new();
    let mut add = |name: String, x: u64, y: f64| match rate.iter_mut().find(|s| s.name == name) {
        Some(s) => s.points.push((x as f64, y)),
        None => rate.push(Series {
            name,
            marked: false,
            points: vec![(x as f64, y)],
        }),
    };
    for (label, run) in runs {
        for m in &run.measurements {
            let c = &m.cost;
            let n = c.threads.unwrap_or(1);
            let fio = run.fio.iter().find(|f| f.threads == n);
            t.row([
                label.clone(),
                m.phase.clone(),
                m.cache.name().to_string(),
                n.to_string(),
                opt(c.gets_per_sec, 0),
                opt(c.device_reads_per_get, 2),
                opt(c.device_reads_per_sec, 0),
                c.latency.as_ref().map_or("n/a".into(), |x| {
                    format!("{:.0} / {:.0}", x.p50_us, x.p99_us)
                }),
                opt(fio.map(|f| f.iops), 0),
                fio.map_or("n/a".into(), |f| {
                    format!("{} / {}", opt(f.p50_us, 0), opt(f.p99_us, 0))
                }),
                opt(
                    c.gets_per_sec.zip(fio).map(|(g, f)| g / f.iops.max(1e-9)),
                    2,
                ),
                opt(
                    c.device_reads_per_sec
                        .zip(fio)
                        .map(|(d, f)| d / f.iops.max(1e-9)),
                    2,
                ),
            ]);
            if let Some(g) = c.gets_per_sec {
                add(format!("{label} {} {}", m.phase, m.cache.name()), n, g);
            }
        }
        for f in &run.fio {
            add(format!("{label} fio (device)"), f.threads, f.iops);
        }
    }
    for s in &mut rate {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    md.push_str(&t.render());
    for (label, run) in runs {
        if let Some(note) = &run.fio_note {
            let _ = writeln!(md, "\n{label}: no fio figure: {note}");
        }
    }
    md.push('\n');
    Some((md, rate))
}

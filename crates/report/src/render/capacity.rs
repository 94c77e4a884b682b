//! Capacity at a close interval: each backend's highest sustained rate, the
//! probes behind it and a chart of persist time against the offered rate.

use std::fmt::Write;

use super::*;
use crate::table::Table;
use ledgerbench_results::capacity::{CapacityResults, CapacityRun, RowShape};

/// The section of every capacity results file among the inputs.
pub(super) fn capacity_section(out: &mut Out, docs: &[Loaded]) {
    for d in docs {
        let Doc::Capacity(c) = &d.doc else { continue };
        out.md.push_str(&capacity_summary(c));
        let mut series: Vec<Series> = c
            .runs
            .iter()
            .map(|r| {
                let mut points: Vec<(f64, f64)> = r
                    .probes
                    .iter()
                    .filter_map(|p| Some((p.rate, p.max_persist_secs?)))
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                Series {
                    marked: false,
                    name: r.backend.clone(),
                    points,
                }
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        series.push(Series {
            name: "the close interval".into(),
            marked: false,
            points: vec![
                (c.config.min_rate, c.config.interval_secs),
                (c.config.max_rate, c.config.interval_secs),
            ],
        });
        out.chart(
            &format!(
                "Slowest close against offered rate, {}",
                c.config.rows.name()
            ),
            svg::line_chart(
                "Slowest close against offered rate",
                "rows per second offered",
                "seconds",
                &series,
            ),
        );
    }
}

/// One capacity search as a row of the verdict's answer: the rows, the
/// interval, what the probes ran under, and every backend's sustained rate,
/// highest first, each with the lowest rate that failed.
pub(super) fn verdict_row(c: &CapacityResults) -> String {
    let cfg = &c.config;
    let mut runs: Vec<_> = c.runs.iter().collect();
    // Highest sustained first; a backend that sustained nothing last.
    runs.sort_by(|a, b| {
        let key = |r: &CapacityRun| r.sustained_rate.unwrap_or(-1.0);
        key(b).total_cmp(&key(a))
    });
    let ranked: Vec<String> = runs
        .iter()
        .map(|r| {
            let held = match r.sustained_rate {
                Some(x) => format!("{x:.0}"),
                // Nothing probed (its prefill failed): no rate is known.
                None if r.probes.is_empty() => "not measured".into(),
                None => format!("< {:.0}", cfg.min_rate),
            };
            let bound = match (r.failed_rate, &r.error) {
                (Some(f), _) => format!("{f:.0} failed"),
                (None, Some(_)) => "then an error ended the search".into(),
                (None, None) => "the highest tried: a lower bound".into(),
            };
            // Plain names: a cell of the answer stays one run of text in
            // every format (the HTML page, the README).
            format!("{} {held} ({bound})", r.backend)
        })
        .collect();
    format!(
        "| {} | {} s | {} | {} | {} |",
        match (cfg.rows, cfg.prefill_rows) {
            (RowShape::TxHash, 0) => "transactions by hash (txdata keys)".to_string(),
            (RowShape::TxHash, n) => format!(
                "transactions by hash (txdata keys), on {} MiB already stored",
                (n * (32 + cfg.value_bytes as u64)) >> 20
            ),
            (RowShape::Shred, _) => "Solana shreds (one slot a close)".to_string(),
        },
        cfg.interval_secs,
        c.memory_limit_bytes
            .map_or("none".into(), |b| format!("{} MiB", b >> 20)),
        c.header
            .durability
            .map_or("not recorded".into(), |d| format!("`{}`", d.name())),
        ranked.join("; ")
    )
}

/// The search's heading and what it measured, as a paragraph.
fn capacity_intro(c: &CapacityResults) -> String {
    let cfg = &c.config;
    format!(
        "## Capacity: {} rows of {} value bytes, a close every {} s, held for {} closes, memory limit {}\n\nThe highest rate each backend persisted in time, close after close: every close committed within the interval (at the run's durability level, {}, in write batches of at most 16 MiB; a probe stops at its first late close), and neither the persist time nor the compaction debt grew. {}; the search bisects between {} and {} rows/s (geometric middle) for at most {} probes. {}\n\n",
        cfg.rows.name(),
        cfg.value_bytes,
        cfg.interval_secs,
        cfg.intervals,
        c.memory_limit_bytes
            .map_or("none".into(), |b| format!("{} MiB", b >> 20)),
        c.header
            .durability
            .map_or("not recorded".into(), |d| d.name().to_string()),
        match cfg.prefill_rows {
            0 => "Each probe starts on an empty store on its own device".to_string(),
            n if c.runs.iter().any(|r| r.prefill_secs.is_some()) => format!(
                "Each probe starts on its own device from a copy of the backend's store holding {n} rows ({} MiB) of keys no probe writes (`--prefill`): loaded once, under the same memory limit, flushed and closed (the table gives how long and its size on disk), then copied for each probe with its page cache emptied, so the probe opens it cold as a restarted node opens its store",
                (n * (32 + cfg.value_bytes as u64)) >> 20
            ),
            n => format!(
                "Each probe starts on its own device with a store holding {n} rows ({} MiB) of keys no probe writes, loaded untimed and flushed (`--prefill`)",
                (n * (32 + cfg.value_bytes as u64)) >> 20
            ),
        },
        cfg.min_rate,
        cfg.max_rate,
        cfg.probes,
        match (c.memory_limit_bytes, c.harness_allowance_bytes) {
            (None, _) => String::new(),
            (Some(_), Some(h)) => format!(
                "The cgroup adds {} MiB to the limit for ledgerbench's own batch and process; a probe the OOM killer ends is a failed rate.",
                h >> 20
            ),
            (Some(_), None) => "ledgerbench's own batch (up to 16 MiB) counted against the limit: this search predates its allowance.".into(),
        },
    )
}

/// The tables of one capacity search: the answer per backend, then every probe.
pub fn capacity_summary(c: &CapacityResults) -> String {
    let mut s = capacity_intro(c);
    // A search whose prefill was loaded once says how long it took, and
    // what it became on disk (an engine's footprint for those rows).
    let once = c.runs.iter().any(|r| r.prefill_secs.is_some());
    let mut head = vec![
        "run",
        ">sustained rows/s",
        ">lowest failed rows/s",
        ">probes",
    ];
    if once {
        head.extend([">prefill load s", ">prefilled store MiB"]);
    }
    head.push("why the lowest failed rate failed");
    let mut t = Table::new(&head);
    for r in &c.runs {
        let why = r
            .failed_rate
            .and_then(|f| r.probes.iter().find(|p| p.rate == f))
            .and_then(|p| p.why_not.clone());
        let mut row = vec![
            r.backend.clone(),
            match r.sustained_rate {
                Some(x) => format!("{x:.0}"),
                None if r.probes.is_empty() => "not measured".into(),
                None => "below the lowest tried".into(),
            },
            match (r.failed_rate, &r.error) {
                (Some(x), _) => format!("{x:.0}"),
                // The search ended early: nothing is known above what held.
                (None, Some(_)) => "not reached: the search ended in an error".into(),
                (None, None) => "none up to the highest tried".into(),
            },
            r.probes.len().to_string(),
        ];
        if once {
            row.push(opt(r.prefill_secs, 1));
            row.push(
                r.prefill_store_bytes
                    .map_or("n/a".into(), |b| format!("{}", b >> 20)),
            );
        }
        row.push(
            r.error
                .as_ref()
                .map(|e| format!("error: {e}"))
                .or(why)
                .unwrap_or_else(|| "-".into()),
        );
        t.row(row);
    }
    s.push_str(&t.render());
    let mut p = Table::new(&[
        "run",
        ">rows/s",
        ">rows a close",
        ">median close s",
        ">slowest close s",
        "held",
    ]);
    for r in &c.runs {
        let mut probes: Vec<_> = r.probes.iter().collect();
        probes.sort_by(|a, b| a.rate.total_cmp(&b.rate));
        for x in probes {
            p.row([
                r.backend.clone(),
                format!("{:.0}", x.rate),
                x.rows_per_close.to_string(),
                opt(ledgerbench_core::quantile::median(&x.persist_secs), 3),
                opt(x.max_persist_secs, 3),
                x.why_not.clone().unwrap_or_else(|| "yes".into()),
            ]);
        }
    }
    let _ = write!(s, "\nEvery probe, by rate:\n\n{}\n", p.render());
    s
}

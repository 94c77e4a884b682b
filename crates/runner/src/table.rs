//! Markdown tables printed at the end of a run.

use std::fmt::Write;

use ledgerbench_driver::results::{BackendRun, BatchRecord, RunResult};

use ledgerbench_report::table::Table;

use crate::size::mib;

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "n/a".to_string(), |x| format!("{x:.digits$}"))
}

/// The end-of-run summary: one row per backend run, then the per-batch
/// figures of the first, middle and last batch of each run.
pub fn stellar_summary(r: &RunResult) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## Stellar ingestion: preset {}, seed {}, {} ledgers in batches of {}\n",
        r.preset.as_deref().unwrap_or("custom"),
        r.header.seed,
        r.config["ledgers"],
        r.config["batch_ledgers"]
    );
    let mut t = Table::new(&[
        "run",
        ">ledgers",
        ">txs",
        ">wall s",
        ">ledgers/s engine (wall)",
        "pace",
        ">txdata compact first -> last s",
        ">disk MiB ledgers / txdata / txindex",
        ">txdata space amp",
        ">txdata write amp (engine / device)",
        ">1-step lookup p50 / p99 us",
        ">2-step lookup p50 / p99 us",
        ">mismatches",
        "error",
    ]);
    for run in &r.runs {
        t.row(row(run));
    }
    s.push_str(&t.render());
    let _ = writeln!(
        s,
        "\nMemory (peak over batches, MiB): harness heap (ledgerbench's own; budget {} MiB, commit chunks of {} ledgers), RSS anonymous (heaps, engine caches) and file-mapped (an mmap engine's store pages), page cache charged to the run's cgroup.\n",
        r.config["harness_budget"]
            .as_u64()
            .map_or("n/a".into(), |b| (b >> 20).to_string()),
        r.config["commit_ledgers"]
    );
    let mut m = Table::new(&[
        "run",
        ">harness heap",
        ">RSS anon",
        ">RSS file",
        ">cgroup page cache",
    ]);
    for run in &r.runs {
        let peak = |f| ledgerbench_report::render::peak_mib(run, f);
        m.row([
            run.label.clone(),
            peak(|m| m.harness_heap_peak_bytes),
            peak(|m| m.rss_anon_bytes),
            peak(|m| m.rss_file_bytes),
            peak(|m| m.cgroup_page_cache_bytes),
        ]);
    }
    s.push_str(&m.render());
    let labelled: Vec<(String, &BackendRun)> =
        r.runs.iter().map(|x| (x.label.clone(), x)).collect();
    if let Some(t) = ledgerbench_report::render::open_loop_table(&labelled) {
        let _ = write!(s, "\n{t}");
    }
    for run in &r.runs {
        if run.batches.is_empty() {
            continue;
        }
        let shown = sample(&run.batches);
        let _ = writeln!(
            s,
            "\n### {}: per batch (seconds; batches {} of {} shown, every batch in batches.jsonl)\n",
            run.label,
            shown
                .iter()
                .map(|b| b.batch.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            run.batches.len()
        );
        let mut t = Table::new(&[
            ">batch",
            ">total",
            ">gen",
            ">compress",
            ">writer wait",
            ">ledgers write / flush / compact",
            ">txdata write / flush / compact",
            ">txindex write / flush / compact",
            ">txdata disk MiB",
        ]);
        for b in shown {
            let st = |i: usize| {
                let x = &b.stores[i];
                format!(
                    "{:.2} / {:.2} / {}",
                    x.write_secs,
                    x.flush_secs,
                    opt(x.compact_secs, 2)
                )
            };
            t.row([
                b.batch.to_string(),
                format!("{:.2}", b.total_secs),
                format!("{:.2}", b.generate_secs),
                format!("{:.2}", b.compress_secs),
                format!("{:.2}", b.writer_wait_secs),
                st(0),
                st(1),
                st(2),
                mib(b.stores[1].disk.allocated_bytes),
            ]);
        }
        s.push_str(&t.render());
    }
    s
}

fn row(run: &BackendRun) -> Vec<String> {
    let err = ledgerbench_report::render::run_note(run);
    let Some(sum) = &run.summary else {
        // Interrupted: what its finished batches ingested, the rest empty.
        let (ledgers, txs) = ledgerbench_report::render::ingested(run);
        let mut cells = vec![run.label.clone(), ledgers, txs];
        cells.resize(13, String::new());
        cells.push(err);
        return cells;
    };
    let td = &sum.stores["txdata"];
    let disk = ["ledgers", "txdata", "txindex"]
        .iter()
        .map(|n| mib(sum.stores[*n].disk_allocated_bytes))
        .collect::<Vec<_>>()
        .join(" / ");
    let compact = td
        .compact_first_last_secs
        .map_or("n/a".to_string(), |(a, b)| format!("{a:.2} -> {b:.2}"));
    let (one, two, bad) = match &run.streaming {
        Some(st) => (
            pct(&st.one_step),
            pct(&st.two_step),
            st.mismatches.map_or("n/a".into(), |m| m.to_string()),
        ),
        None => ("n/a".into(), "n/a".into(), "n/a".into()),
    };
    let wa = format!(
        "{} / {}",
        opt(td.write_amp_engine, 2),
        opt(td.write_amp_device, 2)
    );
    vec![
        run.label.clone(),
        sum.ledgers.to_string(),
        sum.txs.to_string(),
        format!("{:.1}", sum.wall_secs),
        format!(
            "{} ({:.1})",
            opt(sum.engine_ledgers_per_sec, 1),
            sum.ledgers_per_sec
        ),
        sum.bound.map_or("n/a", |b| b.name()).to_string(),
        compact,
        disk,
        format!("{:.2}", td.space_amp),
        wa,
        one,
        two,
        bad,
        err,
    ]
}

fn pct(l: &Option<ledgerbench_driver::results::Latency>) -> String {
    l.as_ref().map_or("n/a".to_string(), |l| {
        format!("{:.0} / {:.0}", l.p50_us, l.p99_us)
    })
}

/// First, middle and last batch, like the Stellar report's table.
fn sample(batches: &[BatchRecord]) -> Vec<&BatchRecord> {
    let mut idx = vec![0, batches.len() / 2, batches.len() - 1];
    idx.dedup();
    idx.into_iter().map(|i| &batches[i]).collect()
}

/// The end-of-replay summary: one row per backend, then per store.
pub fn replay_summary(r: &RunResult) -> String {
    let runs: Vec<(String, &BackendRun)> = r.runs.iter().map(|x| (x.label.clone(), x)).collect();
    let what = match r.config["trace"].as_str() {
        Some(t) => format!("Replay of {t}"),
        None => format!("Workload {}", r.header.workload),
    };
    format!(
        "## {what} (seed {})\n\n{}",
        r.header.seed,
        ledgerbench_report::render::replay_tables(&runs)
    )
}

//! `kvbench report`: markdown with tables and SVG charts, and CSV of the
//! per-batch and per-second series, rendered from results files alone.

use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use kvbench_driver::pointreads::PointResults;
use kvbench_driver::results::{BackendRun, Latency, RunResult};

use crate::ReportError;
use crate::doc::{Doc, Loaded};
use crate::svg::{self, Series};

/// The files a report wrote.
#[derive(Debug, Default)]
pub struct Written {
    /// Every file, relative to the output directory.
    pub files: Vec<PathBuf>,
}

struct Out<'a> {
    dir: &'a Path,
    md: String,
    written: Written,
    charts: usize,
}

impl Out<'_> {
    fn file(&mut self, rel: &str, content: &str) -> Result<(), ReportError> {
        let path = self.dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| ReportError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        std::fs::write(&path, content).map_err(|source| ReportError::Io {
            path: path.clone(),
            source,
        })?;
        self.written.files.push(PathBuf::from(rel));
        Ok(())
    }

    fn chart(&mut self, title: &str, svg: Option<String>) -> Result<(), ReportError> {
        let Some(svg) = svg else { return Ok(()) };
        self.charts += 1;
        let rel = format!("charts/{:02}-{}.svg", self.charts, slug(title));
        self.file(&rel, &svg)?;
        let _ = writeln!(self.md, "![{title}]({rel})\n");
        Ok(())
    }
}

fn slug(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    s.split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

fn mib(b: u64) -> String {
    format!("{:.1}", b as f64 / f64::from(1u32 << 20))
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or("n/a".into(), |x| format!("{x:.prec$}"))
}

fn lat_ms(l: &Option<Latency>) -> String {
    l.as_ref().map_or("n/a".into(), |l| {
        format!(
            "{:.2} / {:.2} / {:.2}",
            l.p50_us / 1e3,
            l.p99_us / 1e3,
            l.max_us / 1e3
        )
    })
}

fn lat_us(l: &Option<Latency>) -> String {
    l.as_ref().map_or("n/a".into(), |l| {
        format!(
            "{:.0} / {:.0} / {:.0} / {:.0} / {:.0}",
            l.p50_us, l.p90_us, l.p99_us, l.p999_us, l.max_us
        )
    })
}

/// Renders `docs` into `dir` (created if missing; existing report files are
/// replaced, nothing else is touched). Returns what it wrote.
pub fn render(docs: &[Loaded], dir: &Path) -> Result<Written, ReportError> {
    if docs.is_empty() {
        return Err(ReportError::Usage("no results files given".into()));
    }
    std::fs::create_dir_all(dir).map_err(|source| ReportError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let machines: BTreeSet<String> = docs.iter().map(Loaded::machine).collect();
    let multi = machines.len() > 1;
    let mut out = Out {
        dir,
        md: String::from("# kvbench report\n\n"),
        written: Written::default(),
        charts: 0,
    };
    let _ = writeln!(
        out.md,
        "Rendered by kvbench {} from {} results file(s); every figure below comes from them.{}\n",
        env!("CARGO_PKG_VERSION"),
        docs.len(),
        if multi {
            " Results of several machines: run labels carry the machine as `machine/run`."
        } else {
            ""
        }
    );
    machines_table(&mut out.md, docs);
    sources_table(&mut out.md, docs);
    // Several files of one machine are told apart by their run directory.
    let per_file = !multi && docs.len() > 1;
    let label = |d: &Loaded, run: &str| {
        if multi {
            format!("{}/{run}", d.machine())
        } else if per_file {
            let dir = d.path.parent().and_then(|p| p.file_name()).map_or_else(
                || d.path.display().to_string(),
                |n| n.to_string_lossy().to_string(),
            );
            format!("{dir}/{run}")
        } else {
            run.to_string()
        }
    };
    // Repeats of a run (`--repeat K`) keep their label and get `#N`.
    let repeat = |run: &BackendRun| match run.repeat {
        0 => String::new(),
        r => format!("#{}", r + 1),
    };
    let stellar: Vec<(&Loaded, &RunResult)> = docs
        .iter()
        .filter_map(|d| match &d.doc {
            Doc::Stellar(r) => Some((d, r.as_ref())),
            Doc::PointReads(_) | Doc::Crash(_) => None,
        })
        .collect();
    let all: Vec<(String, &BackendRun)> = stellar
        .iter()
        .flat_map(|(d, r)| {
            r.runs
                .iter()
                .map(move |run| (format!("{}{}", label(d, &run.label), repeat(run)), run))
        })
        .collect();
    let (replays, runs): (Vec<_>, Vec<_>) = all.into_iter().partition(|(_, r)| r.replay.is_some());
    if !runs.is_empty() {
        stellar_section(&mut out, &runs)?;
    }
    if !replays.is_empty() {
        replay_section(&mut out, &replays)?;
    }
    // Point-read files of one shape (keys, sizes, reads, limit) share a table.
    let mut groups: Vec<(String, Vec<&Loaded>)> = Vec::new();
    for d in docs {
        if let Doc::PointReads(p) = &d.doc {
            let key = format!(
                "{} {:?}",
                serde_json::to_string(&p.config).unwrap_or_default(),
                p.memory_limit_bytes
            );
            match groups.iter_mut().find(|g| g.0 == key) {
                Some(g) => g.1.push(d),
                None => groups.push((key, vec![d])),
            }
        }
    }
    for (_, members) in &groups {
        point_section(&mut out, members, &label)?;
    }
    for d in docs {
        if let Doc::Crash(c) = &d.doc {
            out.md
                .push_str(&crate::crash::crash_table(c).replacen("# ", "## ", 1));
            out.md.push('\n');
        }
    }
    let md = std::mem::take(&mut out.md);
    out.file("report.md", &md)?;
    Ok(out.written)
}

fn machines_table(md: &mut String, docs: &[Loaded]) {
    md.push_str("## Machines\n\n| machine | CPU | cores | RAM GiB | kernel | data filesystem | build | commit | engines |\n|---|---|---:|---:|---|---|---|---|---|\n");
    let mut seen = BTreeSet::new();
    for d in docs {
        let e = d.env();
        let key = (d.machine(), e.git_commit.clone(), e.build_profile.clone());
        if !seen.insert(key) {
            continue;
        }
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {}{} | {} | {} |",
            d.machine(),
            e.cpu_model.as_deref().unwrap_or("?"),
            e.cores.map_or("?".into(), |c| c.to_string()),
            e.ram_bytes.map_or("?".into(), |b| format!(
                "{:.1}",
                b as f64 / f64::from(1u32 << 30)
            )),
            e.kernel.as_deref().unwrap_or("?"),
            e.data_fs
                .as_ref()
                .map_or("?".into(), |m| format!("{} ({})", m.fs_type, m.mount_point)),
            e.build_profile,
            if e.debug_assertions {
                " **DEBUG: figures not valid**"
            } else {
                ""
            },
            e.git_commit,
            e.engine_versions
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    md.push('\n');
}

fn sources_table(md: &mut String, docs: &[Loaded]) {
    md.push_str("## Results files\n\n| file | workload | seed | started | command |\n|---|---|---:|---|---|\n");
    for d in docs {
        let started = match &d.doc {
            Doc::Stellar(r) => r.started_at.clone(),
            Doc::PointReads(p) => p.started_at.clone(),
            Doc::Crash(c) => c.started_at.clone(),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | `{}` |",
            d.path.display(),
            d.workload(),
            d.seed(),
            started,
            d.command().replace('|', "\\|")
        );
    }
    md.push('\n');
}

fn stellar_section(out: &mut Out<'_>, runs: &[(String, &BackendRun)]) -> Result<(), ReportError> {
    let md = &mut out.md;
    md.push_str("## Ingestion\n\n| run | ledgers | txs | wall s | ledgers/s | memory limit MiB | memory peak MiB | device meter | error |\n|---|---:|---:|---:|---:|---:|---:|---|---|\n");
    for (l, r) in runs {
        let s = r.summary.as_ref();
        let _ = writeln!(
            md,
            "| {l} | {} | {} | {} | {} | {} | {} | {} | {} |",
            s.map_or("n/a".into(), |s| s.ledgers.to_string()),
            s.map_or("n/a".into(), |s| s.txs.to_string()),
            opt(s.map(|s| s.wall_secs), 1),
            opt(s.map(|s| s.ledgers_per_sec), 1),
            r.memory_limit_bytes
                .map_or("none".into(), |b| (b >> 20).to_string()),
            r.memory_peak_bytes
                .map_or("n/a".into(), |b| (b >> 20).to_string()),
            r.device_meter.as_deref().unwrap_or("n/a"),
            r.error.as_deref().unwrap_or("")
        );
    }
    md.push_str("\n## Stores: amplification, time and latency\n\nWrite amplification has two sources: the engine's own byte counters (RocksDB flush + compaction + WAL; MDBX pages written x page size; LMDB has none) and the private device's written bytes after `syncfs`. Space amplification is allocated bytes over the logical bytes written. Latencies are p50 / p99 / max in ms.\n\n| run | store | entries | logical MiB | raw / logical | disk MiB alloc / apparent | space amp | WA engine | WA device | write s | flush s | compaction s | compaction first -> last s | commit ms | flush ms | compaction ms |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n");
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
                "| {l} | {name} | {entries} | {} | {:.2} | {} / {} | {:.2} | {} | {} | {:.2} | {:.2} | {} | {} | {} | {} | {} |",
                mib(st.logical_bytes),
                st.raw_bytes as f64 / st.logical_bytes.max(1) as f64,
                mib(st.disk_allocated_bytes),
                mib(st.disk_apparent_bytes),
                st.space_amp,
                opt(st.write_amp_engine, 2),
                opt(st.write_amp_device, 2),
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
            "| {l} | {} | {} | {} | {} | {:.2} |",
            mib(t.logical_bytes),
            opt(t.write_amp_engine, 2),
            opt(t.write_amp_device, 2),
            opt(t.write_amp_process, 2),
            t.space_amp
        );
    }
    md.push('\n');
    phases_table(md, runs);
    streaming_table(md, runs);
    batch_table(md, runs);
    stellar_charts(out, runs)?;
    csv(out, runs)
}

fn replay_section(out: &mut Out<'_>, runs: &[(String, &BackendRun)]) -> Result<(), ReportError> {
    out.md.push_str("## Replayed operations\n\nEach run replays the same operations (a trace, or a generator's stream); a segment ends at each mark of the stream (a batch).\n\n");
    out.md.push_str(&replay_tables(runs));
    out.md.push('\n');
    phases_table(&mut out.md, runs);
    let series: Vec<Series> = runs
        .iter()
        .map(|(l, r)| Series {
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
        svg::line_chart("TIME PER SEGMENT", "segment", "seconds", &series),
    )
}

fn phases_table(md: &mut String, runs: &[(String, &BackendRun)]) {
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

fn streaming_table(md: &mut String, runs: &[(String, &BackendRun)]) {
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
        );
    }
    md.push('\n');
}

/// First, middle and last batch of each run, as the Stellar report sampled them.
fn batch_table(md: &mut String, runs: &[(String, &BackendRun)]) {
    md.push_str("## Per batch (first, middle, last)\n\nSeconds; device MiB written; full series in `batches.csv`.\n\n| run | batch | ledgers | total s | writer wait s | store | write s | flush s | compaction s | device write MiB | disk MiB |\n|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|\n");
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

fn stellar_charts(out: &mut Out<'_>, runs: &[(String, &BackendRun)]) -> Result<(), ReportError> {
    out.md.push_str("## Charts\n\n");
    let per_batch =
        |f: &dyn Fn(&kvbench_driver::results::BatchRecord) -> Option<f64>| -> Vec<Series> {
            runs.iter()
                .map(|(l, r)| Series {
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
        svg::line_chart("BATCH TIME PER BATCH", "batch", "seconds", &total),
    )?;
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
                &format!("COMPACTION PER BATCH: {store}"),
                "batch",
                "seconds",
                &series,
            ),
        )?;
    }
    let tput: Vec<Series> = runs
        .iter()
        .map(|(l, r)| Series {
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
        svg::line_chart("INGEST THROUGHPUT", "seconds", "MiB/s", &tput),
    )?;
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
            "ONE-STEP LOOKUP LATENCY",
            "us",
            &cats,
            &["p50".into(), "p99".into(), "p99.9".into()],
            &[one(|l| l.p50_us), one(|l| l.p99_us), one(|l| l.p999_us)],
        ),
    )?;
    for store in &stores {
        let amp = |f: fn(&kvbench_driver::results::StoreSummary) -> Option<f64>| {
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
                &format!("AMPLIFICATION: {store}"),
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
                    amp(|s| Some(s.space_amp)),
                ],
            ),
        )?;
    }
    Ok(())
}

fn csv(out: &mut Out<'_>, runs: &[(String, &BackendRun)]) -> Result<(), ReportError> {
    let (b, s) = crate::csv_out::series(runs).map_err(|e| ReportError::Io {
        path: out.dir.join("batches.csv"),
        source: std::io::Error::other(e),
    })?;
    out.file("batches.csv", &b)?;
    out.file("samples.csv", &s)?;
    out.md.push_str("Series: [`batches.csv`](batches.csv) (one row per batch and store), [`samples.csv`](samples.csv) (one row per second of ingestion).\n\n");
    Ok(())
}

fn point_section(
    out: &mut Out<'_>,
    members: &[&Loaded],
    label: &dyn Fn(&Loaded, &str) -> String,
) -> Result<(), ReportError> {
    let points: Vec<(&Loaded, &PointResults)> = members
        .iter()
        .filter_map(|d| match &d.doc {
            Doc::PointReads(p) => Some((*d, p.as_ref())),
            Doc::Stellar(_) | Doc::Crash(_) => None,
        })
        .collect();
    let Some((_, p)) = points.first() else {
        return Ok(());
    };
    let md = &mut out.md;
    let _ = writeln!(
        md,
        "## Point reads: {} keys of {} + {} bytes, {} GETs per measurement, memory limit {}\n\nDevice reads come from the store's private loop device (`/sys/block`), major faults from `getrusage` (how mmap engines read), engine block misses from RocksDB's block cache ticker (a miss may still hit the page cache).\n\n| run | phase | cache | device reads / GET | device KiB / GET | major faults / GET | engine block misses / GET | device reads / missing GET | p50 / p99 us | disk MiB | mismatches |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        p.config.keys,
        p.config.key_bytes,
        p.config.value_bytes,
        p.config.reads,
        p.memory_limit_bytes
            .map_or("none".into(), |b| format!("{} MiB", b >> 20))
    );
    let mut cats = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut cells: Vec<(String, String, f64)> = Vec::new();
    for (d, run) in points
        .iter()
        .flat_map(|(d, p)| p.runs.iter().map(move |r| (*d, r)))
    {
        let l = label(d, &run.backend);
        cats.push(l.clone());
        for m in &run.measurements {
            let c = &m.cost;
            let _ = writeln!(
                md,
                "| {l} | {} | {} | {} | {} | {:.2} | {} | {} | {} | {} | {} |",
                m.phase,
                m.cache.name(),
                opt(c.device_reads_per_get, 2),
                opt(c.device_bytes_per_get.map(|b| b / 1024.0), 2),
                c.major_faults_per_get,
                opt(c.engine_block_misses_per_get, 2),
                opt(c.device_reads_per_missing_get, 2),
                c.latency.as_ref().map_or("n/a".into(), |x| format!(
                    "{:.0} / {:.0}",
                    x.p50_us, x.p99_us
                )),
                mib(m.disk_allocated_bytes),
                c.mismatches
            );
            let n = format!("{} {}", m.phase, m.cache.name());
            if !names.contains(&n) {
                names.push(n.clone());
            }
            if let Some(v) = c.device_reads_per_get {
                cells.push((l.clone(), n, v));
            }
        }
        for s in &run.skipped {
            let _ = writeln!(md, "\n{l}: skipped {s}");
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
        svg::bar_chart("DEVICE READS PER GET", "reads", &cats, &names, &values),
    )
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
            sum.map_or("n/a".into(), |x| x.deletes.to_string()),
            sum.map_or("n/a".into(), |x| x.gets.to_string()),
            sum.map_or("n/a".into(), |x| x.scans.to_string()),
            sum.map_or("n/a".into(), |x| x.mismatches.to_string()),
            opt(sum.map(|x| x.wall_secs), 1),
            opt(sum.map(|x| x.ops_per_sec), 0),
            opt(sum.and_then(|x| x.total.write_amp_engine), 2),
            opt(sum.and_then(|x| x.total.write_amp_device), 2),
            opt(sum.map(|x| x.total.space_amp), 2),
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
    let _ = writeln!(
        s,
        "\nAfter the load: the run phase alone (segments after a `load` or `genesis` mark), the part of its time spent producing the operations (reading the trace or running the generator, inside the throughput's time), and latency in microseconds (p50 / p99; commits include the load's).\n\n| run | load s | run-phase ops | run-phase ops/s | of which producing ops, s | get | scan | commit |\n|---|---:|---:|---:|---:|---|---|---|"
    );
    for (label, run) in runs {
        let Some(rp) = &run.replay else { continue };
        let segs = &rp.segments;
        let loaded = segs
            .first()
            .filter(|g| g.mark == "load" || g.mark == "genesis");
        let rest = &segs[usize::from(loaded.is_some())..];
        let (ops, secs) = rest
            .iter()
            .fold((0u64, 0f64), |(o, t), g| (o + g.ops, t + g.total_secs));
        // Absent when any segment predates the measurement.
        let source: Option<f64> = rest.iter().map(|g| g.source_secs).sum();
        let lat = |f: fn(&kvbench_driver::results::OpLatency) -> &Option<Latency>| {
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
            "| {label} | {} | {ops} | {} | {} | {} | {} | {} |",
            loaded.map_or("n/a".into(), |g| format!("{:.1}", g.total_secs)),
            if secs > 0.0 {
                format!("{:.0}", ops as f64 / secs)
            } else {
                "n/a".into()
            },
            opt(source, 2),
            lat(|l| &l.get),
            lat(|l| &l.scan),
            lat(|l| &l.commit),
        );
    }
    let _ = writeln!(
        s,
        "\n| run | store | entries | logical MiB | disk MiB | space amp | WA engine | WA device | compaction s | commit p99 ms |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
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
                "| {label} | {name} | {entries} | {} | {} | {:.2} | {} | {} | {} | {} |",
                mib(st.logical_bytes),
                mib(st.disk_allocated_bytes),
                st.space_amp,
                opt(st.write_amp_engine, 2),
                opt(st.write_amp_device, 2),
                opt(st.compact_secs, 2),
                opt(st.latency.commit.as_ref().map(|l| l.p99_us / 1e3), 2),
            );
        }
    }
    s
}

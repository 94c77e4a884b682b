//! `ledgerbench report`: markdown with tables and SVG charts, and CSV of the
//! per-batch and per-second series, rendered from results files alone.

use std::fmt::Write;
use std::path::{Path, PathBuf};

mod capacity;
mod fanout;
mod merge;
mod micro;
mod month;
mod openloop;
mod points;
mod replay;
mod soak;
mod sources;
mod stellar;
mod summary;
mod threads;
mod trie;
mod verdict;

pub use capacity::capacity_summary;
pub use fanout::{fanout_summary, held_per_batch};
pub use micro::{micro_line, micro_summary};
pub use openloop::open_loop_table;
use points::point_section;
pub use points::{point_summary, point_table};
use replay::replay_section;
pub use replay::replay_tables;
use stellar::stellar_section;
pub use stellar::{ingested, peak_mib, run_note};
pub use summary::run_summary;
pub use trie::{trie_answer, trie_summary};
use verdict::verdict_section;
pub use verdict::{Horizon, VerdictOptions};

use ledgerbench_results::fanout::FanOutResults;
use ledgerbench_results::points::PointResults;
use ledgerbench_results::{BackendRun, Latency, RunResult};

use crate::ReportError;
use crate::doc::{Doc, Loaded};
use crate::export::{Document, Exporter};
use crate::svg::{self, Series};

pub use crate::export::Written;

/// A report being rendered: its markdown, and every other document (charts,
/// CSV) in the order made. Nothing is written here (see [`crate::export`]).
pub(super) struct Out {
    pub(super) md: String,
    pub(super) documents: Vec<Document>,
    pub(super) charts: usize,
    /// Each chart's SVG by its relative path, for the HTML page.
    pub(super) svgs: std::collections::BTreeMap<String, String>,
}

impl Out {
    pub(super) fn file(&mut self, rel: &str, content: &str) {
        self.documents.push(Document {
            path: PathBuf::from(rel),
            text: content.to_string(),
        });
    }

    fn chart(&mut self, title: &str, svg: Option<String>) {
        let Some(svg) = svg else { return };
        self.charts += 1;
        let rel = format!("charts/{:02}-{}.svg", self.charts, slug(title));
        self.file(&rel, &svg);
        self.svgs.insert(rel.clone(), svg);
        let _ = writeln!(self.md, "![{title}]({rel})\n");
    }
}

pub(super) fn slug(s: &str) -> String {
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

pub(super) fn mib(b: u64) -> String {
    format!("{:.1}", b as f64 / f64::from(1u32 << 20))
}

pub(super) fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or("n/a".into(), |x| format!("{x:.prec$}"))
}

pub(super) fn lat_ms(l: &Option<Latency>) -> String {
    l.as_ref().map_or("n/a".into(), |l| {
        format!(
            "{:.2} / {:.2} / {:.2}",
            l.p50_us / 1e3,
            l.p99_us / 1e3,
            l.max_us / 1e3
        )
    })
}

pub(super) fn lat_us(l: &Option<Latency>) -> String {
    l.as_ref().map_or("n/a".into(), |l| {
        format!(
            "{:.0} / {:.0} / {:.0} / {:.0} / {:.0}",
            l.p50_us, l.p90_us, l.p99_us, l.p999_us, l.max_us
        )
    })
}

/// Renders `docs` into `dir`, which must not exist or be empty. Returns
/// what it wrote.
pub fn render(docs: &[Loaded], dir: &Path) -> Result<Written, ReportError> {
    render_with(docs, dir, &VerdictOptions::default(), false)
}

/// [`render`] with the verdict's prediction settings; `overwrite` lets it
/// write into a directory that already holds files (a report rendered
/// again in place), replacing those of the same name.
pub fn render_with(
    docs: &[Loaded],
    dir: &Path,
    verdict: &VerdictOptions,
    overwrite: bool,
) -> Result<Written, ReportError> {
    let rendered = crate::export::Markdown(*verdict).render(docs)?;
    crate::export::write(dir, &rendered, overwrite)
}

/// [`render_with`], and `report.html` beside `report.md`: one
/// self-contained page with the charts inline (`ledgerbench report --html`).
pub fn render_html(
    docs: &[Loaded],
    dir: &Path,
    verdict: &VerdictOptions,
    overwrite: bool,
) -> Result<Written, ReportError> {
    let rendered = crate::export::Html(*verdict).render(docs)?;
    crate::export::write(dir, &rendered, overwrite)
}

/// The answer that opens the report, as markdown for a README (`ledgerbench
/// report --summary`), writing nothing; `None` when no run had a memory
/// limit, so there is no verdict.
pub fn summary(docs: &[Loaded], verdict: &VerdictOptions) -> Result<Option<String>, ReportError> {
    documents(docs, verdict, false).map(|(_, a)| a.map(|a| a.markdown(false)))
}

/// The answer in brief, for a front page (`ledgerbench report --summary
/// --brief`): the table of picks and one line per caveat; `None` when
/// there is no verdict.
pub fn summary_brief(
    docs: &[Loaded],
    verdict: &VerdictOptions,
) -> Result<Option<String>, ReportError> {
    documents(docs, verdict, false).map(|(_, a)| a.map(|a| a.brief_markdown()))
}

/// The report's documents (`report.md`, charts, CSV, and `report.html`
/// when `html`) and the verdict's answer, if any.
pub(crate) fn documents(
    docs: &[Loaded],
    verdict: &VerdictOptions,
    html: bool,
) -> Result<(Vec<Document>, Option<verdict::Answer>), ReportError> {
    if docs.is_empty() {
        return Err(ReportError::Usage("no results files given".into()));
    }
    let merge = merge::rule(docs, verdict.mixed_machines)?;
    if let Some(note) = &merge.cells_note {
        ledgerbench_core::note!("report: {note}");
    }
    let multi = merge.multi;
    let mut out = Out {
        md: String::from("# ledgerbench report\n\n"),
        documents: Vec::new(),
        charts: 0,
        svgs: Default::default(),
    };
    let _ = writeln!(
        out.md,
        "Rendered by ledgerbench {} from {} results file(s); every figure below comes from them.{}\n",
        env!("CARGO_PKG_VERSION"),
        docs.len(),
        if multi {
            " Results of several machines: run labels carry the machine as `machine/run`."
        } else {
            ""
        }
    );
    // The answer goes here, before the details, once the verdict is known.
    let answer_at = out.md.len();
    sources::machines_table(&mut out.md, docs);
    sources::sources_table(&mut out.md, docs);
    if let Some(note) = &merge.cells_note {
        let _ = writeln!(out.md, "{note}\n");
    }
    // Several files of one machine are told apart by their run directory.
    let per_file = merge.per_file;
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
    let mut answer = sections(&mut out, docs, verdict, &label)?;
    if let Some(a) = &mut answer {
        a.machines = merge.mixed_note.clone();
    }
    let mut md = std::mem::take(&mut out.md);
    if let Some(a) = &answer {
        md.insert_str(answer_at, &a.markdown(true));
    }
    // A recorded error names files under the run's --out on the machine
    // that ran it: shown where the results are now, as the commands are.
    for d in docs {
        md = sources::relative_out(&md, d.command(), &d.path);
    }
    if html {
        let page = crate::html::page(&md, &out.svgs);
        out.file("report.html", &page);
    }
    out.file("report.md", &md);
    Ok((out.documents, answer))
}

/// A verdict per workload of operations among `docs` predicted to `h`,
/// and the first one's answer; says so when none ran under a limit.
fn ops_verdicts(
    out: &mut Out,
    docs: &[Loaded],
    verdict: &VerdictOptions,
    h: verdict::Horizon,
    label: &dyn Fn(&Loaded, &str) -> String,
) -> Option<verdict::Answer> {
    let mut first = None;
    let mut any = false;
    for (name, runs) in ops_runs(docs, label) {
        if let Some(a) = verdict::ops_verdict_section(out, &name, &runs, verdict, h) {
            any = true;
            first = first.or(Some(a));
        }
    }
    if !any {
        ledgerbench_core::note!(
            "--horizon: no run of operations under a memory limit among these results, so no verdict predicts to it"
        );
    }
    first
}

/// The runs of operations (replays, generated workloads) by workload, in
/// first-seen order, labelled as the report labels them.
fn ops_runs<'a>(
    docs: &'a [Loaded],
    label: &dyn Fn(&Loaded, &str) -> String,
) -> Vec<(String, Vec<(String, &'a BackendRun)>)> {
    let mut by: Vec<(String, Vec<(String, &'a BackendRun)>)> = Vec::new();
    for d in docs {
        let Doc::Stellar(r) = &d.doc else {
            continue;
        };
        let ledgerbench_results::workload::WorkloadConfig::Ops(o) = &r.config else {
            continue;
        };
        let name = o.header.workload.clone();
        let runs = r.runs.iter().map(|run| {
            let repeat = match run.repeat {
                0 => String::new(),
                k => format!("#{}", k + 1),
            };
            (format!("{}{repeat}", label(d, &run.label)), run)
        });
        match by.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.extend(runs),
            None => by.push((name, runs.collect())),
        }
    }
    by
}

/// Every workload's sections, in a fixed order: ingestion and the verdict,
/// replayed operations, point reads (files of one shape share a table),
/// lookup fan-out, crash tests. Returns the verdict's answer, if any.
fn sections(
    out: &mut Out,
    docs: &[Loaded],
    verdict: &VerdictOptions,
    label: &dyn Fn(&Loaded, &str) -> String,
) -> Result<Option<verdict::Answer>, ReportError> {
    // Repeats of a run (`--repeat K`) keep their label and get `#N`.
    let repeat = |run: &BackendRun| match run.repeat {
        0 => String::new(),
        r => format!("#{}", r + 1),
    };
    let all: Vec<(String, &BackendRun)> = docs
        .iter()
        .filter_map(|d| match &d.doc {
            Doc::Stellar(r) => Some((d, r.as_ref())),
            _ => None,
        })
        .flat_map(|(d, r)| {
            r.runs
                .iter()
                .map(move |run| (format!("{}{}", label(d, &run.label), repeat(run)), run))
        })
        .collect();
    let (replays, runs): (Vec<_>, Vec<_>) = all.into_iter().partition(|(_, r)| r.replay.is_some());
    let fanouts: Vec<(&Loaded, &FanOutResults)> = docs
        .iter()
        .filter_map(|d| match &d.doc {
            Doc::FanOut(f) => Some((d, f.as_ref())),
            _ => None,
        })
        .collect();
    let fanout_runs: Vec<(String, &ledgerbench_results::fanout::FanOutRun)> = fanouts
        .iter()
        .flat_map(|(d, f)| f.runs.iter().map(move |r| (label(d, &r.backend), r)))
        .collect();
    let mut answer = None;
    if !runs.is_empty() {
        stellar_section(out, &runs)?;
        answer = verdict_section(out, &runs, verdict, &fanout_runs);
        month::month_section(out, &runs);
    }
    if let Some(h) = verdict.horizon {
        let a = ops_verdicts(out, docs, verdict, h, label);
        answer = answer.or(a);
    }
    // Capacity searches among the results answer beside the verdict (a
    // Stellar one, or any workload's at a horizon).
    if let Some(a) = &mut answer {
        a.capacity = docs
            .iter()
            .filter_map(|d| match &d.doc {
                Doc::Capacity(c) => Some(capacity::verdict_row(c)),
                _ => None,
            })
            .collect();
    }
    soak::soak_section(out, docs, label);
    if !replays.is_empty() {
        replay_section(out, &replays);
    }
    for members in point_groups(docs) {
        point_section(out, &members, label);
    }
    if !fanouts.is_empty() {
        fanout::fanout_section(out, &fanouts, label);
    }
    capacity::capacity_section(out, docs);
    trie::trie_section(out, docs);
    micro::micro_section(out, docs);
    for d in docs {
        if let Doc::Crash(c) = &d.doc {
            out.md
                .push_str(&crate::crash::crash_table(c).replacen("# ", "## ", 1));
            out.md.push('\n');
        }
    }
    Ok(answer)
}

/// Point-read files grouped by shape (keys, sizes, reads, limit), in
/// first-seen order: a group shares a table.
fn point_groups(docs: &[Loaded]) -> Vec<Vec<&Loaded>> {
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
    groups.into_iter().map(|(_, m)| m).collect()
}

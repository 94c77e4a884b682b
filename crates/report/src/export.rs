//! One path from results files to every output: each format is an
//! [`Exporter`] that renders loaded results into documents (a path and its
//! text) without touching the disk; [`write`] is the one place that writes
//! them. `ledgerbench report`, `ledgerbench export` and the summary a run
//! prints at its end all go through it.

use std::path::{Path, PathBuf};

use crate::ReportError;
use crate::doc::{Doc, Loaded};
use crate::render::{self, VerdictOptions};

/// A rendered document: where it goes, relative to the output directory,
/// and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// Path relative to the output directory (`report.md`, `charts/01-x.svg`).
    pub path: PathBuf,
    /// Its content.
    pub text: String,
}

/// An output format of results files.
pub trait Exporter {
    /// The format's name.
    fn name(&self) -> &'static str;
    /// Renders `docs` into documents; writes nothing.
    fn render(&self, docs: &[Loaded]) -> Result<Vec<Document>, ReportError>;
}

/// The markdown report: `report.md`, its SVG charts and CSV series.
pub struct Markdown(pub VerdictOptions);

/// The markdown report and `report.html`, one self-contained page (charts
/// inline, tables sortable).
pub struct Html(pub VerdictOptions);

/// The report's CSV series alone.
pub struct Csv;

/// The report's SVG charts alone.
pub struct Svg;

/// Bencher Metric Format JSON (`bencher.json`), for benchmark-tracking
/// services.
pub struct Bencher;

/// The verdict's answer as markdown for a README (`verdict.md`): per store
/// the recommended config, runner-up, margin and growth.
pub struct Verdict(pub VerdictOptions);

/// What a run prints at its end (`summary.md`): the report's own tables of
/// its results, text only, so the terminal and the report agree.
pub struct RunSummary;

impl Exporter for Markdown {
    fn name(&self) -> &'static str {
        "markdown"
    }
    fn render(&self, docs: &[Loaded]) -> Result<Vec<Document>, ReportError> {
        render::documents(docs, &self.0, false).map(|(d, _)| d)
    }
}

impl Exporter for Html {
    fn name(&self) -> &'static str {
        "html"
    }
    fn render(&self, docs: &[Loaded]) -> Result<Vec<Document>, ReportError> {
        render::documents(docs, &self.0, true).map(|(d, _)| d)
    }
}

/// The markdown report's documents whose path ends with `ext`.
fn of_kind(docs: &[Loaded], ext: &str) -> Result<Vec<Document>, ReportError> {
    let all = Markdown(VerdictOptions::default()).render(docs)?;
    Ok(all
        .into_iter()
        .filter(|d| d.path.extension().is_some_and(|e| e == ext))
        .collect())
}

impl Exporter for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }
    fn render(&self, docs: &[Loaded]) -> Result<Vec<Document>, ReportError> {
        of_kind(docs, "csv")
    }
}

impl Exporter for Svg {
    fn name(&self) -> &'static str {
        "svg"
    }
    fn render(&self, docs: &[Loaded]) -> Result<Vec<Document>, ReportError> {
        of_kind(docs, "svg")
    }
}

impl Exporter for Bencher {
    fn name(&self) -> &'static str {
        "bencher"
    }
    fn render(&self, docs: &[Loaded]) -> Result<Vec<Document>, ReportError> {
        let bmf = crate::bencher::export(docs);
        if bmf.as_object().is_some_and(serde_json::Map::is_empty) {
            return Err(ReportError::Usage(
                "nothing to export: no run finished with figures (an interrupted run keeps its batches, not a summary)".into(),
            ));
        }
        let text =
            serde_json::to_string_pretty(&bmf).map_err(|e| ReportError::Usage(e.to_string()))?;
        Ok(vec![Document {
            path: "bencher.json".into(),
            text,
        }])
    }
}

impl Exporter for Verdict {
    fn name(&self) -> &'static str {
        "verdict"
    }
    fn render(&self, docs: &[Loaded]) -> Result<Vec<Document>, ReportError> {
        // Crash results have no verdict to summarise: their answer is the
        // durability matrix.
        let crash: Vec<_> = docs
            .iter()
            .filter_map(|d| match &d.doc {
                crate::doc::Doc::Crash(r) => Some(&**r),
                _ => None,
            })
            .collect();
        if !crash.is_empty() {
            if crash.len() != docs.len() {
                return Err(ReportError::Usage(
                    "--summary takes crash results or benchmark results, not both at once".into(),
                ));
            }
            return Ok(vec![Document {
                path: "durability.md".into(),
                text: crate::crash_matrix::matrix(&crash),
            }]);
        }
        let Some(text) = render::summary(docs, &self.0)? else {
            return Err(ReportError::Usage(
                "no run in these results ran under a memory limit, so there is no verdict to summarise".into(),
            ));
        };
        Ok(vec![Document {
            path: "verdict.md".into(),
            text,
        }])
    }
}

impl RunSummary {
    /// The summary of one run's results, as the run has them in memory (no
    /// file, and no JSON copy of them, needed).
    pub fn text(doc: &Doc) -> String {
        match doc {
            Doc::Stellar(r) => render::run_summary(r),
            Doc::PointReads(p) => render::point_summary(p),
            Doc::FanOut(f) => render::fanout_summary(f),
            Doc::Capacity(c) => render::capacity_summary(c),
            Doc::Trie(t) => render::trie_summary(t),
            Doc::Micro(m) => render::micro_summary(m),
            Doc::Crash(c) => crate::crash::crash_table(c),
        }
    }
}

impl Exporter for RunSummary {
    fn name(&self) -> &'static str {
        "summary"
    }
    fn render(&self, docs: &[Loaded]) -> Result<Vec<Document>, ReportError> {
        let text = docs
            .iter()
            .map(|d| Self::text(&d.doc))
            .collect::<Vec<_>>()
            .join("\n");
        Ok(vec![Document {
            path: "summary.md".into(),
            text,
        }])
    }
}

/// Every exporter `ledgerbench report --format` takes, by name.
pub fn by_name(name: &str, verdict: VerdictOptions) -> Option<Box<dyn Exporter>> {
    Some(match name {
        "markdown" => Box::new(Markdown(verdict)),
        "html" => Box::new(Html(verdict)),
        "csv" => Box::new(Csv),
        "svg" => Box::new(Svg),
        "bencher" => Box::new(Bencher),
        "verdict" => Box::new(Verdict(verdict)),
        "summary" => Box::new(RunSummary),
        _ => return None,
    })
}

/// The files a report wrote.
#[derive(Debug, Default)]
pub struct Written {
    /// Every file, relative to the output directory.
    pub files: Vec<PathBuf>,
}

/// Writes `docs` under `dir`. A directory that already holds files is
/// refused before anything is written (ledgerbench does not overwrite what
/// it did not create) unless `overwrite`, which replaces files of the same
/// name and leaves the others.
pub fn write(dir: &Path, docs: &[Document], overwrite: bool) -> Result<Written, ReportError> {
    if !overwrite
        && let Ok(mut entries) = std::fs::read_dir(dir)
        && entries.next().is_some()
    {
        return Err(ReportError::Usage(format!(
            "report directory {} is not empty and ledgerbench does not overwrite files it did not create; \
             give a new --out directory, or pass --overwrite to render into it (files of the same name are replaced)",
            dir.display()
        )));
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ReportError::Io { path, source }
    };
    let mut written = Written::default();
    for d in docs {
        let path = dir.join(&d.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&path, &d.text).map_err(io(&path))?;
        written.files.push(d.path.clone());
    }
    if docs.is_empty() {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    Ok(written)
}

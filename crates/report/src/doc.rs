//! Loading results files, whatever workload wrote them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ledgerbench_results::capacity::CapacityResults;
use ledgerbench_results::crash::CrashResults;
use ledgerbench_results::env::EnvInfo;
use ledgerbench_results::fanout::FanOutResults;
use ledgerbench_results::points::PointResults;
use ledgerbench_results::{RunHeader, RunResult, SCHEMA_VERSION, SegmentRecord};

use crate::ReportError;

/// A results file's content, by workload.
#[derive(Debug, Clone)]
pub enum Doc {
    /// `ledgerbench run stellar` (and any workload on the batch driver).
    Stellar(Box<RunResult>),
    /// `ledgerbench run point-reads`.
    PointReads(Box<PointResults>),
    /// `ledgerbench run crash`.
    Crash(Box<CrashResults>),
    /// `ledgerbench run fan-out`.
    FanOut(Box<FanOutResults>),
    /// `ledgerbench run capacity`.
    Capacity(Box<CapacityResults>),
    /// `ledgerbench run trie`.
    Trie(Box<ledgerbench_results::trie::TrieResults>),
    /// `ledgerbench run micro`.
    Micro(Box<ledgerbench_results::micro::MicroResults>),
}

/// A results file as loaded.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The file it came from.
    pub path: PathBuf,
    /// Its content.
    pub doc: Doc,
    /// Its content as JSON, for the generic metric walk.
    pub json: serde_json::Value,
}

impl Loaded {
    /// Schema, workload, seed, time, command, machine.
    pub fn header(&self) -> &RunHeader {
        match &self.doc {
            Doc::Stellar(r) => &r.header,
            Doc::PointReads(r) => &r.header,
            Doc::Crash(r) => &r.header,
            Doc::FanOut(r) => &r.header,
            Doc::Capacity(r) => &r.header,
            Doc::Trie(r) => &r.header,
            Doc::Micro(r) => &r.header,
        }
    }

    /// The workload name.
    pub fn workload(&self) -> &str {
        &self.header().workload
    }

    /// Where it ran.
    pub fn env(&self) -> &EnvInfo {
        &self.header().env
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.header().seed
    }

    /// The command that produced it.
    pub fn command(&self) -> &str {
        &self.header().command
    }

    /// The durability level the run was made at; absent in older results.
    pub fn durability(&self) -> Option<ledgerbench_core::Durability> {
        match &self.doc {
            // Each crash run names its own level.
            Doc::Crash(_) => None,
            _ => self.header().durability,
        }
    }

    /// The workload's config, as JSON.
    pub fn config(&self) -> serde_json::Value {
        match &self.doc {
            Doc::Stellar(r) => serde_json::to_value(&r.config).unwrap_or_default(),
            Doc::PointReads(r) => serde_json::to_value(&r.config).unwrap_or_default(),
            Doc::FanOut(r) => serde_json::to_value(&r.config).unwrap_or_default(),
            Doc::Capacity(r) => serde_json::to_value(&r.config).unwrap_or_default(),
            Doc::Trie(r) => serde_json::to_value(&r.config).unwrap_or_default(),
            Doc::Micro(r) => serde_json::to_value(&r.config).unwrap_or_default(),
            Doc::Crash(r) => serde_json::json!({
                "shape": r.shape,
                "batches_per_cycle": r.batches_per_cycle
            }),
        }
    }

    /// The machine dimension: the host name, or the file when it has none.
    pub fn machine(&self) -> String {
        self.env()
            .host
            .clone()
            .unwrap_or_else(|| self.path.display().to_string())
    }
}

/// Loads a results file; a directory means its `results.json`.
pub fn load(path: &Path) -> Result<Loaded, ReportError> {
    let file = if path.is_dir() {
        path.join("results.json")
    } else {
        path.to_path_buf()
    };
    let bytes = std::fs::read(&file).map_err(|source| ReportError::Io {
        path: file.clone(),
        source,
    })?;
    let mut loaded = parse(&file, &bytes)?;
    if let Doc::Stellar(r) = &mut loaded.doc {
        read_segments(&file, r)?;
    }
    Ok(loaded)
}

/// One line of a run's `segments.jsonl`.
#[derive(serde::Deserialize)]
struct SegmentLine {
    label: String,
    #[serde(flatten)]
    segment: SegmentRecord,
}

/// Fills in the segments of runs that keep them in a file beside the
/// results (soaks), from that file's lines of each run's label; each file
/// read once, however many runs it holds.
fn read_segments(file: &Path, r: &mut RunResult) -> Result<(), ReportError> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut by_file: BTreeMap<String, BTreeMap<String, Vec<SegmentRecord>>> = BTreeMap::new();
    for run in &mut r.runs {
        let Some(replay) = &mut run.replay else {
            continue;
        };
        let Some(name) = replay.segments_file.clone() else {
            continue;
        };
        if !by_file.contains_key(&name) {
            by_file.insert(name.clone(), segment_lines(&dir.join(&name))?);
        }
        if let Some(mine) = by_file.get_mut(&name).and_then(|m| m.remove(&run.label)) {
            replay.segments = mine;
        }
    }
    Ok(())
}

/// The segments of a `segments.jsonl`, by run label, in file order.
fn segment_lines(path: &Path) -> Result<BTreeMap<String, Vec<SegmentRecord>>, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out: BTreeMap<String, Vec<SegmentRecord>> = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let l: SegmentLine = serde_json::from_str(line).map_err(|e| ReportError::BadResults {
            path: path.to_path_buf(),
            why: format!("line {}: {e}", i + 1),
        })?;
        out.entry(l.label).or_default().push(l.segment);
    }
    Ok(out)
}

/// Reads a results file's `bytes`; `file` names it in errors.
pub fn parse(file: &Path, bytes: &[u8]) -> Result<Loaded, ReportError> {
    let file = file.to_path_buf();
    let bad = |why: String| ReportError::BadResults {
        path: file.clone(),
        why,
    };
    let json: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        bad(format!(
            "not JSON ({e}); expected a ledgerbench results.json"
        ))
    })?;
    let version = json
        .get("schema_version")
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| bad("no `schema_version`: not a ledgerbench results file".into()))?;
    if version != u64::from(SCHEMA_VERSION) {
        return Err(bad(format!(
            "schema version {version}, this ledgerbench reads {SCHEMA_VERSION}: render it with the ledgerbench that wrote it"
        )));
    }
    let workload = json
        .get("workload")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_string();
    // Parsed from the bytes, not the value, so a field of the wrong type is
    // reported with its line and column.
    let typed = |e: serde_json::Error| bad(format!("{e} (a field of the wrong type or missing)"));
    let doc = match workload.as_str() {
        "point-reads" => Doc::PointReads(Box::new(serde_json::from_slice(bytes).map_err(typed)?)),
        "fan-out" => Doc::FanOut(Box::new(serde_json::from_slice(bytes).map_err(typed)?)),
        "capacity" => Doc::Capacity(Box::new(serde_json::from_slice(bytes).map_err(typed)?)),
        "trie" => Doc::Trie(Box::new(serde_json::from_slice(bytes).map_err(typed)?)),
        "micro" => Doc::Micro(Box::new(serde_json::from_slice(bytes).map_err(typed)?)),
        "crash" => Doc::Crash(Box::new(serde_json::from_slice(bytes).map_err(typed)?)),
        "" => return Err(bad("no `workload` field".into())),
        _ => Doc::Stellar(Box::new(serde_json::from_slice(bytes).map_err(typed)?)),
    };
    Ok(Loaded {
        path: file,
        doc,
        json,
    })
}

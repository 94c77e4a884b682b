//! How results files merge into one report: run labels as they are (one
//! file, or the cells of one planned sweep), prefixed by their directory
//! (several runs of one machine), or by their machine (several machines);
//! and the refusal to fit one cost model across different hardware.

use std::collections::{BTreeMap, BTreeSet};

use crate::ReportError;
use crate::doc::{Doc, Loaded};

/// How labels are told apart in a merged report.
pub(crate) struct Merge {
    /// Results of several machines: labels carry the machine.
    pub(crate) multi: bool,
    /// Several files of one machine that are not one sweep's cells:
    /// labels carry their directory.
    pub(crate) per_file: bool,
    /// What the report says about the cells merged, if they are cells.
    pub(crate) cells_note: Option<String>,
    /// Which results came from which kind of machine, when the verdict's
    /// runs span several and the reader asked for it (`--mixed-machines`).
    pub(crate) mixed_note: Option<String>,
}

/// The merge rule of `docs`; refuses a verdict over different hardware
/// unless `mixed_machines`, and a cell given twice.
pub(crate) fn rule(docs: &[Loaded], mixed_machines: bool) -> Result<Merge, ReportError> {
    let hosts: BTreeSet<String> = docs.iter().map(Loaded::machine).collect();
    // Only runs the verdict fits a model to (memory-limited Stellar runs)
    // make different hardware a problem; other sections show each machine.
    let fitted: BTreeSet<String> = docs
        .iter()
        .filter(|d| match &d.doc {
            Doc::Stellar(r) => r.runs.iter().any(|x| x.memory_limit_bytes.is_some()),
            _ => false,
        })
        .map(|d| d.env().machine_class())
        .collect();
    let mixed_note = (fitted.len() > 1).then(|| mixed_note(docs));
    if fitted.len() > 1 && !mixed_machines {
        return Err(ReportError::Usage(format!(
            "these results ran on {} kinds of machine ({}); the verdict fits one cost model per design and would mix their timings. \
             Run the sweep's cells on one kind of machine, or pass --mixed-machines to merge anyway (run labels then carry the machine)",
            fitted.len(),
            fitted.into_iter().collect::<Vec<_>>().join("; ")
        )));
    }
    let plan = docs
        .first()
        .and_then(|d| d.header().cell.as_ref())
        .map(|c| &c.plan);
    let one_sweep = docs.len() > 1
        && plan.is_some()
        && docs
            .iter()
            .all(|d| d.header().cell.as_ref().map(|c| &c.plan) == plan);
    if !one_sweep {
        let multi = hosts.len() > 1;
        return Ok(Merge {
            multi,
            per_file: !multi && docs.len() > 1,
            cells_note: None,
            mixed_note,
        });
    }
    // Cells of one sweep: hosts differ between pods or runners of one
    // kind, so hardware, not the host name, decides whether they are one
    // machine; labels stay the sweep's.
    let classes: BTreeSet<String> = docs.iter().map(|d| d.env().machine_class()).collect();
    let mut seen: BTreeMap<usize, &Loaded> = BTreeMap::new();
    let mut of = 0;
    for d in docs {
        let c = d
            .header()
            .cell
            .as_ref()
            .expect("checked: every doc is a cell");
        of = c.of;
        if let Some(first) = seen.insert(c.index, d) {
            return Err(ReportError::Usage(format!(
                "cell {} is given twice ({} and {}); merge one results directory per cell",
                c.id,
                first.path.display(),
                d.path.display()
            )));
        }
    }
    let missing = (0..of).filter(|i| !seen.contains_key(i)).count();
    let mut note = format!(
        "Cells of one planned sweep (plan `{}`): {} of its {of} jobs merged",
        plan.map_or("?", |p| p.as_str()),
        seen.len()
    );
    if missing > 0 {
        note.push_str(&format!("; {missing} missing, so the sweep is incomplete"));
    }
    note.push('.');
    Ok(Merge {
        multi: classes.len() > 1,
        per_file: false,
        cells_note: Some(note),
        mixed_note,
    })
}

/// The verdict's results by kind of machine, for a reader who merged
/// different hardware on purpose: the designs of one kind were measured
/// beside each other, those of different kinds were not.
fn mixed_note(docs: &[Loaded]) -> String {
    let mut by_class: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for d in docs {
        if let Doc::Stellar(r) = &d.doc
            && r.runs.iter().any(|x| x.memory_limit_bytes.is_some())
        {
            let name = d.path.parent().and_then(|p| p.file_name()).map_or_else(
                || d.path.display().to_string(),
                |n| n.to_string_lossy().to_string(),
            );
            by_class
                .entry(d.env().machine_class())
                .or_default()
                .push(format!("`{name}`"));
        }
    }
    format!(
        "**Mixed machines** (merged with `--mixed-machines`): the runs come from {} kinds of machine, so designs of different kinds are compared across hardware, not side by side: {}.",
        by_class.len(),
        by_class
            .iter()
            .map(|(class, dirs)| format!("{class}: {}", dirs.join(", ")))
            .collect::<Vec<_>>()
            .join("; ")
    )
}

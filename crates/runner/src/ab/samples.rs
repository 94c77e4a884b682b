//! The judged timings of `ab`'s runs: read from each run's results, kept
//! in ab.json, judged per metric.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::bail;
use ledgerbench_report::ab::{self, Judgement, Side};
use ledgerbench_report::compare::glob;
use ledgerbench_report::doc;
use ledgerbench_report::metrics::{self, Better};

use super::DEFAULT_METRICS;

/// The selected timings of every run, in run order: what a judgement is
/// made from, kept in ab.json so it can be made again.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Samples {
    /// Each metric and whether lower is better, in first-seen order.
    pub metrics: Vec<(String, bool)>,
    /// Each run: round, side, results path, its values by metric.
    pub runs: Vec<(usize, Side, PathBuf, BTreeMap<String, f64>)>,
}

impl Samples {
    /// Each metric's values in run order, as `ab::judge` takes them.
    pub fn series(&self) -> Vec<(String, ab::Series)> {
        self.metrics
            .iter()
            .map(|(key, _)| {
                let values = self
                    .runs
                    .iter()
                    .map(|(r, s, _, m)| (*r, *s, m.get(key).copied()))
                    .collect();
                (key.clone(), values)
            })
            .collect()
    }

    /// Each metric judged at `alpha`; one with too few pairs is said and
    /// left out.
    pub fn judge(&self, alpha: f64) -> Vec<Judgement> {
        let mut rows = Vec::new();
        for ((key, lower), (_, values)) in self.metrics.iter().zip(self.series()) {
            match ab::judge(key, *lower, &values, alpha) {
                Some(j) => rows.push(j),
                None => {
                    ledgerbench_core::note!(
                        "ab: {key} not judged: fewer than two pairs or two same-code pairs have it"
                    )
                }
            }
        }
        rows
    }
}

/// Every timing of the runs that `selected` names (`*` wildcards, on the
/// metric or `run/metric`; none: [`DEFAULT_METRICS`]).
pub fn collect(selected: &[String], runs: &[(usize, Side, PathBuf)]) -> anyhow::Result<Samples> {
    let patterns: Vec<String> = if selected.is_empty() {
        DEFAULT_METRICS.iter().map(|s| s.to_string()).collect()
    } else {
        selected.to_vec()
    };
    let mut samples = Samples {
        metrics: Vec::new(),
        runs: Vec::new(),
    };
    for (r, s, p) in runs {
        let d = doc::load(p)?;
        if d.header().cell.is_some() {
            bail!("{}: a sweep cell, not a run of ab's workload", p.display());
        }
        let mut values = BTreeMap::new();
        for m in metrics::extract(&d, None) {
            let key = format!("{}/{}", m.run, m.name);
            if !patterns.iter().any(|p| glob(p, &m.name) || glob(p, &key)) {
                continue;
            }
            if !samples.metrics.iter().any(|k| k.0 == key) {
                samples
                    .metrics
                    .push((key.clone(), m.better == Better::Lower));
            }
            values.insert(key, m.value);
        }
        samples.runs.push((*r, *s, p.clone(), values));
    }
    if samples.metrics.is_empty() {
        bail!(
            "no metric of these results matches {}; `ledgerbench compare` lists their names",
            patterns.join(", ")
        );
    }
    Ok(samples)
}

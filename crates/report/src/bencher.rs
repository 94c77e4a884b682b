//! Export in Bencher Metric Format (BMF) JSON, for benchmark-tracking
//! services: `{ benchmark: { measure: { value, lower_value, upper_value } } }`.
//!
//! A benchmark is `workload/run/path` and a measure is the metric's leaf
//! name; repeated runs give the median as value and their range as bounds.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::doc::{Doc, Loaded};
use crate::metrics::extract;

/// The BMF document of every metric in `docs`.
pub fn export(docs: &[Loaded]) -> Value {
    let mut values: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for d in docs {
        for m in extract(d, None) {
            let (path, leaf) = m.name.rsplit_once('.').unwrap_or(("", &m.name));
            let bench = if path.is_empty() {
                format!("{}/{}", d.workload(), m.run)
            } else {
                format!("{}/{}/{path}", d.workload(), m.run)
            };
            values
                .entry((bench, leaf.to_string()))
                .or_default()
                .push(m.value);
        }
    }
    let mut out = serde_json::Map::new();
    for ((bench, measure), mut v) in values {
        ledgerbench_core::quantile::sort(&mut v);
        let n = v.len();
        let Some(median) = ledgerbench_core::quantile::quantile_sorted(&v, 0.5) else {
            continue;
        };
        let mut m = json!({ "value": median });
        if n > 1 {
            m["lower_value"] = json!(v[0]);
            m["upper_value"] = json!(v[n - 1]);
        }
        out.entry(bench)
            .or_insert_with(|| Value::Object(serde_json::Map::new()))
            .as_object_mut()
            .map(|o| o.insert(measure, m));
    }
    Value::Object(out)
}

/// Runs in `docs` that give nothing to export, each with why: a run that
/// was interrupted before it finished a summary has no figures.
pub fn empty_runs(docs: &[Loaded]) -> Vec<String> {
    let mut empty = Vec::new();
    for d in docs {
        let with: std::collections::BTreeSet<String> =
            extract(d, None).into_iter().map(|m| m.run).collect();
        if let Doc::Stellar(r) = &d.doc {
            for run in r.runs.iter().filter(|run| !with.contains(&run.label)) {
                let why = run.error.as_deref().unwrap_or("it has no summary");
                empty.push(format!("{} run `{}`: {why}", d.path.display(), run.label));
            }
        }
    }
    empty
}

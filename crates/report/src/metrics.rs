//! Every numeric figure of a results file as a flat, named metric.
//!
//! The walk is generic over the results JSON, so a figure added to the
//! results schema reaches comparisons and exports without code here; only
//! its class (how a comparison judges it) comes from its name's suffix.

use serde_json::Value;

use crate::doc::Loaded;

/// How a comparison judges a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// Wall or CPU time, latency, rates: noisy; judged over repeated runs.
    Timing,
    /// Nearly deterministic counters (bytes, amplification, IO per GET):
    /// judged on a tight threshold.
    Counter,
    /// Must not change at all (workload identity: entries, logical bytes,
    /// mismatches).
    Exact,
    /// Shown, never judged (peak RSS, fault counts, sample counts).
    Info,
}

/// Which direction is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// Smaller is better (time, bytes, IO).
    Lower,
    /// Bigger is better (throughput).
    Higher,
}

/// One figure of one run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Metric {
    /// Run label (backend or hybrid), with the machine when results merge.
    pub run: String,
    /// Path inside the run, dot-separated (`summary.stores.txdata.space_amp`).
    pub name: String,
    /// The value.
    pub value: f64,
    /// How comparisons judge it.
    pub class: Class,
    /// Which direction is better.
    pub better: Better,
    /// Unit (`s`, `us`, `B`, `/s`, or empty).
    pub unit: &'static str,
}

/// Classifies a metric by its leaf name (the last path segment).
pub fn classify(path: &str) -> (Class, Better, &'static str) {
    let leaf = path.rsplit('.').next().unwrap_or(path);
    let under = |seg: &str| path.split('.').any(|p| p == seg);
    // Reads over the short verification phase follow what the page cache
    // kept and what background compaction happened to do: shown, never
    // judged (a gate on them would fail at random).
    if under("lookup_reads") {
        return (Class::Info, Better::Lower, "");
    }
    if leaf.ends_with("per_sec") {
        return (Class::Timing, Better::Higher, "/s");
    }
    if leaf.ends_with("_secs") || leaf.starts_with("compact_first_last_secs") {
        return (Class::Timing, Better::Lower, "s");
    }
    if leaf.ends_with("_us") {
        return (Class::Timing, Better::Lower, "us");
    }
    match leaf {
        "mismatches" | "logical_bytes" | "raw_bytes" | "txs" | "batches" | "entries" | "reads"
        | "missing_reads" => return (Class::Exact, Better::Lower, ""),
        // Ledgers ingested are fixed by the config; during streaming they
        // are counted per phase and fixed too.
        "ledgers" if !under("samples") => return (Class::Exact, Better::Lower, ""),
        "max_rss_bytes" | "memory_peak_bytes" | "count" | "major_faults" | "minor_faults"
        | "lookup_workers" => return (Class::Info, Better::Lower, ""),
        _ => {}
    }
    // Heap and RSS figures follow the allocator and the kernel, not the
    // workload: shown, never judged.
    if under("memory") {
        return (Class::Info, Better::Lower, "B");
    }
    if leaf.contains("_amp") || leaf.ends_with("per_get") || leaf.ends_with("per_missing_get") {
        return (Class::Counter, Better::Lower, "");
    }
    if leaf.ends_with("_bytes") {
        return (Class::Counter, Better::Lower, "B");
    }
    (Class::Info, Better::Lower, "")
}

/// Key of an array element that names it, so arrays of phases and
/// measurements become stable paths.
fn element_key(v: &Value) -> Option<String> {
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    match (s("phase"), s("cache")) {
        (Some(p), Some(c)) => Some(format!("{p}.{c}")),
        (Some(p), None) => Some(p),
        _ => s("store").or_else(|| {
            v.get("batch")
                .and_then(Value::as_u64)
                .map(|n| format!("batch{n}"))
        }),
    }
}

fn walk(prefix: &str, v: &Value, out: &mut Vec<(String, f64)>) {
    let join = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        Value::Number(n) => {
            if let Some(f) = n.as_f64() {
                out.push((prefix.to_string(), f));
            }
        }
        Value::Object(m) => {
            for (k, v) in m {
                // Configs and engine snapshots are inputs and state, not results.
                if matches!(
                    k.as_str(),
                    "config" | "engine" | "engine_after_load" | "samples"
                ) {
                    continue;
                }
                walk(&join(k), v, out);
            }
        }
        Value::Array(a) => {
            for (i, e) in a.iter().enumerate() {
                match e {
                    Value::Number(_) => walk(&format!("{prefix}_{i}"), e, out),
                    Value::Object(_) => {
                        if let Some(k) = element_key(e) {
                            walk(&join(&k), e, out);
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// Every metric of every run in a results file. `machine` prefixes run
/// labels when results of several machines are merged.
pub fn extract(doc: &Loaded, machine: Option<&str>) -> Vec<Metric> {
    extract_scoped(doc, machine, false)
}

/// [`extract`] plus every batch's figures (`batches.batchN.…`), for gates:
/// a per-batch engine counter catches a meter that breaks in one batch
/// only; exports keep to the run-level figures.
pub fn extract_with_batches(doc: &Loaded) -> Vec<Metric> {
    extract_scoped(doc, None, true)
}

fn extract_scoped(doc: &Loaded, machine: Option<&str>, batches: bool) -> Vec<Metric> {
    let mut out = Vec::new();
    let runs = doc
        .json
        .get("runs")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for run in &runs {
        let label = run
            .get("label")
            .or_else(|| run.get("backend"))
            .and_then(Value::as_str)
            .unwrap_or("?");
        let label = match machine {
            Some(m) => format!("{m}/{label}"),
            None => label.to_string(),
        };
        let mut flat = Vec::new();
        if batches && let Some(v) = run.get("batches") {
            walk("batches", v, &mut flat);
        }
        for key in [
            "summary",
            "streaming",
            "phases",
            "measurements",
            "load_secs",
            "compact_secs",
            "memory_peak_bytes",
            "replay",
        ] {
            if let Some(v) = run.get(key) {
                walk(key, v, &mut flat);
            }
        }
        for (name, value) in flat {
            let (class, better, unit) = classify(&name);
            out.push(Metric {
                run: label.clone(),
                name,
                value,
                class,
                better,
                unit,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_decide_the_class() {
        assert_eq!(classify("summary.wall_secs").0, Class::Timing);
        assert_eq!(classify("summary.ledgers_per_sec").1, Better::Higher);
        assert_eq!(
            classify("summary.stores.txdata.write_amp_engine").0,
            Class::Counter
        );
        assert_eq!(
            classify("measurements.after-compaction.cold.cost.device_reads_per_get").0,
            Class::Counter
        );
        assert_eq!(classify("streaming.mismatches").0, Class::Exact);
        assert_eq!(classify("lookup_reads.txs").0, Class::Info);
        assert_eq!(
            classify("lookup_reads.stores.txdata.device_read_bytes").0,
            Class::Info
        );
        assert_eq!(
            classify("summary.stores.txdata.logical_bytes").0,
            Class::Exact
        );
        assert_eq!(classify("phases.ingest.usage.max_rss_bytes").0, Class::Info);
        assert_eq!(
            classify("summary.stores.txdata.latency.commit.p99_us").0,
            Class::Timing
        );
    }

    #[test]
    fn walk_names_array_elements_by_their_keys() {
        let v: Value = serde_json::json!({
            "phases": [{"phase": "ingest", "wall_secs": 2.0}],
            "measurements": [{"phase": "before", "cache": "cold", "cost": {"x_per_get": 1.5}}],
            "pair": [1.0, 2.0],
            "config": {"ignored": 1}
        });
        let mut out = Vec::new();
        walk("", &v, &mut out);
        let names: Vec<&str> = out.iter().map(|(n, _)| n.as_str()).collect();
        assert!(names.contains(&"phases.ingest.wall_secs"), "{names:?}");
        assert!(
            names.contains(&"measurements.before.cold.cost.x_per_get"),
            "{names:?}"
        );
        assert!(names.contains(&"pair_1"), "{names:?}");
        assert!(!names.iter().any(|n| n.contains("ignored")));
        let mut out = Vec::new();
        walk(
            "batches",
            &serde_json::json!([{"batch": 3, "stores": [{"store": "txdata", "flush_bytes": 9}],
                "memory": {"harness_heap_bytes": 1}}]),
            &mut out,
        );
        let names: Vec<&str> = out.iter().map(|(n, _)| n.as_str()).collect();
        assert!(
            names.contains(&"batches.batch3.stores.txdata.flush_bytes"),
            "{names:?}"
        );
        assert_eq!(
            classify("batches.batch3.memory.harness_heap_bytes").0,
            Class::Info
        );
        assert_eq!(
            classify("batches.batch3.stores.txdata.flush_bytes").0,
            Class::Counter
        );
    }
}

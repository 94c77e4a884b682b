//! The verdict on runs of operations: segments after the load are its
//! batches, the horizon is the reader's, and the cheaper engine wins.

use super::*;

/// A run of `synth` under 1 GiB: 3 load segments, then 30 of 1,000
/// entries of 1 MiB each in store `state`, each costing `a` seconds a
/// thousand entries plus `c` seconds a GiB stored.
fn run(label: &str, a: f64, c: f64) -> BackendRun {
    let mut segments = Vec::new();
    let mut data = 0.0;
    for i in 0..33 {
        let bytes = 1u64 << 30;
        data += bytes as f64;
        let secs = a + c * data / f64::from(1u32 << 30);
        let mark = if i == 2 {
            "load".to_string()
        } else {
            format!("period {i}")
        };
        segments.push(serde_json::json!({
            "segment": i + 1, "mark": mark, "ops": 1000, "gets": 0, "total_secs": secs,
            "stores": [{
                "store": "state", "entries": 1000, "logical_bytes": bytes, "raw_bytes": bytes,
                "write_secs": secs, "flush_secs": 0.0, "engine": {},
                "disk": { "allocated_bytes": 0, "apparent_bytes": 0, "files": 0 }
            }]
        }));
    }
    serde_json::from_value(serde_json::json!({
        "label": label, "stores": [], "batches": [], "memory_limit_bytes": 1u64 << 30,
        "replay": { "segments": segments }
    }))
    .expect("run")
}

#[test]
fn runs_of_operations_get_a_verdict_at_the_readers_horizon() {
    let (fast, slow) = (run("fast", 0.5, 0.01), run("slow", 1.0, 0.02));
    let runs = vec![("fast".to_string(), &fast), ("slow".to_string(), &slow)];
    let mut out = Out {
        md: String::new(),
        documents: Vec::new(),
        charts: 0,
        svgs: Default::default(),
    };
    let opts = VerdictOptions::default();
    let answer = ops_verdict_section(&mut out, "synth", &runs, &opts, Horizon::Times(10.0))
        .expect("verdict");
    let md = &out.md;
    assert!(
        md.contains("## Verdict: `synth` once data outgrows memory"),
        "{md}"
    );
    // 30 segments after the load, 10x: 300 batches of 1,000 entries.
    assert!(
        md.contains("The horizon (`--horizon`): 300 batches of 1000 entries"),
        "{md}"
    );
    assert!(
        md.contains(">horizon predicted") || md.contains("horizon predicted"),
        "{md}"
    );
    assert!(
        md.contains("**Recommended for `state`: `fast`**, the lowest predicted horizon"),
        "{md}"
    );
    let text = answer.markdown(true);
    assert!(
        text.contains("| store | recommended | horizon predicted |"),
        "{text}"
    );
    assert!(text.contains("| config | state |"), "{text}");
    assert!(
        text.contains("The horizon is 300 batches (10x the runs' 30 segments)"),
        "{text}"
    );
    // The load's gigabytes are stored data: the first batch after it
    // costs what 4 GiB stored cost.
    let pts = points_in(&fast, "state", Some("load"));
    assert_eq!(pts.len(), 30);
    assert_eq!(pts[0].data, 4.0 * f64::from(1u32 << 30));
}

#[test]
fn runs_without_a_memory_limit_or_segments_get_none() {
    let mut free = run("free", 0.5, 0.01);
    free.memory_limit_bytes = None;
    let runs = vec![("free".to_string(), &free)];
    let mut out = Out {
        md: String::new(),
        documents: Vec::new(),
        charts: 0,
        svgs: Default::default(),
    };
    let opts = VerdictOptions::default();
    assert!(ops_verdict_section(&mut out, "synth", &runs, &opts, Horizon::Batches(5)).is_none());
    assert!(out.md.is_empty());
}

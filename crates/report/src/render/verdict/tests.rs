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
fn configs_set_aside_are_named_with_why() {
    // The cheapest run drops its oldest data and another failed: neither
    // may be recommended, and the report says which and why rather than
    // counting them out in silence.
    let mut fifo = run("fifo", 0.1, 0.001);
    fifo.stores = serde_json::from_value(serde_json::json!([{
        "store": "state", "backend": "rocksdb-fifo", "config": {}, "evicts_oldest": true
    }]))
    .expect("stores");
    let mut failed = run("failed", 0.2, 0.001);
    failed.error = Some("out of memory".into());
    let ok = run("ok", 0.5, 0.01);
    let runs = vec![
        ("fifo".to_string(), &fifo),
        ("failed".to_string(), &failed),
        ("ok".to_string(), &ok),
    ];
    let mut out = Out {
        md: String::new(),
        documents: Vec::new(),
        charts: 0,
        svgs: Default::default(),
    };
    let opts = VerdictOptions::default();
    ops_verdict_section(&mut out, "synth", &runs, &opts, Horizon::Times(10.0)).expect("verdict");
    let md = &out.md;
    assert!(md.contains("**Recommended for `state`: `ok`**"), "{md}");
    assert!(
        md.contains("Not a candidate: `fifo` (it drops its oldest data, and the store must keep every entry); `failed` (a run of it did not finish)."),
        "{md}"
    );
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

/// The ops verdict of `runs`, pooled across folders or not: its number of
/// configs and its text.
fn pooled_verdict(runs: &[(String, &BackendRun)], pool_folders: bool) -> (usize, String) {
    let mut out = Out {
        md: String::new(),
        documents: Vec::new(),
        charts: 0,
        svgs: Default::default(),
    };
    let opts = VerdictOptions {
        pool_folders,
        ..VerdictOptions::default()
    };
    let a =
        ops_verdict_section(&mut out, "synth", runs, &opts, Horizon::Times(10.0)).expect("verdict");
    (a.growth.len(), out.md)
}

#[test]
fn a_grids_cells_pool_into_one_config_only_when_asked_and_show_their_amplification() {
    let cell = |a: f64, wa: f64| {
        let mut r = run("fast", a, 0.01);
        r.design = Some("fast".into());
        r.replay.as_mut().expect("replay").summary = Some(
            serde_json::from_value(serde_json::json!({
                "segments": 33, "puts": 33000, "deletes": 0, "gets": 0, "mismatches": 0,
                "commits": 33, "wall_secs": 10.0, "ops_per_sec": 3300.0,
                "stores": {"state": {
                    "logical_bytes": 1, "raw_bytes": 1, "write_secs": 1.0, "flush_secs": 0.0,
                    "disk_allocated_bytes": 1, "disk_apparent_bytes": 1, "write_amp_engine": wa
                }},
                "total": {"logical_bytes": 1}
            }))
            .expect("summary"),
        );
        r
    };
    let (small, large) = (cell(0.5, 1.75), cell(0.6, 1.75));
    let runs = [
        ("1x-64MiB/fast".to_string(), &small),
        ("10x-64MiB/fast".to_string(), &large),
    ];
    // By default each folder is a config; pooled, one config of two runs.
    assert_eq!(pooled_verdict(&runs, false).0, 2);
    let (configs, md) = pooled_verdict(&runs, true);
    assert_eq!(configs, 1, "{md}");
    assert!(md.contains("**Recommended for `state`: `fast`**"), "{md}");
    // The store's write amplification, from the run's own totals.
    assert!(md.contains("1.75 / n/a"), "{md}");
    // Engine settings that differ keep their folders apart.
    let mut other = cell(0.6, 1.75);
    other.stores = serde_json::from_value(serde_json::json!([
        {"store": "state", "backend": "fast", "config": {"cache": 1}}
    ]))
    .expect("stores");
    let runs = [
        ("1x-64MiB/fast".to_string(), &small),
        ("tuned/fast".to_string(), &other),
    ];
    let (configs, md) = pooled_verdict(&runs, true);
    assert_eq!(configs, 2, "{md}");
}

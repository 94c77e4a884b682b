//! A preset's backends, threads and memory limit apply only where the
//! command line left them out: what a user gives is kept, even when it is
//! the default's own value.

mod common;
use common::{ledgerbench, read_json, stderr};

/// The client threads a run's results record.
fn threads(extra: &[&str]) -> serde_json::Value {
    let t = tempfile::tempdir().expect("tempdir");
    let mut args = vec![
        "run",
        "solana",
        "--preset",
        "contrast",
        "--backends",
        "mem",
        "--memory-limit",
        "none",
        "--device",
        "none",
        "--param",
        "slots=200",
        "--param",
        "keep_slots=50",
        "--out",
        "s",
    ];
    args.extend_from_slice(extra);
    let o = ledgerbench(&args, t.path());
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    read_json(&t.path().join("s/results.json"))["config"]["threads"].clone()
}

#[test]
fn an_explicit_thread_count_is_kept_over_the_presets() {
    // contrast runs 8 inserters unless told otherwise.
    assert_eq!(threads(&[]), serde_json::json!([8]));
    assert_eq!(threads(&["--threads", "1"]), serde_json::json!([1]));
    assert_eq!(threads(&["--threads", "2"]), serde_json::json!([2]));
}

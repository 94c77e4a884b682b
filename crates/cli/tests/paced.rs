//! `--op-rate` paces every generated workload that takes it: the run phase
//! (after YCSB's `load` and accounts' `genesis`; all of Solana's and the
//! blobs' stream) takes at least its operations over the rate. Before, the
//! rate was recorded but applied only to YCSB: 30,000 account operations
//! at 1,667/s ran in 0.7 s. `run synth` paces after its initial state, and
//! a soak holds its rate for its duration.

use std::path::Path;
use std::time::Instant;

mod common;
use common::{ledgerbench, stderr};

/// The operations of the segments after `after` (all when `None`), from
/// the run's segments.jsonl.
fn paced_ops(dir: &Path, after: Option<&str>) -> u64 {
    let text = std::fs::read_to_string(dir.join("segments.jsonl")).expect("segments.jsonl");
    let mut started = after.is_none();
    let mut ops = 0;
    for line in text.lines() {
        let seg: serde_json::Value = serde_json::from_str(line).expect("json");
        if started {
            ops += seg["ops"].as_u64().expect("ops");
        }
        if Some(seg["mark"].as_str().expect("mark")) == after {
            started = true;
        }
    }
    ops
}

/// The accounts workload's settings, run on one and on two threads.
const ACCOUNTS: &[&str] = &[
    "accounts=200",
    "operations=400",
    "ops_per_block=100",
    "blocks_per_segment=2",
];

#[test]
fn the_op_rate_paces_every_generated_workload() {
    let t = tempfile::tempdir().expect("tempdir");
    // One figure for the flag and the check (they once differed: 400 given,
    // 600 checked, so the test asked for only two thirds of the pacing).
    let rate = 400.0;
    let cases: [(&str, &[&str], Option<&str>); 5] = [
        (
            "ycsb",
            &["records=200", "operations=400", "ops_per_segment=200"],
            Some("load"),
        ),
        ("accounts", ACCOUNTS, Some("genesis")),
        (
            "blobs",
            &[
                "batches=30",
                "blobs_per_batch=4",
                "reads_per_batch=4",
                "value_bytes=1024",
                "ttl_batches=10",
            ],
            None,
        ),
        (
            "solana",
            &[
                "slots=20",
                "data_shreds=8",
                "coding_shreds=8",
                "slots_per_segment=5",
                "keep_slots=10",
            ],
            None,
        ),
        // The client-thread path paces too.
        ("accounts", ACCOUNTS, Some("genesis")),
    ];
    for (i, (w, params, after)) in cases.iter().enumerate() {
        let mut args = vec!["run", w];
        for p in *params {
            args.extend(["--param", p]);
        }
        if i == 4 {
            args.extend(["--threads", "2"]);
        }
        paced(t.path(), &format!("run-{i}"), &args, *after, rate);
    }
    // A model played by `run synth` (the mixgraph trace's, which has no
    // block time of its own): paced after its initial state.
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/rocksdb-trace/6-mixgraph.trace"
    );
    let fit = ["fit", trace, "--scan-length", "10", "--out", "m.toml"];
    let o = ledgerbench(&fit, t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let synth = ["run", "synth", "--workload", "m.toml", "--length", "0.3x"];
    paced(t.path(), "synth", &synth, Some("load"), rate);
}

/// Runs `args` on mem at `rate` operations a second into `dir/out`: the
/// operations after `after` must take at least their time at that rate.
fn paced(dir: &Path, out: &str, args: &[&str], after: Option<&str>, rate: f64) {
    let rate_arg = rate.to_string();
    let mut args = args.to_vec();
    args.extend(["--backends", "mem", "--device", "none"]);
    args.extend(["--op-rate", &rate_arg, "--out", out]);
    let start = Instant::now();
    let o = ledgerbench(&args, dir);
    let wall = start.elapsed().as_secs_f64();
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let ops = paced_ops(&dir.join(out), after);
    assert!(ops >= 200, "{args:?}: only {ops} paced operations");
    // The schedule's last operation is due at ops/rate; allow 10%.
    let due = ops as f64 / rate;
    assert!(
        wall >= 0.9 * due,
        "{args:?}: {ops} operations at {rate}/s took {wall:.2} s, under the {due:.2} s the rate allows"
    );
}

#[test]
fn a_soak_holds_its_op_rate_for_its_duration() {
    // Bounded by time, a soak lasts its duration paced or not: what pacing
    // shows is the count, no more operations than the rate allows.
    let t = tempfile::tempdir().expect("tempdir");
    let rate = 300.0;
    let rate_arg = rate.to_string();
    let mut args = vec![
        "run",
        "soak",
        "blobs",
        "--duration",
        "3s",
        "--interval",
        "250ms",
    ];
    args.extend([
        "--backends",
        "mem",
        "--device",
        "none",
        "--op-rate",
        &rate_arg,
    ]);
    for p in [
        "blobs_per_batch=4",
        "reads_per_batch=4",
        "value_bytes=1024",
        "ttl_batches=20",
    ] {
        args.extend(["--param", p]);
    }
    args.extend(["--out", "soak"]);
    let o = ledgerbench(&args, t.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let r = common::read_json(&t.path().join("soak/results.json"));
    let s = &r["runs"][0]["replay"]["summary"];
    let (rate_seen, wall) = (s["ops_per_sec"].as_f64(), s["wall_secs"].as_f64());
    let (rate_seen, wall) = (rate_seen.expect("ops/s"), wall.expect("wall"));
    assert!(wall >= 3.0, "{s}");
    // The expiry's deletes come in whole batches: a batch's worth over.
    assert!(
        rate_seen <= rate * 1.1 && rate_seen >= rate * 0.8,
        "{rate_seen:.0} ops/s against --op-rate {rate}: {s}"
    );
}

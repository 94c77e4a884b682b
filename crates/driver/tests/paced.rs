//! An op stream paced open loop: the run phase keeps its schedule, and
//! gets timed from when they were due include the time they waited.

use ledgerbench_core::{KvBackend, KvStore};
use ledgerbench_driver::ops::{self, Pace};
use ledgerbench_mem::{Mem, MemConfig, MemLog};

#[test]
fn a_paced_run_keeps_its_schedule_and_times_gets_from_when_they_were_due() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = MemConfig {
        persist: false,
        log: MemLog::Off,
        ..MemConfig::default()
    };
    let store = Mem::open(&dir.path().join("usertable"), &cfg).expect("open");
    let stores: [&dyn KvStore; 1] = [&store];
    let params = serde_json::json!({"workload": "c", "records": 2000, "operations": 1000});
    let mut src = ledgerbench_workloads::by_name("ycsb", 1, params).expect("ycsb");
    let out = ops::replay_paced(
        &mut *src,
        &stores,
        &[None],
        &mut (),
        Some(Pace {
            ops_per_sec: 4000.0,
            after_mark: Some("load"),
        }),
    );
    assert!(out.error.is_none(), "{:?}", out.error);
    let sum = out.summary.expect("summary");
    assert_eq!(sum.mismatches, 0);
    // The run phase: 1000 reads at 4000/s take at least 0.25 s, the load
    // before it is not paced.
    let run: f64 = out
        .segments
        .iter()
        .filter(|s| s.mark != "load")
        .map(|s| s.total_secs)
        .sum();
    assert!((0.24..1.0).contains(&run), "run phase took {run} s");
    let lat = &sum.stores["usertable"].latency;
    let (c, u) = (
        lat.get_corrected.as_ref().expect("corrected"),
        lat.get.as_ref().expect("uncorrected"),
    );
    assert_eq!(
        c.count, u.count,
        "every get of the run phase is timed both ways"
    );
    assert!(c.p50_us >= u.p50_us && c.max_us >= u.max_us, "{c:?} {u:?}");
}

//! An op stream paced open loop: the run phase keeps its schedule, and
//! gets timed from when they were due include the time they waited.

use ledgerbench_core::{KvBackend, KvStore};
use ledgerbench_driver::ops::{self, Observer, Pace};
use ledgerbench_driver::results::SegmentRecord;
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
    let pacing = ops::Pacing {
        rate: Some(Pace {
            ops_per_sec: 4000.0,
            after_mark: Some("load"),
        }),
        speed: None,
        window: None,
    };
    let mut seen = Seen::default();
    let out = ops::replay_with(&mut *src, (&stores, &[None]), &mut seen, pacing);
    assert!(out.error.is_none(), "{:?}", out.error);
    let sum = out.summary.expect("summary");
    assert_eq!(sum.mismatches, 0);
    // The run phase: 1000 reads at 4000/s take at least 0.25 s, the load
    // before it is not paced.
    let run: f64 = seen
        .0
        .iter()
        .filter(|(mark, _)| mark != "load")
        .map(|(_, secs)| secs)
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

/// A stream with recorded times: a put at 0, gets at 0.3 s and 0.6 s.
struct Recorded {
    header: ledgerbench_trace::Header,
    at: usize,
}

impl ledgerbench_trace::OpSource for Recorded {
    fn header(&self) -> &ledgerbench_trace::Header {
        &self.header
    }
    fn next_op(
        &mut self,
    ) -> Result<Option<ledgerbench_trace::Op<'_>>, ledgerbench_trace::TraceError> {
        use ledgerbench_trace::{Expect, Op, ValueRef};
        let ops = [
            Op::At { micros: 0 },
            Op::Put {
                store: 0,
                key: b"k",
                value: ValueRef::Bytes(b"v"),
            },
            Op::Commit { sync: false },
            Op::At { micros: 300_000 },
            Op::Get {
                store: 0,
                key: b"k",
                expect: Expect::of(b"v"),
            },
            Op::At { micros: 600_000 },
            Op::Get {
                store: 0,
                key: b"k",
                expect: Expect::of(b"v"),
            },
        ];
        self.at += 1;
        Ok(ops.get(self.at - 1).copied())
    }
}

#[test]
fn a_replay_at_the_recorded_pace_waits_for_each_record_and_a_faster_one_less() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = MemConfig {
        persist: false,
        log: MemLog::Off,
        ..MemConfig::default()
    };
    let header = ledgerbench_trace::Header {
        workload: "recorded".into(),
        seed: 0,
        stores: vec!["s".into()],
        source: serde_json::Value::Null,
    };
    for (speed, at_least, below) in [(1.0, 0.6, 1.5), (10.0, 0.06, 0.5)] {
        let store = Mem::open(&dir.path().join(format!("s{speed}")), &cfg).expect("open");
        let stores: [&dyn KvStore; 1] = [&store];
        let mut src = Recorded {
            header: header.clone(),
            at: 0,
        };
        let t = std::time::Instant::now();
        let pacing = ops::Pacing {
            rate: None,
            speed: Some(speed),
            window: None,
        };
        let out = ops::replay_with(&mut src, (&stores, &[None]), &mut (), pacing);
        let took = t.elapsed().as_secs_f64();
        assert!(out.error.is_none(), "{:?}", out.error);
        assert!((at_least..below).contains(&took), "speed {speed}: {took} s");
        let sum = out.summary.expect("summary");
        assert_eq!((sum.gets, sum.mismatches), (2, 0));
        let c = sum.stores["s"]
            .latency
            .get_corrected
            .as_ref()
            .expect("corrected");
        assert_eq!(c.count, 2, "gets are timed from their record's time too");
    }
    // Closed loop: the times are ignored.
    let store = Mem::open(&dir.path().join("closed"), &cfg).expect("open");
    let stores: [&dyn KvStore; 1] = [&store];
    let t = std::time::Instant::now();
    let out = ops::replay(&mut Recorded { header, at: 0 }, &stores, &[None], &mut ());
    assert!(out.error.is_none() && t.elapsed().as_secs_f64() < 0.3);
}

/// Each segment's mark and seconds, as the observer saw them close.
#[derive(Default)]
struct Seen(Vec<(String, f64)>);

impl Observer for Seen {
    fn segment_done(&mut self, rec: &SegmentRecord, _progress: Option<(u64, u64)>) {
        self.0.push((rec.mark.clone(), rec.total_secs));
    }
}

//! Client threads' streams: reproducible for a given seed and thread count,
//! together the one-thread workload's amount of work, the same marks on
//! every thread (the driver's barriers), and consistent in any interleaving
//! between marks.

use ledgerbench_trace::OpSource;
use ledgerbench_trace::queue::OwnedOp;
use serde_json::json;

mod model;
use model::{Model, play};

/// Every operation of `src`, owned.
fn collect(src: &mut dyn OpSource) -> Vec<OwnedOp> {
    let mut out = Vec::new();
    while let Some(op) = src.next_op().expect("op") {
        out.push(OwnedOp::from(&op));
    }
    out
}

fn streams(name: &str, params: &serde_json::Value, n: u64) -> Vec<Vec<OwnedOp>> {
    ledgerbench_workloads::threads(name, 7, params.clone(), n)
        .expect("threads")
        .into_iter()
        .map(|mut s| collect(&mut *s))
        .collect()
}

fn marks(ops: &[OwnedOp]) -> Vec<String> {
    ops.iter()
        .filter_map(|o| match o {
            OwnedOp::Mark(l) => Some(l.clone()),
            _ => None,
        })
        .collect()
}

fn work(ops: &[OwnedOp]) -> usize {
    ops.iter()
        .filter(|o| {
            matches!(
                o,
                OwnedOp::Put(..) | OwnedOp::PutGenerated(..) | OwnedOp::Get(..) | OwnedOp::Scan(..)
            )
        })
        .count()
}

/// Plays the streams against one model the way the driver runs threads:
/// between marks, one operation of each stream in turn (a hostile but
/// legal interleaving); at a mark, every stream waits for the others.
fn interleave(stores: usize, streams: &[Vec<OwnedOp>]) -> Model {
    let mut m = Model::new(stores, streams.len());
    let mut pos = vec![0; streams.len()];
    loop {
        let mut moved = false;
        for (s, ops) in streams.iter().enumerate() {
            match ops.get(pos[s]) {
                Some(OwnedOp::Mark(_)) | None => {}
                Some(op) => {
                    m.apply(s, op.as_op());
                    pos[s] += 1;
                    moved = true;
                }
            }
        }
        if moved {
            continue;
        }
        // Every stream is at a mark or at its end: pass the barrier.
        let mut any = false;
        for (s, ops) in streams.iter().enumerate() {
            if matches!(ops.get(pos[s]), Some(OwnedOp::Mark(_))) {
                pos[s] += 1;
                any = true;
            }
        }
        if !any {
            return m;
        }
    }
}

#[test]
fn ycsb_threads_are_reproducible_share_the_work_and_read_only_what_exists() {
    for w in ["a", "c", "d", "e", "f"] {
        let p = json!({"workload": w, "records": 3001, "operations": 4003, "ops_per_segment": 1000, "load_batch": 100});
        let one = streams("ycsb", &p, 1);
        let four = streams("ycsb", &p, 4);
        assert_eq!(
            four,
            streams("ycsb", &p, 4),
            "workload {w}: same seed, same streams"
        );
        // A read-modify-write is a get and a put, so F's count of gets and
        // puts depends on each thread's draws; its reads are checked below.
        if w != "f" {
            assert_eq!(
                four.iter().map(|s| work(s)).sum::<usize>(),
                work(&one[0]),
                "workload {w}: the threads together do the one thread's work"
            );
        }
        for s in &four {
            assert_eq!(marks(s), marks(&one[0]), "workload {w}: the same marks");
            assert!(work(s) > 0);
        }
        assert_ne!(four[0], four[1], "threads have their own streams");
        let m = interleave(1, &four);
        assert_eq!(m.bad, 0, "workload {w}: every read finds what it expects");
        assert!(m.committed());
        assert!(
            (0..3001).all(|i| m.has(0, &ledgerbench_workloads::ycsb::Ycsb::key(i))),
            "workload {w}: every record loaded by one thread or another"
        );
    }
}

#[test]
fn one_thread_is_the_workload_itself() {
    for (name, p) in [
        ("ycsb", json!({"records": 500, "operations": 700})),
        ("solana", json!({"slots": 20, "slots_per_segment": 5})),
        ("blobs", json!({"batches": 10})),
    ] {
        let mut single = ledgerbench_workloads::by_name(name, 7, p.clone()).expect("stream");
        assert_eq!(streams(name, &p, 1)[0], collect(&mut *single), "{name}");
        let mut again = ledgerbench_workloads::by_name(name, 7, p.clone()).expect("stream");
        assert_eq!(play(&mut *again).1, 0, "{name}: consistent alone");
    }
}

#[test]
fn split_workloads_divide_one_stream_by_key() {
    for (name, p) in [
        (
            "solana",
            json!({"slots": 40, "slots_per_segment": 10, "keep_slots": 10}),
        ),
        ("blobs", json!({"batches": 20})),
    ] {
        // Several Solana threads hold their checks for the mark: the one
        // stream they divide is the one made that way.
        let mut whole = p.clone();
        if name == "solana" {
            whole["checks_after_mark"] = true.into();
        }
        let one = streams(name, &whole, 1);
        let three = streams(name, &p, 3);
        assert_eq!(three, streams(name, &p, 3), "{name}: reproducible");
        assert_eq!(
            three.iter().map(|s| work(s)).sum::<usize>(),
            work(&one[0]),
            "{name}: every operation on one thread"
        );
        for s in &three {
            assert_eq!(marks(s), marks(&one[0]), "{name}: marks on every thread");
        }
        assert_eq!(ledgerbench_workloads::split_of(name), "key-hash");
    }
    assert_eq!(ledgerbench_workloads::split_of("ycsb"), "partitioned");
}

#[test]
fn blockstore_checks_hold_in_any_interleaving_of_its_threads() {
    // Slots in flight, late repairs and range purges, split by key: a
    // slot's shreds land on every thread, so its read-backs (and the purge
    // checks) wait for the mark, where every thread's writes have landed.
    let p = json!({"slots": 60, "keep_slots": 20, "data_shreds": 8, "coding_shreds": 8,
        "in_flight": 4, "repair_fraction": 0.1, "repair_delay_slots": 6,
        "retention": "range", "purge_every": 5, "slots_per_segment": 10});
    let three = streams("solana", &p, 3);
    let m = interleave(3, &three);
    assert_eq!(m.bad, 0, "every read-back and purge check holds");
    assert!(m.committed());
    let checks = |ops: &[OwnedOp]| {
        ops.iter()
            .filter(|o| matches!(o, OwnedOp::Get(_, _, e) if *e != ledgerbench_trace::Expect::Unchecked))
            .count()
    };
    assert!(
        three.iter().map(|s| checks(s)).sum::<usize>() > 60,
        "the checks are still made"
    );
}

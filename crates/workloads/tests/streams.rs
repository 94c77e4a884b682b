//! The generated streams: deterministic from the seed, shaped as each
//! workload says, and safe to check (reads only expect what is committed).

use ledgerbench_trace::{Op, OpSource};
use ledgerbench_workloads::{GenError, by_name};
use serde_json::json;

mod model;
use model::play;

#[test]
fn ycsb_workloads_have_their_mix_and_pass_their_checks() {
    for (w, reads, scans) in [
        ("a", 0.5, 0.0),
        ("b", 0.95, 0.0),
        ("c", 1.0, 0.0),
        ("e", 0.0, 0.95),
    ] {
        let p =
            json!({"workload": w, "records": 2000, "operations": 4000, "ops_per_segment": 1000});
        let (c, bad) = play(&mut *by_name("ycsb", 1, p).expect("ycsb"));
        assert_eq!(bad, 0, "workload {w}");
        let get = *c.get("get").unwrap_or(&0) as f64 / 4000.0;
        let scan = *c.get("scan").unwrap_or(&0) as f64 / 4000.0;
        assert!(
            (get - reads).abs() < 0.05 && (scan - scans).abs() < 0.05,
            "{w}: {c:?}"
        );
        assert_eq!(c["mark"], 5, "load + 4 segments");
    }
    let e = by_name("ycsb", 1, json!({"workload": "g"}))
        .err()
        .expect("unknown");
    assert!(
        matches!(
            e,
            GenError::Config {
                workload: "ycsb",
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("a, b, c, d, e, f"), "{e}");
    let e = by_name("ycsb", 1, json!({"recordz": 1}))
        .err()
        .expect("typo");
    assert!(e.to_string().contains("recordz"), "{e}");
    let e = by_name("tpcc", 1, json!({}))
        .err()
        .expect("unknown workload");
    assert!(matches!(e, GenError::Unknown(ref n) if n == "tpcc"), "{e}");
}

#[test]
fn streams_are_the_same_for_a_seed_and_differ_across_seeds() {
    let first = |seed| {
        let mut s = by_name("solana", seed, json!({"slots": 3})).expect("solana");
        let mut keys = Vec::new();
        while let Some(op) = s.next_op().expect("op") {
            if let Op::Put { key, .. } = op {
                keys.push(key.to_vec());
            }
        }
        keys
    };
    assert_eq!(first(5), first(5));
    assert_ne!(first(5), first(6), "shred order is shuffled by seed");
}

#[test]
fn solana_deletes_slots_behind_the_window_and_fifo_deletes_nothing() {
    let p = json!({"slots": 30, "keep_slots": 10, "data_shreds": 8, "coding_shreds": 8, "slots_per_segment": 10});
    let (c, bad) = play(&mut *by_name("solana", 3, p).expect("solana"));
    assert_eq!(bad, 0);
    // 20 slots fall out of the window: 16 shreds and one meta each.
    assert_eq!(c["delete"], 20 * 17);
    // Per shred: the shred and its slot's metadata.
    assert_eq!(c["put"], 30 * 16 * 2);
    let p = json!({"slots": 30, "keep_slots": 10, "retention": "fifo"});
    let (c, _) = play(&mut *by_name("solana", 3, p).expect("solana"));
    assert!(!c.contains_key("delete"));
}

#[test]
fn blobs_expire_by_age_and_reads_check_every_byte() {
    let p = json!({"batches": 12, "ttl_batches": 4, "blobs_per_batch": 3, "value_bytes": 4096, "reads_per_batch": 5});
    let (c, bad) = play(&mut *by_name("blobs", 9, p).expect("blobs"));
    assert_eq!(bad, 0);
    assert_eq!(c["put"], 36);
    assert_eq!(c["delete"], (12 - 4) * 3);
    assert_eq!(c["mark"], 12);
    assert!(
        by_name("blobs", 9, json!({"batches": 0})).is_err(),
        "no bound"
    );
}

#[test]
fn accounts_read_only_committed_accounts() {
    let p = json!({"accounts": 0, "operations": 5000, "ops_per_block": 50, "blocks_per_segment": 10, "mix": [0.3, 0.4, 0.3]});
    let (c, bad) = play(&mut *by_name("accounts", 4, p).expect("accounts"));
    assert_eq!(bad, 0, "a read never finds an uncommitted account missing");
    assert_eq!(c["commit"], 100);
}

#[test]
fn account_workers_own_disjoint_accounts_and_split_the_work() {
    let p =
        json!({"accounts": 1000, "operations": 4000, "ops_per_block": 50, "blocks_per_segment": 4});
    let streams = ledgerbench_workloads::threads("accounts", 4, p, 4).expect("workers");
    let mut total_gets = 0;
    for mut s in streams {
        // Each worker alone is consistent: it reads only what it committed.
        let (c, bad) = play(&mut *s);
        assert_eq!(bad, 0);
        total_gets += c.get("get").copied().unwrap_or(0);
    }
    assert!(total_gets > 0);
}

/// The slot of every shred put, in order (data and coding stores).
fn shred_slots(ops: &mut dyn OpSource) -> Vec<u64> {
    let mut slots = Vec::new();
    while let Some(op) = ops.next_op().expect("op") {
        if let Op::Put {
            store: 0 | 1, key, ..
        } = op
        {
            slots.push(u64::from_be_bytes(key[..8].try_into().expect("slot")));
        }
    }
    slots
}

#[test]
fn slots_in_flight_interleave_and_repairs_arrive_late_by_the_seed() {
    let p = json!({"slots": 40, "keep_slots": 30, "data_shreds": 8, "coding_shreds": 8,
        "in_flight": 4, "repair_fraction": 0.1, "repair_delay_slots": 6, "retention": "range",
        "purge_every": 4, "slots_per_segment": 10});
    let run = |seed| shred_slots(&mut *by_name("solana", seed, p.clone()).expect("solana"));
    let (a, b) = (run(11), run(11));
    assert_eq!(a, b, "the same seed gives the same arrivals");
    assert_ne!(a, run(12), "another seed, another interleaving");
    assert_eq!(a.len(), 40 * 16, "every shred arrives once");
    // Interleaved: before slot 0's shreds are all in, others' arrive.
    let last_of_0 = a.iter().rposition(|&s| s == 0).expect("slot 0");
    let others = a[..last_of_0].iter().filter(|&&s| s != 0).count();
    assert!(others > 0, "slot 0 arrived alone: {:?}", &a[..=last_of_0]);
    // Late: some shred arrives after a slot more than `in_flight` newer.
    let mut newest = 0;
    let late = a
        .iter()
        .filter(|&&s| {
            newest = newest.max(s);
            s + 4 < newest
        })
        .count();
    assert!(
        (20..=150).contains(&late),
        "{late} late shreds of 640 at 10%"
    );
    // One slot at a time, nothing late: slots arrive in order.
    let plain = shred_slots(
        &mut *by_name(
            "solana",
            11,
            json!({"slots": 5, "data_shreds": 4, "coding_shreds": 4}),
        )
        .expect("solana"),
    );
    assert!(plain.windows(2).all(|w| w[0] <= w[1]), "{plain:?}");
    // Checks hold throughout (reads of committed shreds, purged slots absent).
    let (c, bad) = play(&mut *by_name("solana", 11, p).expect("solana"));
    assert_eq!(bad, 0);
    assert!(c["delete-range"] >= 3 * 2, "{c:?}");
    assert!(
        !c.contains_key("delete"),
        "range retention deletes no single key"
    );
}

#[test]
fn bad_blockstore_settings_are_refused_naming_the_setting() {
    for (p, says) in [
        (json!({"in_flight": 0}), "in_flight"),
        (json!({"repair_fraction": 0.9}), "repair_fraction"),
        (
            json!({"repair_fraction": 0.1, "repair_delay_slots": 600, "keep_slots": 500}),
            "repair_delay_slots",
        ),
        // serde names the value and the accepted ones, not the field.
        (json!({"retention": "compact"}), "`delete`, `range`, `fifo`"),
    ] {
        let e = by_name("solana", 1, p.clone()).err().expect("refused");
        assert!(e.to_string().contains(says), "{p}: {e}");
    }
}

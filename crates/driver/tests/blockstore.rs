//! The Solana blockstore on the in-memory engine: after slots arrive
//! interleaved, some late, and purges by range delete, the stores hold
//! exactly the slots from the last purge on, each whole.

use std::collections::BTreeMap;

use ledgerbench_core::{KvBackend, KvStore};
use ledgerbench_driver::ops;
use ledgerbench_mem::{Mem, MemConfig, MemLog};

/// Shreds (or metadata entries) per slot in a store.
fn per_slot(store: &dyn KvStore) -> BTreeMap<u64, usize> {
    let mut slots = BTreeMap::new();
    store
        .scan(b"", &mut |k, _| {
            let slot = u64::from_be_bytes(k[..8].try_into().expect("slot"));
            *slots.entry(slot).or_insert(0) += 1;
            true
        })
        .expect("scan");
    slots
}

#[test]
fn purges_remove_exactly_the_slots_behind_the_root() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = MemConfig {
        persist: false,
        log: MemLog::Off,
        ..MemConfig::default()
    };
    let open = |n: &str| Mem::open(&dir.path().join(n), &cfg).expect("open");
    let (data, code, meta) = (open("data"), open("code"), open("meta"));
    let stores: [&dyn KvStore; 3] = [&data, &code, &meta];
    // Many slots in flight and many late shreds: a repair often lands
    // while its slot is still arriving, and purges must go on past it.
    let (slots, keep, every) = (300u64, 20u64, 5u64);
    let params = serde_json::json!({"slots": slots, "keep_slots": keep, "data_shreds": 8,
        "coding_shreds": 6, "in_flight": 8, "repair_fraction": 0.2, "repair_delay_slots": 2,
        "retention": "range", "purge_every": every, "slots_per_segment": 10});
    let mut src = ledgerbench_workloads::by_name("solana", 3, params).expect("solana");
    let out = ops::replay(&mut *src, &stores, &[None, None, None], &mut ());
    assert!(out.error.is_none(), "{:?}", out.error);
    let sum = out.summary.expect("summary");
    assert_eq!(
        sum.mismatches, 0,
        "every read back and every purged slot checked"
    );
    assert!(sum.range_deletes > 0);
    assert_eq!(sum.deletes, 0);

    let (d, c, m) = (per_slot(&data), per_slot(&code), per_slot(&meta));
    let first = *d.keys().next().expect("slots kept");
    // The root is `keep` behind the newest slot; purges go `every` slots
    // at a time, so the last one stopped within `every` of it.
    assert!(
        first <= slots - keep && first > slots - keep - every,
        "first slot kept {first}"
    );
    let kept: Vec<u64> = (first..slots).collect();
    for (name, got, n) in [("data", &d, 8), ("code", &c, 6), ("meta", &m, 1)] {
        assert_eq!(
            got.keys().copied().collect::<Vec<_>>(),
            kept,
            "{name}: slots"
        );
        assert!(
            got.values().all(|&x| x == n),
            "{name}: every kept slot whole: {got:?}"
        );
    }
}

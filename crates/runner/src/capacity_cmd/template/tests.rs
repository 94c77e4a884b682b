use super::*;
use ledgerbench_driver::capacity::{RowShape, prefill_row};
use std::path::Path;

fn cfg() -> CapacityConfig {
    CapacityConfig {
        seed: 3,
        rows: RowShape::TxHash,
        value_bytes: 100,
        interval_secs: 1.0,
        intervals: 2,
        min_rate: 10.0,
        max_rate: 20.0,
        probes: 2,
        prefill_rows: 2_000,
    }
}

fn in_run_dir(t: &Path) -> (Placement, RunDir) {
    let place = Placement {
        memory_limit: None,
        harness_allowance: 0,
        device_size: None,
        read_ahead_kb: None,
        keep_stores: false,
        reattach: false,
        inputs: Vec::new(),
        seed_from: None,
        save_to: None,
    };
    let rundir = RunDir::claim(Some(&t.join("run")), "capacity", false).expect("run dir");
    (place, rundir)
}

/// Every engine that keeps what it is given reopens a copy of its closed
/// store with the prefill in it: the copy is what each probe starts from,
/// so an engine that could not would be searched on an empty store.
#[test]
fn every_engine_reopens_a_copy_of_its_prefilled_store_with_its_rows() {
    let t = tempfile::tempdir().expect("tempdir");
    let (place, rundir) = in_run_dir(t.path());
    let c = cfg();
    let mut tried = Vec::new();
    for name in crate::registry::names() {
        let spec = crate::registry::BackendSpec::by_name(name).expect("known");
        if spec.discards_writes() || spec.unavailable().is_some() {
            continue;
        }
        let template = make(&spec, &c, (&place, &rundir, None)).expect(name);
        assert!(template.secs > 0.0 && template.bytes > 0, "{name}");
        let probe = harness::place_stores(
            &place,
            &format!("{name}-probe"),
            &["rows".to_string()],
            &rundir,
        )
        .expect("probe's store");
        template.copy_into(&probe).expect(name);
        let store = spec.open(&probe.dirs[0]).expect(name);
        let (mut k, mut v) = (Vec::new(), Vec::new());
        for row in [0, 999, 1_999] {
            prefill_row(&c, row, &mut k, &mut v);
            let got = store.get(&k).expect(name);
            assert_eq!(got.as_deref(), Some(&v[..]), "{name}: row {row}");
        }
        store.close().expect(name);
        rundir.remove_store_dir(&probe.dirs[0]).expect("remove");
        let made = template.from.clone();
        template.remove(&rundir, false).expect("remove");
        assert!(!made.exists(), "{name}: {} left", made.display());
        tried.push(name);
    }
    // The engines linked into every build, at least.
    for must in ["lmdb", "mdbx", "rocksdb-leveled", "redb", "mem"] {
        assert!(tried.contains(&must), "{must} not tried: {tried:?}");
    }
}

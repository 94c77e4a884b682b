//! Whose heap: a store's calls put what a Rust engine allocates in the
//! engine's count, and the harness's count ends where it started whatever
//! engine ran.

use ledgerbench_core::heap::{self, Owner, mark_harness_thread};
use ledgerbench_core::{Batch, Durability};
use ledgerbench_engines::BackendSpec;
use ledgerbench_meter::memory::Counting;

#[global_allocator]
static A: Counting = Counting;

fn churn(name: &str) -> (i64, i64) {
    let t = tempfile::tempdir().expect("tempdir");
    let mut spec = BackendSpec::by_name(name).expect("known");
    if name.ends_with("null") {
        spec.set_durability(Durability::None).expect("none");
    }
    let (h0, e0) = (
        heap::signed_live(Owner::Harness),
        heap::signed_live(Owner::Engine),
    );
    let st = spec.open(&t.path().join("s")).expect("open");
    let mut out = Vec::new();
    for round in 0..20u32 {
        let mut b = Batch::new();
        for i in 0..500u32 {
            b.put(
                &[round.to_be_bytes(), i.to_be_bytes()].concat(),
                &[7u8; 300],
            );
        }
        st.write(&b).expect("write");
        drop(b);
        for i in 0..50u32 {
            let _ = st.get_into(&[round.to_be_bytes(), i.to_be_bytes()].concat(), &mut out);
            let _ = st.get(&[round.to_be_bytes(), i.to_be_bytes()].concat());
        }
        let mut many = Vec::new();
        let keys: Vec<Vec<u8>> = (0..10u32)
            .map(|i| [round.to_be_bytes(), i.to_be_bytes()].concat())
            .collect();
        st.get_many(&keys, &mut many).expect("get_many");
        drop(many);
        drop(keys);
        let _ = st.scan_collect(b"", 100);
        st.flush().expect("flush");
        let _ = st.stats();
    }
    st.close().expect("close");
    drop(out);
    (
        heap::signed_live(Owner::Harness) - h0,
        heap::signed_live(Owner::Engine) - e0,
    )
}

fn every_engine_s_calls_leave_the_harness_count_where_it_was() {
    for name in [
        "mem",
        "redb",
        "fjall",
        "go-null",
        "pebble",
        "rocksdb-leveled",
    ] {
        let (dh, de) = churn(name);
        eprintln!("{name}: harness {dh:+}, engine {de:+}");
        // Values handed to the harness and freed by it, batches written
        // and scans collected: none of it may stay in the harness's count
        // or leave it short.
        assert_eq!(dh, 0, "{name}: harness count moved by {dh} bytes");
        // What an engine keeps after its close (a library's global cache)
        // is the engine's, and small.
        assert!(de.abs() < 1 << 20, "{name}: engine count moved by {de}");
    }
}

/// The counts are the process's: the two checks run one after the other.
#[test]
fn whose_heap_is_whose() {
    mark_harness_thread();
    what_a_rust_engine_holds_is_the_engine_s_heap_not_the_harness_s();
    every_engine_s_calls_leave_the_harness_count_where_it_was();
}

fn what_a_rust_engine_holds_is_the_engine_s_heap_not_the_harness_s() {
    // `mem` keeps every value it is given in its own heap: 16 MiB written
    // is 16 MiB more engine heap, and the harness's count is back where it
    // was once the batches are freed.
    let t = tempfile::tempdir().expect("tempdir");
    let spec = BackendSpec::by_name("mem").expect("known");
    let (h0, e0) = (
        heap::signed_live(Owner::Harness),
        heap::signed_live(Owner::Engine),
    );
    let st = spec.open(&t.path().join("s")).expect("open");
    for round in 0..16u32 {
        let mut b = Batch::new();
        for i in 0..16u32 {
            b.put(
                &[round.to_be_bytes(), i.to_be_bytes()].concat(),
                &vec![round as u8; 64 << 10],
            );
        }
        st.write(&b).expect("write");
    }
    let (h1, e1) = (
        heap::signed_live(Owner::Harness),
        heap::signed_live(Owner::Engine),
    );
    assert!(
        e1 - e0 >= 16 << 20,
        "engine grew {} bytes for 16 MiB kept",
        e1 - e0
    );
    assert!(h1 - h0 < 1 << 20, "harness grew {} bytes", h1 - h0);
    st.close().expect("close");
    assert!(
        heap::signed_live(Owner::Engine) - e0 < 1 << 20,
        "freed at close"
    );
}

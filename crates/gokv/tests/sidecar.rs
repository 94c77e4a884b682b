//! The pipe itself: its cost is measured at open and reported, and the null
//! engine answers through it without storing anything.

use ledgerbench_core::{Batch, KvBackend, KvStore};
use ledgerbench_gokv::{Go, GoConfig, GoEngine};

ledgerbench_gokv::needs_sidecar! {
#[test]
fn every_go_store_reports_its_pipe_cost_and_null_keeps_nothing() {
    let t = tempfile::tempdir().expect("tempdir");
    let st = Go::open_boxed(&t.path().join("s"), &GoConfig::of(GoEngine::Null)).expect("open");
    let mut b = Batch::new();
    b.put(b"k", b"v");
    st.write(&b).expect("write");
    let v = st.get(b"k").expect("get").expect("null answers every read");
    assert_eq!(v.len(), 256, "a regenerated value, not the one written");
    assert_ne!(v, b"v");
    assert!(st.capabilities().discards_writes);
    let s = st.stats().expect("stats");
    let rtt = s.extra["sidecar_rtt_ns"];
    let per_mib = s.extra["sidecar_ns_per_mib"];
    // A pipe round trip takes microseconds, and moving a MiB through it
    // takes longer than an empty round trip.
    assert!((100..10_000_000).contains(&rtt), "round trip {rtt} ns");
    assert!(
        per_mib > rtt,
        "{per_mib} ns per MiB vs a {rtt} ns round trip"
    );
    assert_eq!(s.wal_bytes, Some(0));
    eprintln!("go-null: round trip {rtt} ns, {per_mib} ns per MiB");
    st.close().expect("close");
}
}

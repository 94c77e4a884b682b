//! The two bridges: go-null answers through each without storing anything,
//! the sidecar's socket cost is measured at open, and an in-process store
//! reports the Go runtime's settings and the engine's version.

use ledgerbench_core::{Batch, KvBackend, KvStore};
use ledgerbench_gokv::{Bridge, Go, GoConfig, GoEngine};

fn null(bridge: Bridge) -> GoConfig {
    GoConfig {
        bridge,
        ..GoConfig::of(GoEngine::Null)
    }
}

/// go-null's answer to any read: 256 bytes made at open, marked with the key, not what
/// was written.
fn reads_null_value(st: &dyn KvStore) -> Vec<u8> {
    let mut b = Batch::new();
    b.put(b"k", b"v");
    st.write(&b).expect("write");
    let v = st.get(b"k").expect("get").expect("null answers every read");
    assert_eq!(v.len(), 256, "the null's value, not the one written");
    assert_ne!(v, b"v");
    assert!(st.capabilities().discards_writes);
    v
}

ledgerbench_gokv::needs_go! {
#[test]
fn the_sidecar_reports_its_socket_cost_and_null_keeps_nothing() {
    let t = tempfile::tempdir().expect("tempdir");
    let st = Go::open_boxed(&t.path().join("s"), &null(Bridge::Sidecar)).expect("open");
    reads_null_value(&*st);
    let s = st.stats().expect("stats");
    let rtt = s.extra["sidecar_rtt_ns"];
    let per_mib = s.extra["sidecar_ns_per_mib"];
    // A socket round trip takes microseconds, and moving a MiB through
    // it takes longer than an empty round trip.
    assert!((100..10_000_000).contains(&rtt), "round trip {rtt} ns");
    assert!(per_mib > rtt, "{per_mib} ns per MiB vs a {rtt} ns round trip");
    assert_eq!(s.wal_bytes, Some(0));
    assert!(!s.extra.contains_key("go_maxprocs"), "the sidecar's runtime is not this process's");
    eprintln!("go-null-sidecar: round trip {rtt} ns, {per_mib} ns per MiB");
    st.close().expect("close");
}
}

ledgerbench_gokv::needs_go! {
#[test]
fn in_process_null_answers_the_same_values_as_the_sidecar_and_reports_the_go_runtime() {
    let t = tempfile::tempdir().expect("tempdir");
    let inproc = Go::open_boxed(&t.path().join("a"), &null(Bridge::InProcess)).expect("open");
    let side = Go::open_boxed(&t.path().join("b"), &null(Bridge::Sidecar)).expect("open");
    assert_eq!(reads_null_value(&*inproc), reads_null_value(&*side), "one engine, two bridges");
    let s = inproc.stats().expect("stats");
    assert!(!s.extra.contains_key("sidecar_rtt_ns"));
    let procs = s.extra["go_maxprocs"];
    assert!(procs >= 1, "GOMAXPROCS {procs}");
    assert!(s.extra.contains_key("go_heap_bytes"));
    // Values longer than the caller's buffer come back whole.
    let big = GoConfig { value_bytes: 100_000, ..null(Bridge::InProcess) };
    let st = Go::open_boxed(&t.path().join("c"), &big).expect("open");
    let mut out = Vec::new();
    assert!(st.get_into(b"k", &mut out).expect("get"));
    assert_eq!(out.len(), 100_000);
    st.close().expect("close");
    inproc.close().expect("close");
    side.close().expect("close");
}
}

/// The versions results record are the ones go.mod pins.
#[test]
fn engine_versions_are_the_pinned_modules() {
    let gomod = include_str!("../go/go.mod");
    for e in [
        GoEngine::Pebble,
        GoEngine::Goleveldb,
        GoEngine::Badger,
        GoEngine::Bbolt,
    ] {
        let line = format!(
            "{} v{}",
            e.module().expect("a module"),
            e.version().expect("a version")
        );
        assert!(gomod.contains(&line), "go.mod does not pin `{line}`");
        assert_eq!(
            Go::version(&GoConfig::of(e), std::path::Path::new("/nonexistent")).as_deref(),
            e.version()
        );
    }
    assert_eq!(
        Go::version(&GoConfig::of(GoEngine::Null), std::path::Path::new("/")),
        None
    );
}

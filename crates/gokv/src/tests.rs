//! The sidecar's pool of connections: requests from several threads are in
//! flight together.

use std::time::Instant;

use ledgerbench_core::{KvStore, Op};

use crate::conn::op;
use crate::{Bridge, GoConfig, GoEngine, SidecarStore};

crate::needs_go! {
#[test]
fn requests_from_several_threads_are_in_flight_together() {
    let t = tempfile::tempdir().expect("tempdir");
    let cfg = GoConfig {
        bridge: Bridge::Sidecar,
        ..GoConfig::of(GoEngine::Null)
    };
    let st = SidecarStore::open(&t.path().join("s"), &cfg, "{}").expect("open");
    let hold_ms: u32 = 300;
    let threads = 4;
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                st.with(Op::Get, |c| {
                    c.begin(op::PING);
                    c.req.extend_from_slice(&hold_ms.to_le_bytes());
                    c.call(Op::Get)
                })
                .expect("held ping");
            });
        }
    });
    let took = start.elapsed().as_millis();
    // One connection would answer the four one after another (1.2 s);
    // a connection per thread answers them together.
    assert!(
        took < u128::from(hold_ms) * 2,
        "{threads} held pings took {took} ms: they waited for each other"
    );
    let idle = st.idle.lock().expect("pool").len();
    assert_eq!(idle, threads, "one connection per thread, each kept for reuse");
    Box::new(st).close().expect("close");
}
}

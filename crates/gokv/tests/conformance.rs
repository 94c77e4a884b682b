//! The shared conformance suite, run on every Go engine in process, and on
//! Pebble through the sidecar (the path kept for measuring it).

use ledgerbench_conformance::{Subject, conformance_suite};
use ledgerbench_core::{Durability, KvBackend};
use ledgerbench_gokv::{Bridge, Go, GoConfig, GoEngine};

/// An engine's defaults, scaled down so tests stay small.
fn small(engine: GoEngine, bridge: Bridge) -> GoConfig {
    GoConfig {
        cache_bytes: 8 << 20,
        memtable_bytes: engine.min_memtable().max(4 << 20),
        bridge,
        ..GoConfig::of(engine)
    }
}

macro_rules! go_engine {
    ($module:ident, $engine:expr, $bridge:expr) => {
        mod $module {
            use super::*;
            const S: Subject = Subject {
                name: stringify!($module),
                open: |d| Go::open_boxed(d, &small($engine, $bridge)),
                open_small: None,
                fifo_cap: None,
                durability: Durability::Process,
                // Badger writes its memtables' log through a memory map:
                // in process, a full disk is a SIGBUS, as for LMDB's
                // writable map (through the sidecar it killed the sidecar).
                map_writes: matches!($engine, GoEngine::Badger),
            };
            conformance_suite!(S);
        }
    };
}

#[cfg(not(ledgerbench_no_go))]
go_engine!(pebble, GoEngine::Pebble, Bridge::InProcess);
#[cfg(not(ledgerbench_no_go))]
go_engine!(goleveldb, GoEngine::Goleveldb, Bridge::InProcess);
#[cfg(not(ledgerbench_no_go))]
go_engine!(badger, GoEngine::Badger, Bridge::InProcess);
#[cfg(not(ledgerbench_no_go))]
go_engine!(bbolt, GoEngine::Bbolt, Bridge::InProcess);
#[cfg(not(ledgerbench_no_go))]
go_engine!(pebble_sidecar, GoEngine::Pebble, Bridge::Sidecar);

// Without Go the suite is not built for the Go engines; this line in the
// test output says so.
ledgerbench_gokv::needs_go! {
    #[test]
    fn the_go_engines_run_the_suite() {
        assert!(ledgerbench_gokv::go_unavailable().is_none());
        assert!(ledgerbench_gokv::sidecar().is_ok());
    }
}

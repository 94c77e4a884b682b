//! The shared conformance suite, run on every Go engine through the sidecar.

use ledgerbench_conformance::{Subject, conformance_suite};
use ledgerbench_core::{Durability, KvBackend};
use ledgerbench_gokv::{Go, GoConfig, GoEngine};

/// An engine's defaults, scaled down so tests stay small.
fn small(engine: GoEngine) -> GoConfig {
    GoConfig {
        cache_bytes: 8 << 20,
        memtable_bytes: engine.min_memtable().max(4 << 20),
        ..GoConfig::of(engine)
    }
}

macro_rules! go_engine {
    ($module:ident, $engine:expr) => {
        mod $module {
            use super::*;
            const S: Subject = Subject {
                name: stringify!($module),
                open: |d| Go::open_boxed(d, &small($engine)),
                open_small: None,
                fifo_cap: None,
                durability: Durability::Process,
                map_writes: false,
            };
            conformance_suite!(S);
        }
    };
}

#[cfg(not(ledgerbench_no_sidecar))]
go_engine!(pebble, GoEngine::Pebble);
#[cfg(not(ledgerbench_no_sidecar))]
go_engine!(goleveldb, GoEngine::Goleveldb);
#[cfg(not(ledgerbench_no_sidecar))]
go_engine!(badger, GoEngine::Badger);
#[cfg(not(ledgerbench_no_sidecar))]
go_engine!(bbolt, GoEngine::Bbolt);

// Without the sidecar the suite is not built for the Go engines; this line
// in the test output says so.
ledgerbench_gokv::needs_sidecar! {
    #[test]
    fn the_go_engines_run_the_suite_through_the_sidecar() {
        assert!(ledgerbench_gokv::sidecar().is_ok());
    }
}

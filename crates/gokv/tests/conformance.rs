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

go_engine!(pebble, GoEngine::Pebble);
go_engine!(goleveldb, GoEngine::Goleveldb);
go_engine!(badger, GoEngine::Badger);
go_engine!(bbolt, GoEngine::Bbolt);

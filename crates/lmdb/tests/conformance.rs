//! The shared conformance suite, run on LMDB (plain and write-map).

use ledgerbench_conformance::{SMALL_CAP, Subject, conformance_suite};
use ledgerbench_core::{Durability, KvBackend};
use ledgerbench_lmdb::{Lmdb, LmdbConfig};

fn small() -> LmdbConfig {
    LmdbConfig {
        map_size: SMALL_CAP,
        ..LmdbConfig::default()
    }
}

mod lmdb {
    use super::*;
    const S: Subject = Subject {
        name: "lmdb",
        open: |d| Lmdb::open_boxed(d, &LmdbConfig::default()),
        open_small: Some(|d| Lmdb::open_boxed(d, &small())),
        fifo_cap: None,
        durability: Durability::Process,
        map_writes: false,
    };
    conformance_suite!(S);
}

mod lmdb_write_map {
    use super::*;
    const S: Subject = Subject {
        name: "lmdb-write-map",
        open: |d| {
            Lmdb::open_boxed(
                d,
                &LmdbConfig {
                    write_map: true,
                    map_size: 1 << 30,
                    ..LmdbConfig::default()
                },
            )
        },
        open_small: Some(|d| {
            Lmdb::open_boxed(
                d,
                &LmdbConfig {
                    write_map: true,
                    ..small()
                },
            )
        }),
        fifo_cap: None,
        durability: Durability::Process,
        map_writes: true,
    };
    conformance_suite!(S);
}

#[test]
fn version_is_reported() {
    assert!(ledgerbench_lmdb::engine_version().starts_with("0."));
}

//! The shared conformance suite, run on redb.

use ledgerbench_conformance::{Subject, conformance_suite};
use ledgerbench_core::{Durability, KvBackend};
use ledgerbench_redb::{Redb, RedbConfig};

mod redb {
    use super::*;
    const S: Subject = Subject {
        name: "redb",
        open: |d| {
            Redb::open_boxed(
                d,
                &RedbConfig {
                    cache_bytes: 16 << 20,
                    ..RedbConfig::default()
                },
            )
        },
        open_small: None,
        fifo_cap: None,
        durability: Durability::Process,
        map_writes: false,
    };
    conformance_suite!(S);
}

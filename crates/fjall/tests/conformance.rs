//! The shared conformance suite, run on fjall.

use ledgerbench_conformance::{Subject, conformance_suite};
use ledgerbench_core::{Durability, KvBackend};
use ledgerbench_fjall::{Fjall, FjallConfig};

mod fjall {
    use super::*;
    const S: Subject = Subject {
        name: "fjall",
        open: |d| {
            Fjall::open_boxed(
                d,
                &FjallConfig {
                    cache_bytes: 16 << 20,
                    max_memtable_bytes: 1 << 20,
                    ..FjallConfig::default()
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

/// The same with values of 1 KiB or more kept in blob files: the suite's
/// large values (up to 1 MiB) take that path, and must read back alike.
mod fjall_blob {
    use super::*;
    const S: Subject = Subject {
        name: "fjall-blob",
        open: |d| {
            Fjall::open_boxed(
                d,
                &FjallConfig {
                    cache_bytes: 16 << 20,
                    max_memtable_bytes: 1 << 20,
                    blob_threshold: Some(1024),
                    ..FjallConfig::default()
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

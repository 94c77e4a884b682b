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

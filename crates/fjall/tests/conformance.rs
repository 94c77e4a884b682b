//! The shared conformance suite, run on fjall.

use kvbench_conformance::{Subject, conformance_suite};
use kvbench_core::{Durability, KvBackend};
use kvbench_fjall::{Fjall, FjallConfig};

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

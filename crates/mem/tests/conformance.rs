//! The shared conformance suite, run on the in-memory backend.

use kvbench_conformance::{Subject, conformance_suite};
use kvbench_core::{Durability, KvBackend};
use kvbench_mem::{Mem, MemConfig};

const MEM: Subject = Subject {
    name: "mem",
    open: |dir| Mem::open_boxed(dir, &MemConfig::default()),
    open_small: None,
    fifo_cap: None,
    durability: Durability::Process,
    map_writes: false,
};

conformance_suite!(MEM);

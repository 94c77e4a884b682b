//! The shared conformance suite, run on the in-memory backend.

use ledgerbench_conformance::{Subject, conformance_suite};
use ledgerbench_core::{Durability, KvBackend};
use ledgerbench_mem::{Mem, MemConfig};

const MEM: Subject = Subject {
    name: "mem",
    open: |dir| Mem::open_boxed(dir, &MemConfig::default()),
    open_small: None,
    fifo_cap: None,
    durability: Durability::Process,
    map_writes: false,
};

conformance_suite!(MEM);

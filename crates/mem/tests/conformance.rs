//! The shared conformance suite, run on the in-memory backend.

use kvbench_conformance::{Subject, conformance_suite};
use kvbench_core::KvBackend;
use kvbench_mem::{Mem, MemConfig};

const MEM: Subject = Subject {
    name: "mem",
    open: |dir| Mem::open_boxed(dir, &MemConfig::default()),
    open_small: None,
    fifo_cap: None,
};

conformance_suite!(MEM);

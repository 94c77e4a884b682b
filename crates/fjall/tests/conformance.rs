//! The shared conformance suite, run on fjall: values in its tables, and
//! values of 1 KiB or more in blob files (the suite's large values, up to
//! 1 MiB, take that path and must read back alike).

use ledgerbench_conformance::{Subject, conformance_suite};
use ledgerbench_core::{Durability, KvBackend, KvStore, Result};
use ledgerbench_fjall::{Fjall, FjallConfig};

/// A small fjall store at `d`, its values of `blob_threshold` bytes or
/// more in blob files.
fn open(d: &std::path::Path, blob_threshold: Option<u32>) -> Result<Box<dyn KvStore>> {
    Fjall::open_boxed(
        d,
        &FjallConfig {
            cache_bytes: 16 << 20,
            max_memtable_bytes: 1 << 20,
            blob_threshold,
            ..FjallConfig::default()
        },
    )
}

/// The suite on fjall opened by `$open`, named `$name`.
macro_rules! fjall_suite {
    ($module:ident, $name:literal, $open:expr) => {
        mod $module {
            use super::*;
            const S: Subject = Subject {
                name: $name,
                open: $open,
                open_small: None,
                fifo_cap: None,
                durability: Durability::Process,
                map_writes: false,
            };
            conformance_suite!(S);
        }
    };
}

fjall_suite!(fjall, "fjall", |d| open(d, None));
fjall_suite!(fjall_blob, "fjall-blob", |d| open(d, Some(1024)));

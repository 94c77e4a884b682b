//! Helpers of the criterion benchmarks: the backends under test and data
//! shaped like the Stellar stores (32-byte hashes, ~1.1 KB compressed
//! records, 4-byte sequence values).

use std::path::Path;

use ledgerbench_core::{Durability, KvStore};
use ledgerbench_engines::{self as registry, BackendSpec};
use ledgerbench_rng::{Rng, stream};

/// Memory each engine is scaled to (memtables, caches): room for the
/// preloaded data set, so the benchmarks measure the engines' hot paths.
pub const MEMORY: u64 = 256 << 20;

/// Every backend config in the registry, at durability `process` (the
/// runs' default, so engines are compared at one promise) and scaled to
/// [`MEMORY`]; opened in a directory under `root`. A backend that cannot
/// open here (a Go engine in a build without Go) is left out with its reason
/// on stderr; one that discards writes (the null engines) has nothing to
/// read back and is left out.
pub fn open_all(root: &Path) -> Vec<(String, Box<dyn KvStore>)> {
    let mut out = Vec::new();
    for name in registry::names() {
        match open_one(name, root) {
            Ok(Some(store)) => out.push((name.to_string(), store)),
            Ok(None) => {}
            Err(e) => eprintln!("benches: {name} left out: {e}"),
        }
    }
    out
}

fn open_one(name: &str, root: &Path) -> anyhow::Result<Option<Box<dyn KvStore>>> {
    let mut spec = BackendSpec::by_name(name)?;
    spec.set_durability(Durability::Process)?;
    spec.scale_memory(MEMORY);
    let store = spec.open(&root.join(name))?;
    if store.capabilities().discards_writes {
        store.close()?;
        return Ok(None);
    }
    Ok(Some(store))
}

/// Key `i`: a 32-byte transaction-hash-like key.
pub fn key(i: u64) -> [u8; 32] {
    let mut r = Rng::new(stream(7, 1, i));
    let mut k = [0u8; 32];
    for c in k.chunks_mut(8) {
        c.copy_from_slice(&r.next_u64().to_le_bytes());
    }
    k
}

/// Value `i`: 1,150 incompressible bytes, the size of a compressed Stellar record.
pub fn value(i: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(1150);
    Rng::new(stream(7, 2, i)).fill(&mut v, 1150);
    v
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_backend_of_the_registry_that_keeps_data_opens() {
        let d = tempfile::tempdir().expect("tempdir");
        let stores = super::open_all(d.path());
        let names: Vec<&str> = stores.iter().map(|(n, _)| n.as_str()).collect();
        // Everything the registry names but the null engines, less those
        // this machine cannot run (Go engines in a build without Go).
        for n in ledgerbench_engines::names() {
            let spec = ledgerbench_engines::BackendSpec::by_name(n).expect("known");
            let expected = !spec.discards_writes() && spec.unavailable().is_none();
            assert_eq!(names.contains(&n), expected, "{n}: {names:?}");
        }
        for (_, s) in stores {
            s.close().expect("close");
        }
        assert_ne!(super::key(1), super::key(2));
        assert_eq!(super::value(3).len(), 1150);
    }
}

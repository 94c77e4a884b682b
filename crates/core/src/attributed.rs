//! A store whose calls run in an [`EngineScope`], so the counting allocator
//! puts what an engine allocates in the engine's heap, not the harness's.

use std::path::Path;

use crate::heap::{EngineScope, HarnessScope, adopt};
use crate::{Batch, Capabilities, DiskUsage, EngineStats, KvStore, Result};

/// Wraps every store `BackendSpec::open` returns.
pub struct Attributed {
    /// `None` once closed.
    inner: Option<Box<dyn KvStore>>,
}

impl Attributed {
    /// Opens with `open` inside an engine scope and wraps the store.
    pub fn open(open: impl FnOnce() -> Result<Box<dyn KvStore>>) -> Result<Box<dyn KvStore>> {
        let store = {
            let _e = EngineScope::new();
            open()?
        };
        Ok(Box::new(Self { inner: Some(store) }))
    }

    fn inner(&self) -> &dyn KvStore {
        self.inner
            .as_deref()
            .expect("a store is used only until closed")
    }
}

impl KvStore for Attributed {
    fn engine(&self) -> &'static str {
        self.inner().engine()
    }

    fn path(&self) -> &Path {
        self.inner().path()
    }

    fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        let before = out.capacity();
        let r = {
            let _e = EngineScope::new();
            self.inner().get_into(key, out)
        };
        // The engine grew the harness's buffer: the growth is the harness's.
        adopt(out.capacity().saturating_sub(before));
        r
    }

    fn get_many(&self, keys: &[Vec<u8>], out: &mut Vec<Option<Vec<u8>>>) -> Result<()> {
        // The old values are the harness's: freed here, outside the call.
        out.clear();
        let before = out.capacity();
        let r = {
            let _e = EngineScope::new();
            self.inner().get_many(keys, out)
        };
        let values: usize = out.iter().flatten().map(Vec::capacity).sum();
        let slots = out.capacity().saturating_sub(before) * size_of::<Option<Vec<u8>>>();
        adopt(values + slots);
        r
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        let _e = EngineScope::new();
        self.inner().write(batch)
    }

    fn scan(&self, start: &[u8], visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        let _e = EngineScope::new();
        // The visitor is the harness's code, called by the engine.
        self.inner().scan(start, &mut |k, v| {
            let _h = HarnessScope::new();
            visit(k, v)
        })
    }

    fn flush(&self) -> Result<()> {
        let _e = EngineScope::new();
        self.inner().flush()
    }

    fn compact(&self) -> Result<()> {
        let _e = EngineScope::new();
        self.inner().compact()
    }

    /// Not in a scope: the counters come back to the harness, which frees
    /// them, and an engine's own bookkeeping for them is freed in the call.
    fn stats(&self) -> Result<EngineStats> {
        self.inner().stats()
    }

    fn disk_usage(&self) -> Result<DiskUsage> {
        self.inner().disk_usage()
    }

    fn capabilities(&self) -> Capabilities {
        self.inner().capabilities()
    }

    fn close(mut self: Box<Self>) -> Result<()> {
        let inner = self.inner.take().expect("closed once");
        let _e = EngineScope::new();
        inner.close()
    }
}

impl Drop for Attributed {
    /// A store dropped without a close frees the engine's memory as the
    /// engine's.
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            let _e = EngineScope::new();
            drop(inner);
        }
    }
}

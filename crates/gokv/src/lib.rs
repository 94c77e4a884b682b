//! The Go engines: Pebble, goleveldb, Badger and bbolt (and `go-null`,
//! which keeps nothing), from one Go package (`go/` in this crate) reached
//! two ways, chosen by [`GoConfig::bridge`] and recorded with every run:
//!
//! - in process (the default): the package built as a shared library and
//!   loaded into ledgerbench's process at the first Go open; a call is a
//!   cgo transition (see [`inproc`]);
//! - through `ledgerbench-sidecar`, one process per store and a socket
//!   round trip per call: kept so the cost of that path can be measured
//!   beside the other (`go-null-sidecar`, or `--set NAME.bridge="sidecar"`).
//!
//! `go-null` answers from nothing through the same bridge as the engines,
//! so its figures are the bridge's cost alone.

mod config;
mod conn;
mod golib;
pub mod inproc;
mod sidecar;
mod sidecar_store;
mod wire;

pub use config::{Bridge, GoConfig, GoEngine};
pub use golib::library_path;
pub use sidecar::{NoSidecar, go_unavailable, sidecar};
pub use sidecar_store::SidecarStore;

use std::path::Path;

use ledgerbench_core::{Durability, Error, KvBackend, KvStore, Result, fsutil};

/// The Go backends.
pub struct Go;

impl KvBackend for Go {
    const NAME: &'static str = "go";
    type Config = GoConfig;
    type Store = Box<dyn KvStore>;

    fn set_durability(cfg: &mut GoConfig, level: Durability) -> Result<()> {
        if cfg.go_engine == GoEngine::Null && level != Durability::None {
            return Err(Error::Config {
                engine: "null",
                message: format!(
                    "durability {level}: go-null keeps nothing, so it promises nothing; run it with --durability none"
                ),
            });
        }
        cfg.durability = level;
        Ok(())
    }

    fn durability(cfg: &GoConfig) -> Durability {
        cfg.durability
    }

    fn read_path(cfg: &GoConfig) -> ledgerbench_core::ReadPath {
        match cfg.go_engine {
            GoEngine::Bbolt => ledgerbench_core::ReadPath::Mmap,
            GoEngine::Null => ledgerbench_core::ReadPath::None,
            _ => ledgerbench_core::ReadPath::Buffered,
        }
    }

    fn unavailable() -> Option<String> {
        go_unavailable().map(str::to_string)
    }

    fn call_path(cfg: &GoConfig) -> ledgerbench_core::CallPath {
        match cfg.bridge {
            Bridge::InProcess => ledgerbench_core::CallPath::InProcess,
            Bridge::Sidecar => ledgerbench_core::CallPath::Sidecar,
        }
    }

    fn discards_writes(cfg: &GoConfig) -> bool {
        cfg.go_engine == GoEngine::Null
    }

    fn version(cfg: &GoConfig, _store_dir: &Path) -> Option<String> {
        cfg.go_engine.version().map(str::to_string)
    }

    fn scale_memory(cfg: &mut GoConfig, bytes: u64) {
        cfg.cache_bytes = (bytes / 2).max(8 << 20);
        cfg.memtable_bytes = (bytes / 4).max(cfg.go_engine.min_memtable());
    }

    /// A cache of 8 MiB (half the budget) and the engine's smallest
    /// memtable (a quarter) at least.
    fn memory_floor(cfg: &GoConfig) -> u64 {
        (16u64 << 20).max(4 * cfg.go_engine.min_memtable())
    }

    fn open(dir: &Path, cfg: &GoConfig) -> Result<Box<dyn KvStore>> {
        let engine = cfg.go_engine;
        if let Some(why) = go_unavailable() {
            return Err(Error::Config {
                engine: engine.name(),
                message: format!("the Go engines are unavailable: {why}"),
            });
        }
        fsutil::claim_store_dir(engine.name(), dir)?;
        let config = serde_json::to_string(&serde_json::json!({
            "cache_bytes": cfg.cache_bytes,
            "memtable_bytes": cfg.memtable_bytes,
            "l0_compaction_trigger": cfg.l0_compaction_trigger,
            "l0_stop_writes_trigger": cfg.l0_stop_writes_trigger,
            "max_concurrent_compactions": cfg.max_concurrent_compactions,
            "durability": cfg.durability.name(),
            "value_bytes": cfg.value_bytes,
        }))
        .map_err(|e| Error::Config {
            engine: engine.name(),
            message: e.to_string(),
        })?;
        match cfg.bridge {
            Bridge::Sidecar => Ok(Box::new(SidecarStore::open(dir, cfg, &config)?)),
            Bridge::InProcess => Ok(Box::new(inproc::InProcStore::open(dir, engine, &config)?)),
        }
    }
}

#[cfg(test)]
mod tests;

//! What the harness asks of an engine's config without naming the engine:
//! how its GETs reach the device, and adjustments a workload needs (no
//! background compaction, direct reads, ...). Each backend maps them onto
//! its own settings in [`KvBackend`](crate::KvBackend) or says it has none.

use serde::{Deserialize, Serialize};

/// How an engine's GETs reach the device, recorded with every point-read run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadPath {
    /// `pread` with O_DIRECT: no page cache.
    Direct,
    /// `pread` through the page cache.
    Buffered,
    /// Pages of a memory map.
    Mmap,
    /// The process's heap: nothing reaches a device.
    Memory,
    /// Nothing is read: values are regenerated from the key (null engines).
    None,
}

impl ReadPath {
    /// The name results and reports use.
    pub fn name(self) -> &'static str {
        match self {
            ReadPath::Direct => "direct",
            ReadPath::Buffered => "buffered",
            ReadPath::Mmap => "mmap",
            ReadPath::Memory => "memory",
            ReadPath::None => "none (regenerated from the key)",
        }
    }
}

/// An adjustment a workload asks of every engine's config; an engine without
/// the setting leaves its config alone and says so
/// ([`KvBackend::tune`](crate::KvBackend::tune) returns false).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tuning {
    /// No compaction in the background: the workload compacts by hand (or
    /// measures the uncompacted state).
    NoBackgroundCompaction,
    /// Reads bypass the page cache (true) or go through it (false).
    DirectReads(bool),
    /// Compactions early and often (a small level-0 trigger), so crash
    /// tests land in them.
    FrequentCompactions,
    /// An engine that drops its oldest data once over a size cap keeps at
    /// least this many bytes, so a test's data is never evicted.
    EvictionCapAtLeast(u64),
}

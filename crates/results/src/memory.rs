//! Whose memory a batch (or segment) used: the harness's heap, the
//! engine's, and the page cache, each where it can be measured.

use serde::{Deserialize, Serialize};

/// Memory at the end of a batch or segment. Each figure is absent where it
/// cannot be measured (no counting allocator, no Linux split, no cgroup).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryRecord {
    /// Highest live heap of the harness during the batch (generators,
    /// in-flight chunks, histograms); what the engines allocate, in Rust or
    /// otherwise, is not in it (results before 2026-11-27 counted the Rust
    /// engines' heap here too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_heap_peak_bytes: Option<u64>,
    /// Live heap of the harness at the end of the batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_heap_bytes: Option<u64>,
    /// Highest live Rust heap of the engines during the batch: redb's and
    /// fjall's own, and the Rust side of every binding (C, C++ and Go
    /// engines allocate elsewhere: their heap is in `engine_anon_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_heap_peak_bytes: Option<u64>,
    /// Live Rust heap of the engines at the end of the batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_heap_bytes: Option<u64>,
    /// Anonymous resident memory of the process at the end (`RssAnon`):
    /// every heap, stacks and engine caches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_anon_bytes: Option<u64>,
    /// File-backed resident memory at the end (`RssFile`): an mmap
    /// engine's store pages, which are page cache, not heap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_file_bytes: Option<u64>,
    /// Anonymous memory that is not the harness's heap
    /// (`rss_anon - harness_heap`): the engine's heap and caches, plus
    /// thread stacks and allocator slack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_anon_bytes: Option<u64>,
    /// Bytes charged to the run's memory cgroup at the end; absent
    /// without a limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup_usage_bytes: Option<u64>,
    /// Page cache charged to the run's cgroup at the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup_page_cache_bytes: Option<u64>,
}

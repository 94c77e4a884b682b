//! Whose memory is it: the harness's own heap (a counting global
//! allocator), the process's resident memory split into anonymous and
//! file-mapped pages (`/proc/self/status`), and the memory cgroup's page
//! cache. An mmap engine's store pages count as file-mapped RSS *and* as
//! page cache, so "peak RSS 537 MiB inside a 320 MiB limit" is not a broken
//! limit; the split shows it.
//!
//! The counting allocator sees only Rust allocations, and says whose each
//! is: the harness's (generators, buffers, histograms) or a Rust engine's
//! (redb, fjall, and the Rust side of every binding), by the thread and the
//! engine call it is made in. Engines written in C or C++ (RocksDB, LMDB,
//! MDBX) allocate with `malloc` and Go's with Go's runtime: neither is
//! counted here (Go's heap is in each Go store's counters).

use std::alloc::{GlobalAlloc, Layout, System};

use ledgerbench_core::heap::{self, Owner};
use serde::{Deserialize, Serialize};

/// The system allocator, counting live bytes and their peak for the harness
/// and for the Rust engines apart (whose they are: [`ledgerbench_core::heap`]).
/// Install it in a binary with `#[global_allocator] static A: Counting =
/// Counting;`.
pub struct Counting;

// SAFETY: every call goes to `System` unchanged; the counters are atomics
// and thread-locals without destructors, and never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on to System as is.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            heap::grew(heap::owner(), layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for alloc.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            heap::grew(heap::owner(), layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by System (through us) with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        heap::shrank(heap::owner(), layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for dealloc; System keeps the contents.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            let who = heap::owner();
            heap::shrank(who, layout.size());
            heap::grew(who, new_size);
        }
        p
    }
}

/// Live bytes of the harness's Rust heap now; absent when [`Counting`] is
/// not the global allocator (then nothing is counted, and 0 would be a lie).
pub fn heap_bytes() -> Option<u64> {
    heap::live(Owner::Harness)
}

/// The harness's highest live heap since the last call (or the start), and
/// starts a new window at the current level; absent when not counting.
pub fn take_heap_peak() -> Option<u64> {
    heap::take_peak(Owner::Harness)
}

/// Live bytes of the Rust engines' heap (redb, fjall, the Rust side of the
/// bindings); absent when not counting.
pub fn engine_heap_bytes() -> Option<u64> {
    heap::live(Owner::Engine)
}

/// The Rust engines' highest live heap since the last call, as
/// [`take_heap_peak`] is the harness's.
pub fn take_engine_heap_peak() -> Option<u64> {
    heap::take_peak(Owner::Engine)
}

/// Starts new peak windows for both owners: at the start of a backend's
/// run, so no peak carries from the run before.
pub fn reset_peaks() {
    let _ = take_heap_peak();
    let _ = take_engine_heap_peak();
}

/// Resident memory of this process by kind (`/proc/self/status`), bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resident {
    /// Anonymous pages: heaps (Rust and C/C++), stacks, engine caches.
    pub anon: u64,
    /// File-backed pages mapped into the process (an mmap engine's store).
    pub file: u64,
    /// Shared memory pages.
    pub shmem: u64,
}

impl Resident {
    /// This process now; absent off Linux or when the kernel hides the split.
    pub fn now() -> Option<Self> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        Self::parse(&status)
    }

    fn parse(status: &str) -> Option<Self> {
        let field = |name: &str| -> Option<u64> {
            let line = status.lines().find(|l| l.starts_with(name))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024)
        };
        Some(Self {
            anon: field("RssAnon:")?,
            file: field("RssFile:")?,
            shmem: field("RssShmem:").unwrap_or(0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_parse_into_kinds() {
        let s = "Name:\tx\nVmRSS:\t  300 kB\nRssAnon:\t  100 kB\nRssFile:\t  180 kB\nRssShmem:\t  20 kB\n";
        let r = Resident::parse(s).expect("parsed");
        assert_eq!(
            r,
            Resident {
                anon: 100 << 10,
                file: 180 << 10,
                shmem: 20 << 10
            }
        );
        assert_eq!(Resident::parse("Name:\tx\n"), None);
    }

    #[test]
    fn this_process_has_anonymous_memory() {
        let r = Resident::now().expect("Linux reports the split");
        assert!(r.anon > 0, "{r:?}");
    }

    #[test]
    fn without_the_counting_allocator_heap_figures_are_absent() {
        // The test binary runs on the system allocator: nothing is counted,
        // so nothing may be reported (absent, never 0).
        assert_eq!(heap_bytes(), None);
        assert_eq!(take_heap_peak(), None);
    }
}

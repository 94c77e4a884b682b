//! Whose Rust heap is it: the harness's or an engine's. The counting
//! allocator (`ledgerbench_meter::memory::Counting`) asks [`owner`] at
//! every allocation and free, and keeps a live count and a peak per owner.
//!
//! An allocation is the engine's when it is made inside an engine call
//! (an [`EngineScope`]: every store `BackendSpec::open` returns runs its
//! calls in one) or on a thread the harness did not start. The harness
//! never names its threads, so they carry the process's name; a thread
//! named otherwise was named by an engine library (fjall's workers are
//! `fjall:worker`), and everything it allocates is the engine's. A buffer
//! an engine call grew for the harness (a GET's value) is handed over with
//! [`adopt`], so its free is counted where its allocation now is.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Whose an allocation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The harness: generators, buffers, histograms, results.
    Harness,
    /// An engine linked from Rust (redb, fjall, the bindings' Rust side).
    Engine,
}

/// Live bytes and peak of one owner.
struct Count {
    current: AtomicU64,
    peak: AtomicU64,
}

impl Count {
    const fn new() -> Self {
        Self {
            current: AtomicU64::new(0),
            peak: AtomicU64::new(0),
        }
    }

    fn grew(&self, n: u64) {
        let now = self.current.fetch_add(n, Ordering::Relaxed).wrapping_add(n);
        // A plain load first: most allocations do not raise the peak, and
        // a read keeps the line shared between the allocating threads.
        if now > self.peak.load(Ordering::Relaxed) && now < u64::MAX / 2 {
            self.peak.fetch_max(now, Ordering::Relaxed);
        }
    }

    fn shrank(&self, n: u64) {
        self.current.fetch_sub(n, Ordering::Relaxed);
    }

    /// Live bytes; a count driven below zero by a free the other owner's
    /// allocation made (an error string handed out of an engine) reads 0.
    fn now(&self) -> u64 {
        let c = self.current.load(Ordering::Relaxed);
        if c > u64::MAX / 2 { 0 } else { c }
    }

    fn take_peak(&self) -> u64 {
        let now = self.now();
        self.peak.swap(now, Ordering::Relaxed).max(now)
    }
}

static HARNESS: Count = Count::new();
static ENGINE: Count = Count::new();
static COUNTING: AtomicBool = AtomicBool::new(false);
static NAMED: AtomicBool = AtomicBool::new(false);
/// The process's name as its first thread had it (`PR_GET_NAME`).
static MAIN_NAME: AtomicU64 = AtomicU64::new(0);
static MAIN_NAME_HI: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Engine calls this thread is inside.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// 0 not yet known, 1 a harness thread, 2 an engine's.
    static KIND: Cell<u8> = const { Cell::new(0) };
}

/// This thread's name (`PR_GET_NAME`, 16 bytes), without allocating.
fn thread_name() -> (u64, u64) {
    let mut buf = [0u8; 16];
    // SAFETY: PR_GET_NAME writes at most 16 bytes into the buffer.
    unsafe { libc::prctl(libc::PR_GET_NAME, buf.as_mut_ptr()) };
    let lo = u64::from_ne_bytes(buf[..8].try_into().unwrap_or_default());
    let hi = u64::from_ne_bytes(buf[8..].try_into().unwrap_or_default());
    (lo, hi)
}

/// Whether this thread is an engine's: named otherwise than the process.
fn engine_thread() -> bool {
    KIND.with(|k| {
        if k.get() == 0 {
            name_the_process();
            let (lo, hi) = thread_name();
            let main = (
                MAIN_NAME.load(Ordering::Relaxed),
                MAIN_NAME_HI.load(Ordering::Relaxed),
            );
            k.set(if (lo, hi) == main { 1 } else { 2 });
        }
        k.get() == 2
    })
}

/// Who owns what this thread allocates or frees now. Allocation-free, for
/// the allocator.
pub fn owner() -> Owner {
    let in_call = DEPTH.try_with(|d| d.get() > 0).unwrap_or(false);
    if in_call || KIND.try_with(|_| ()).is_ok() && engine_thread() {
        Owner::Engine
    } else {
        Owner::Harness
    }
}

/// Records the process's name, once: the first allocation runs on the
/// main thread, before any other thread exists.
fn name_the_process() {
    if !NAMED.load(Ordering::Relaxed) {
        let (lo, hi) = thread_name();
        MAIN_NAME.store(lo, Ordering::Relaxed);
        MAIN_NAME_HI.store(hi, Ordering::Relaxed);
        NAMED.store(true, Ordering::Relaxed);
    }
}

/// Counts `n` bytes allocated by `who` (the allocator calls this).
pub fn grew(who: Owner, n: usize) {
    if !COUNTING.load(Ordering::Relaxed) {
        COUNTING.store(true, Ordering::Relaxed);
    }
    count(who).grew(n as u64);
}

/// Counts `n` bytes freed by `who` (the allocator calls this).
pub fn shrank(who: Owner, n: usize) {
    count(who).shrank(n as u64);
}

fn count(who: Owner) -> &'static Count {
    match who {
        Owner::Harness => &HARNESS,
        Owner::Engine => &ENGINE,
    }
}

/// Live bytes of `who`'s heap; absent when no counting allocator is
/// installed (then nothing is counted, and 0 would be a lie).
pub fn live(who: Owner) -> Option<u64> {
    COUNTING.load(Ordering::Relaxed).then(|| count(who).now())
}

/// `who`'s highest live heap since the last call (or the start), and a new
/// window from the current level; absent when not counting.
pub fn take_peak(who: Owner) -> Option<u64> {
    COUNTING
        .load(Ordering::Relaxed)
        .then(|| count(who).take_peak())
}

/// Live bytes of `who` as counted, negative when frees of the other
/// owner's allocations outweigh (for tests of the attribution).
pub fn signed_live(who: Owner) -> i64 {
    count(who).current.load(Ordering::Relaxed) as i64
}

/// Hands `n` bytes an engine call allocated for the harness (a buffer it
/// grew) over to the harness, whose free will count them.
pub fn adopt(n: usize) {
    if n > 0 && COUNTING.load(Ordering::Relaxed) {
        ENGINE.shrank(n as u64);
        HARNESS.grew(n as u64);
    }
}

/// Marks this thread as the harness's whatever its name (a test's
/// threads carry the test's name).
pub fn mark_harness_thread() {
    KIND.with(|k| k.set(1));
}

/// While alive, this thread's allocations are the engine's.
pub struct EngineScope(());

impl EngineScope {
    /// Enters an engine call.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        DEPTH.with(|d| d.set(d.get() + 1));
        EngineScope(())
    }
}

impl Drop for EngineScope {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// While alive, this thread's allocations are the harness's again, inside
/// an engine call: a scan's visitor is harness code the engine calls.
pub struct HarnessScope(u32);

impl HarnessScope {
    /// Leaves every engine call this thread is in, until dropped.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        HarnessScope(DEPTH.with(|d| d.replace(0)))
    }
}

impl Drop for HarnessScope {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(self.0));
    }
}

//! The counting allocator, installed as this test binary's global allocator.

use ledgerbench_meter::memory::{Counting, heap_bytes, take_heap_peak};

#[global_allocator]
static A: Counting = Counting;

/// The counts are the process's: the checks run one after the other, on a
/// thread marked as the harness's (libtest names its threads after tests).
#[test]
fn the_counting_allocator_counts_whose_heap_is_whose() {
    ledgerbench_core::heap::mark_harness_thread();
    live_heap_and_its_peak_follow_allocations();
    an_engine_call_s_allocations_are_the_engine_s_and_a_handed_over_buffer_the_harness_s();
}

fn live_heap_and_its_peak_follow_allocations() {
    let before = heap_bytes().expect("counting is installed");
    take_heap_peak();
    let big = vec![7u8; 8 << 20];
    let during = heap_bytes().expect("counting");
    assert!(during >= before + (8 << 20), "{before} -> {during}");
    drop(big);
    let after = heap_bytes().expect("counting");
    assert!(after < during - (7 << 20), "freed: {during} -> {after}");
    // The window's peak saw the 8 MiB; the next window starts low again.
    let peak = take_heap_peak().expect("counting");
    assert!(peak >= before + (8 << 20), "peak {peak}");
    let next = take_heap_peak().expect("counting");
    assert!(next < peak - (7 << 20), "new window {next} after {peak}");
    // Growing in place is counted by its new size.
    let mut v: Vec<u8> = Vec::with_capacity(1 << 20);
    v.reserve_exact(4 << 20);
    assert!(heap_bytes().expect("counting") >= after + (4 << 20));
}

fn an_engine_call_s_allocations_are_the_engine_s_and_a_handed_over_buffer_the_harness_s() {
    use ledgerbench_core::heap::{EngineScope, HarnessScope, adopt};
    use ledgerbench_meter::memory::{engine_heap_bytes, take_engine_heap_peak};
    let (h0, e0) = (
        heap_bytes().expect("counting"),
        engine_heap_bytes().expect("counting"),
    );
    take_engine_heap_peak();
    let kept = {
        let _e = EngineScope::new();
        let kept = vec![1u8; 16 << 20];
        // A visitor inside the call is the harness's code again.
        {
            let _h = HarnessScope::new();
            let visitor = vec![2u8; 4 << 20];
            assert!(heap_bytes().expect("counting") >= h0 + (4 << 20));
            drop(visitor);
        }
        kept
    };
    let (h1, e1) = (
        heap_bytes().expect("counting"),
        engine_heap_bytes().expect("counting"),
    );
    assert!(e1 >= e0 + (16 << 20), "engine {e0} -> {e1}");
    assert!(
        h1 < h0 + (1 << 20),
        "harness {h0} -> {h1}: the engine's 16 MiB counted as the harness's"
    );
    assert!(take_engine_heap_peak().expect("counting") >= e0 + (16 << 20));
    // Handed over: freeing it is the harness's, and both counts return.
    adopt(kept.capacity());
    drop(kept);
    let (h2, e2) = (
        heap_bytes().expect("counting"),
        engine_heap_bytes().expect("counting"),
    );
    assert!(e2 < e0 + (1 << 20), "engine {e0} -> {e2}");
    assert!(h2 < h0 + (1 << 20), "harness {h0} -> {h2}");
    // A thread named by an engine library is the engine's.
    let e3 = engine_heap_bytes().expect("counting");
    let v = std::thread::Builder::new()
        .name("engine:worker".into())
        .spawn(|| {
            let v = vec![3u8; 8 << 20];
            let live = engine_heap_bytes().expect("counting");
            drop(v);
            live
        })
        .expect("spawn")
        .join()
        .expect("join");
    assert!(v >= e3 + (8 << 20) - (64 << 10), "{e3} -> {v}");
}

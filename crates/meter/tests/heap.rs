//! The counting allocator, installed as this test binary's global allocator.

use ledgerbench_meter::memory::{Counting, heap_bytes, take_heap_peak};

#[global_allocator]
static A: Counting = Counting;

#[test]
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

//! A memory-limited run starts cold by emptying the page cache of what it
//! reads (a replay's trace), not the whole machine's: another process's
//! cached pages stay.

mod common;
use common::{ledgerbench, stderr};
use ledgerbench_testkit::cached_pages;

#[test]
#[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
fn a_limited_replay_empties_its_trace_cache_and_no_other() {
    if !ledgerbench_testkit::can_run(ledgerbench_meter::cgroup::MemoryLimit::available()) {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let o = ledgerbench(
        &[
            "record",
            "stellar",
            "--preset",
            "smoke",
            "--ledgers",
            "8",
            "--out",
            "s.kvtrace",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // A file of no run's, read so it is cached: it must stay cached.
    let other = t.path().join("other");
    std::fs::write(&other, vec![1u8; 1 << 20]).expect("write");
    std::fs::read(&other).expect("read");
    let before = cached_pages(&other);
    assert!(before > 0, "a file just written and read is cached");
    let o = ledgerbench(
        &[
            "run",
            "replay",
            "s.kvtrace",
            "--backends",
            "mem",
            "--device",
            "none",
            "--memory-limit",
            "256MiB",
            "--out",
            "rp",
        ],
        t.path(),
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(
        err.matches("emptying the page cache of the run's own files (--memory-limit")
            .count(),
        1,
        "{err}"
    );
    assert!(!err.contains("whole machine's page cache"), "{err}");
    assert_eq!(
        cached_pages(&other),
        before,
        "another file's cache was dropped"
    );
}

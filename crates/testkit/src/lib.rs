//! How a test that needs something beyond a normal user's machine (root,
//! loop devices, memory cgroups, a tmpfs mount, the Go engines) is skipped
//! where that is missing, visibly.
//!
//! Such tests carry `#[ignore = "privileged: ..."]`, so a plain `cargo test`
//! lists them as ignored with the reason; `scripts/test.sh` adds
//! `--include-ignored` when it runs as root, and CI runs as root with
//! [`REQUIRE`] set. Inside the test, [`can_run`] checks the resource itself:
//! where it is missing the test prints why and stops, unless [`REQUIRE`] is
//! set, where a missing resource fails the test, so nothing skips in CI.

use std::fmt::Display;

/// The environment variable that turns every skip into a failure (CI sets it).
pub const REQUIRE: &str = "LEDGERBENCH_REQUIRE_PRIVILEGED";

/// True when a skip must fail: [`REQUIRE`] is set to anything but `0` or empty.
pub fn required() -> bool {
    std::env::var(REQUIRE).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Whether the test can go on: `check` says whether what it needs is here.
/// When it is not, prints `skipped: REASON` and returns false, or panics
/// with the reason when [`REQUIRE`] is set.
pub fn can_run<E: Display>(check: Result<(), E>) -> bool {
    match check {
        Ok(()) => true,
        Err(e) if required() => panic!("{REQUIRE} is set and this test cannot run: {e}"),
        Err(e) => {
            eprintln!("skipped: {e}");
            false
        }
    }
}

/// Ok when the process runs as root; else why a test needs it.
pub fn root() -> Result<(), &'static str> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        Ok(())
    } else {
        Err("needs root (mounts, loop devices or cgroups)")
    }
}

/// Pages of `path` in the page cache, by `fincore` (util-linux, which
/// `scripts/setup.sh`'s base system has); panics when it cannot tell, so a
/// test of eviction never passes without having looked.
pub fn cached_pages(path: &std::path::Path) -> u64 {
    let out = std::process::Command::new("fincore")
        .args(["--noheadings", "--output", "PAGES"])
        .arg(path)
        .output()
        .expect("fincore (util-linux) is installed");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("fincore gave no page count for {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_resource_skips_or_fails_as_required() {
        assert!(can_run(Ok::<(), String>(())));
        // The variable is read per call; this test is the only one here
        // that sets it.
        // SAFETY: no other thread of this test binary reads the environment.
        unsafe { std::env::remove_var(REQUIRE) };
        assert!(!can_run(Err("no loop devices")));
        // SAFETY: as above.
        unsafe { std::env::set_var(REQUIRE, "1") };
        let r = std::panic::catch_unwind(|| can_run(Err("no loop devices")));
        // SAFETY: as above.
        unsafe { std::env::remove_var(REQUIRE) };
        let e = r.expect_err("a required skip fails");
        let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            msg.contains("no loop devices") && msg.contains(REQUIRE),
            "{msg}"
        );
    }
}

//! Whether this build has the Go engines, where the sidecar program is,
//! and how tests that need Go are listed as ignored where this build has
//! none.

use std::path::PathBuf;

/// Why there is no sidecar to run: what the Go build said, or that the
/// binary it built is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoSidecar(pub &'static str);

impl std::fmt::Display for NoSidecar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for NoSidecar {}

/// Why the Go engines cannot run (Go was missing or its build failed when
/// this was built, or their library is not where [`crate::library_path`]
/// looks), or `None`.
pub fn go_unavailable() -> Option<&'static str> {
    if cfg!(ledgerbench_no_go) {
        return Some(
            option_env!("LEDGERBENCH_GO_UNAVAILABLE").unwrap_or("the Go engines did not build"),
        );
    }
    // Looked for, not loaded: loading starts a Go runtime.
    if crate::library_path().is_none() {
        return Some(crate::golib::MISSING);
    }
    None
}

/// The sidecar binary: `$LEDGERBENCH_SIDECAR`, else the one this crate's
/// build made (so a stale copy elsewhere never wins over a fresh build),
/// else `ledgerbench-sidecar` beside the running program (an installed
/// ledgerbench whose build directory is gone); or why there is none. Only
/// the `bridge = "sidecar"` configs need it.
pub fn sidecar() -> std::result::Result<PathBuf, NoSidecar> {
    if let Some(why) = go_unavailable() {
        return Err(NoSidecar(why));
    }
    if let Ok(p) = std::env::var("LEDGERBENCH_SIDECAR") {
        return Ok(PathBuf::from(p));
    }
    if let Some(p) = option_env!("LEDGERBENCH_SIDECAR_BUILT").map(PathBuf::from)
        && p.is_file()
    {
        return Ok(p);
    }
    if let Some(p) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join("ledgerbench-sidecar")))
        && p.is_file()
    {
        return Ok(p);
    }
    Err(NoSidecar(
        "the ledgerbench-sidecar binary was built but is gone (an installed ledgerbench: put one beside it, see docs/src/getting-started.md); or rebuild (cargo build --release --workspace)",
    ))
}

/// Wraps a test that needs the Go engines: where this crate's build had
/// no Go, the test is listed as ignored with the reason instead of failing.
#[cfg(ledgerbench_no_go)]
#[macro_export]
macro_rules! needs_go {
    ($($item:tt)*) => {
        #[ignore = "no Go engines: Go was missing or `go build` failed when this was built (install Go 1.26; scripts/setup.sh does)"]
        $($item)*
    };
}

/// Wraps a test that needs the Go engines: this build has them, so the
/// test runs.
#[cfg(not(ledgerbench_no_go))]
#[macro_export]
macro_rules! needs_go {
    ($($item:tt)*) => {
        $($item)*
    };
}

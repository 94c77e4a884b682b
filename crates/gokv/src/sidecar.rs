//! Which sidecar binary runs the Go engines, why there may be none, and
//! how tests that need it are listed as ignored where this build made none.

use std::path::PathBuf;

/// Why there is no sidecar to run: what its build said, or that the binary
/// it built is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoSidecar(pub &'static str);

impl std::fmt::Display for NoSidecar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for NoSidecar {}

/// The sidecar binary: `$LEDGERBENCH_SIDECAR`, else the one this crate's
/// build made (so a stale copy elsewhere never wins over a fresh build),
/// else `ledgerbench-sidecar` beside the running program (an installed
/// ledgerbench whose build directory is gone); or why there is none.
pub fn sidecar() -> std::result::Result<PathBuf, NoSidecar> {
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
    Err(NoSidecar(option_env!("LEDGERBENCH_SIDECAR_UNAVAILABLE").unwrap_or(
        "the ledgerbench-sidecar binary was built but is gone (an installed ledgerbench: put one beside it, see docs/src/getting-started.md); or rebuild (cargo build --release --workspace)",
    )))
}

/// Wraps a test that needs the Go sidecar: where this crate's build made
/// none, the test is listed as ignored with the reason instead of failing.
#[cfg(ledgerbench_no_sidecar)]
#[macro_export]
macro_rules! needs_sidecar {
    ($($item:tt)*) => {
        #[ignore = "no Go sidecar: Go was missing or `go build` failed when this was built (install Go 1.26; scripts/setup.sh does)"]
        $($item)*
    };
}

/// Wraps a test that needs the Go sidecar: this build made one, so the
/// test runs.
#[cfg(not(ledgerbench_no_sidecar))]
#[macro_export]
macro_rules! needs_sidecar {
    ($($item:tt)*) => {
        $($item)*
    };
}

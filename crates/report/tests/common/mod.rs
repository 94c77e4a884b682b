//! What the verdict's integration tests share: the published sweeps and
//! the answer's rows.

use std::path::{Path, PathBuf};

/// The published verdict's sweeps.
pub fn sweeps() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results/verdict-sweeps-2026-11-22")
}

/// The answer table's `txdata` row.
pub fn txdata_row(text: &str) -> String {
    text.lines()
        .find(|l| l.starts_with("| `txdata`"))
        .expect("txdata row")
        .to_string()
}

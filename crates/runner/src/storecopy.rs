//! Copies of closed stores: a capacity search's prefilled store for each
//! probe, a model's initial state into and out of `--state-cache`. A
//! closed store is its files; every engine ledgerbench runs reopens a copy
//! (a test copies each one's and reads its rows back).

use std::fs;
use std::path::Path;

use anyhow::Context;

/// Copies every file and directory under `from` into `to` (made if
/// missing), each file synced.
pub fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    fs::create_dir_all(to).with_context(|| format!("making {}", to.display()))?;
    let entries = fs::read_dir(from).with_context(|| format!("listing {}", from.display()))?;
    for e in entries {
        let e = e.with_context(|| format!("listing {}", from.display()))?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let kind = e.file_type()?;
        if kind.is_dir() {
            copy_dir(&src, &dst)?;
        } else if kind.is_file() {
            fs::copy(&src, &dst)
                .and_then(|_| fs::File::open(&dst)?.sync_all())
                .with_context(|| format!("copying {} to {}", src.display(), dst.display()))?;
        } else {
            anyhow::bail!(
                "{}: neither a file nor a directory; a store holding one cannot be copied",
                src.display()
            );
        }
    }
    // The new entries themselves, as the engine expects of its directory.
    fs::File::open(to)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("syncing {}", to.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_holding_something_not_a_file_is_refused_by_name() {
        let t = tempfile::tempdir().expect("tempdir");
        let from = t.path().join("from");
        fs::create_dir_all(from.join("sub")).expect("mkdir");
        fs::write(from.join("sub/data"), b"rows").expect("write");
        copy_dir(&from, &t.path().join("to")).expect("copy");
        assert_eq!(
            fs::read(t.path().join("to/sub/data")).expect("read"),
            b"rows"
        );
        std::os::unix::fs::symlink("sub/data", from.join("link")).expect("symlink");
        let e = copy_dir(&from, &t.path().join("again")).expect_err("a symlink");
        assert!(
            format!("{e:#}").contains("neither a file nor a directory"),
            "{e:#}"
        );
    }
}

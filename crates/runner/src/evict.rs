//! Emptying the page cache of named files only (a run's inputs, stores in
//! the run directory), so a cold start touches no other process's cache:
//! each file is synced, then the kernel is told its pages are not needed
//! (`posix_fadvise(POSIX_FADV_DONTNEED)`), which drops the clean, unmapped
//! ones. ledgerbench never drops the whole machine's cache: that took
//! other processes' pages, and its own executable's, whose faulting back
//! in was then charged to the run's cgroup (docs/src/meters.md).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// What [`files`] emptied: how many files and how many bytes they hold.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Evicted {
    /// Regular files whose cache was emptied.
    pub files: u64,
    /// Their total size, bytes.
    pub bytes: u64,
}

/// Empties the page cache of every regular file at or under `paths`
/// (directories are walked; a path that does not exist is skipped, as a
/// store not yet made), and says so the first time in a process (`why`
/// names what needs a cold cache). Files are synced first: a dirty page is
/// not dropped.
pub fn files(paths: &[PathBuf], why: &str) -> anyhow::Result<Evicted> {
    let mut done = Evicted::default();
    for p in paths {
        walk(p, &mut done)?;
    }
    static SAID: std::sync::Once = std::sync::Once::new();
    if done.files > 0 {
        SAID.call_once(|| {
            ledgerbench_core::note!(
                "ledgerbench: emptying the page cache of the run's own files ({why}); no other cache is touched"
            );
        });
    }
    Ok(done)
}

fn walk(path: &Path, done: &mut Evicted) -> anyhow::Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    if meta.is_dir() {
        let entries =
            std::fs::read_dir(path).with_context(|| format!("listing {}", path.display()))?;
        for e in entries {
            let e = e.with_context(|| format!("listing {}", path.display()))?;
            walk(&e.path(), done)?;
        }
    } else if meta.is_file() {
        one(path).with_context(|| format!("emptying the page cache of {}", path.display()))?;
        done.files += 1;
        done.bytes += meta.len();
    }
    Ok(())
}

fn one(path: &Path) -> std::io::Result<()> {
    let f = File::open(path)?;
    // fsync works on a read-only descriptor on Linux, and is cheap on a
    // file with nothing dirty.
    f.sync_data()?;
    // SAFETY: a valid open descriptor; offset 0 and length 0 mean the
    // whole file; the call only advises the kernel.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ledgerbench_testkit::cached_pages;

    fn on_tmpfs(path: &Path) -> bool {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: a NUL-terminated path and a zeroed struct the call fills.
        let mut s: libc::statfs = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::statfs(c.as_ptr(), &mut s) };
        rc == 0 && s.f_type == libc::TMPFS_MAGIC
    }

    #[test]
    fn a_named_file_leaves_the_cache_and_another_stays() {
        let t = tempfile::tempdir().expect("tempdir");
        let dir = t.path().join("store");
        std::fs::create_dir_all(dir.join("sub")).expect("mkdir");
        let ours = dir.join("sub/data");
        let other = t.path().join("other");
        let bytes = vec![7u8; 1 << 20];
        std::fs::write(&ours, &bytes).expect("write");
        std::fs::write(&other, &bytes).expect("write");
        // tmpfs is the cache itself: its pages cannot leave.
        if on_tmpfs(t.path()) {
            return;
        }
        let before = cached_pages(&ours);
        assert!(before > 0, "a file just written is cached");
        let gone = files(&[dir.clone(), t.path().join("not-made")], "test").expect("evict");
        assert_eq!(
            gone,
            Evicted {
                files: 1,
                bytes: 1 << 20
            }
        );
        let after = cached_pages(&ours);
        assert_eq!(after, 0, "{ours:?} still has {after} pages cached");
        assert!(cached_pages(&other) > 0, "a file not named lost its cache");
    }

    #[test]
    fn nothing_named_is_nothing_done() {
        assert_eq!(files(&[], "test").expect("evict"), Evicted::default());
    }
}

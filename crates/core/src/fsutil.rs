//! Filesystem helpers shared by backends and the driver.

use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::{DiskUsage, Error, Op, Result};

/// Name of the marker file ledgerbench writes in every store directory it creates.
pub const STORE_MARKER: &str = "LEDGERBENCH_STORE";

/// Sums allocated and apparent bytes of every regular file below `dir`.
pub fn dir_usage(dir: &Path) -> io::Result<DiskUsage> {
    let mut usage = DiskUsage::default();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let listing = match fs::read_dir(&d) {
            Ok(l) => l,
            // A subdirectory removed after it was listed (not the root).
            Err(e) if e.kind() == io::ErrorKind::NotFound && d != dir => continue,
            Err(e) => return Err(e),
        };
        for entry in listing {
            let entry = entry?;
            // An engine deletes files while it runs (compaction outputs
            // replace inputs, WALs retire): one gone between listing and
            // stat no longer uses space, so it is skipped, not an error.
            let md = match entry.metadata() {
                Ok(md) => md,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            if md.is_dir() {
                stack.push(entry.path());
            } else if md.is_file() {
                // st_blocks is in 512-byte units whatever the filesystem block size.
                usage.allocated_bytes += md.blocks() * 512;
                usage.apparent_bytes += md.len();
                usage.files += 1;
            }
        }
    }
    Ok(usage)
}

/// Makes `dir` ready to hold a store of `engine`, refusing anything that is
/// not ours: a path that is a file, a non-empty directory without ledgerbench's
/// marker, or a store of another engine. Creates `dir` when missing. Returns
/// true when the store is new.
pub fn claim_store_dir(engine: &'static str, dir: &Path) -> Result<bool> {
    let bad = |reason: String| Error::BadPath {
        engine,
        op: Op::Open,
        path: dir.to_path_buf(),
        reason,
    };
    let io = |source| Error::Io {
        engine,
        op: Op::Open,
        path: dir.to_path_buf(),
        source,
    };
    match fs::metadata(dir) {
        Ok(md) if !md.is_dir() => {
            return Err(bad(
                "the path is a file, not a directory; give a directory for the store".into(),
            ));
        }
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::create_dir_all(dir).map_err(io)?;
            if let Some(parent) = dir.parent() {
                sync_dir(parent).map_err(io)?;
            }
        }
        Err(e) => return Err(io(e)),
    }
    let marker = dir.join(STORE_MARKER);
    match fs::read_to_string(&marker) {
        Ok(found) => {
            let found = found.trim();
            if found != engine {
                return Err(bad(format!(
                    "it holds a {found} store made by ledgerbench, not a {engine} store; use another directory"
                )));
            }
            Ok(false)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // A marker whose write a crash cut short leaves only its temporary file.
            let tmp = format!(".{STORE_MARKER}.tmp");
            let mut entries = fs::read_dir(dir)
                .map_err(io)?
                .filter(|e| e.as_ref().map_or(true, |e| e.file_name() != tmp.as_str()));
            if entries.next().is_some() {
                return Err(bad(format!(
                    "the directory is not empty and has no {STORE_MARKER} marker, so it is not a store ledgerbench made; \
                     ledgerbench never writes into a directory it did not create: give an empty or missing directory"
                )));
            }
            write_durably(dir, STORE_MARKER, format!("{engine}\n").as_bytes()).map_err(|e| {
                if e.kind() == io::ErrorKind::PermissionDenied {
                    bad("the directory is not writable; give a directory you can write to".into())
                } else {
                    io(e)
                }
            })?;
            Ok(true)
        }
        Err(e) => Err(io(e)),
    }
}

/// Writes `name` in `dir` so that a power cut leaves either no file or the
/// whole of it: into a temporary file, fsynced, renamed, then the directory
/// fsynced (a marker written without these came back empty after a cut).
pub fn write_durably(dir: &Path, name: &str, data: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let tmp = dir.join(format!(".{name}.tmp"));
    let mut f = fs::File::create(&tmp)?;
    f.write_all(data)?;
    f.sync_all()?;
    fs::rename(&tmp, dir.join(name))?;
    sync_dir(dir)
}

/// Fsyncs a directory, making the names created or renamed in it durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

/// Fsyncs `dir` and every directory under it, so the files an engine made
/// while opening are named durably. LMDB, MDBX, redb and bbolt create their
/// files without syncing the directory, and engines create their own
/// subdirectories without syncing the parent: under a crash that keeps only
/// synced directory entries, each lost every commit since the store was
/// made. An application has to do this itself; so does ledgerbench.
pub fn sync_dirs(dir: &Path) -> io::Result<()> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        // The engine's threads run: a subdirectory listed may be gone.
        let gone = |e: &io::Error| e.kind() == io::ErrorKind::NotFound && d != dir;
        let listing = match fs::read_dir(&d) {
            Err(e) if gone(&e) => continue,
            r => r?,
        };
        for e in listing {
            let e = e?;
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(e.path());
            }
        }
        match sync_dir(&d) {
            // A read-only filesystem has nothing to make durable.
            Err(e) if e.raw_os_error() == Some(libc::EROFS) || gone(&e) => {}
            r => r?,
        }
    }
    Ok(())
}

/// True when `dir` exists and holds anything: a directory a command must
/// not write into (missing or empty is fine).
pub fn holds_files(dir: &Path) -> io::Result<bool> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => Ok(entries.next().is_some()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Bytes available to unprivileged writers on the filesystem holding `path`.
pub fn free_bytes(path: &Path) -> io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path has a NUL byte"))?;
    // SAFETY: an all-zero statvfs is valid; statvfs only writes into it.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated path and `st` is writable.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> std::path::PathBuf {
        let d =
            std::env::temp_dir().join(format!("ledgerbench-core-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn claims_new_and_own_dirs_and_refuses_others() {
        let d = tmp("claim");
        assert!(claim_store_dir("mem", &d).expect("new dir"));
        assert!(!claim_store_dir("mem", &d).expect("own dir"));
        let err = claim_store_dir("lmdb", &d).expect_err("other engine");
        assert!(err.to_string().contains("holds a mem store"), "{err}");

        let foreign = tmp("foreign");
        fs::create_dir_all(&foreign).expect("mkdir");
        fs::write(foreign.join("precious.txt"), b"user data").expect("write");
        let err = claim_store_dir("mem", &foreign).expect_err("foreign dir");
        assert!(err.to_string().contains("not empty"), "{err}");
        assert_eq!(
            fs::read(foreign.join("precious.txt")).expect("read"),
            b"user data"
        );

        let file = foreign.join("precious.txt");
        let err = claim_store_dir("mem", &file).expect_err("file");
        assert!(err.to_string().contains("is a file"), "{err}");
        fs::remove_dir_all(&d).expect("cleanup");
        fs::remove_dir_all(&foreign).expect("cleanup");
    }

    #[test]
    fn free_bytes_of_tmp_is_positive_and_missing_paths_fail() {
        assert!(free_bytes(&std::env::temp_dir()).expect("statvfs") > 0);
        assert!(free_bytes(Path::new("/no/such/ledgerbench/path")).is_err());
    }

    #[test]
    fn dir_usage_survives_files_vanishing_while_it_walks() {
        let d = tmp("churn");
        fs::create_dir_all(d.join("sub")).expect("mkdir");
        // Enough files that listing and stat-ing them takes a while, so the
        // churn thread deletes some in between, as compaction does.
        let n = 3000u64;
        for i in 0..n {
            fs::write(d.join("sub").join(format!("{i}.sst")), b"x").expect("write");
        }
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut i = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let f = d.join("sub").join(format!("{}.sst", (i * 7919) % n));
                    let _ = fs::remove_file(&f);
                    let _ = fs::write(&f, b"x");
                    i += 1;
                }
            });
            // Collected before asserting, so a failure cannot leave the
            // churn thread running and the scope waiting for it.
            let walks: Vec<io::Result<DiskUsage>> = (0..100).map(|_| dir_usage(&d)).collect();
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            walks
        })
        .into_iter()
        .for_each(|w| {
            w.expect("a vanished file is skipped, not an error");
        });
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn dir_usage_counts_allocated_blocks_not_length() {
        let d = tmp("usage");
        fs::create_dir_all(d.join("sub")).expect("mkdir");
        fs::write(d.join("sub/a"), vec![1u8; 10_000]).expect("write");
        // A sparse file: long apparent length, almost nothing allocated.
        let f = fs::File::create(d.join("sparse")).expect("create");
        f.set_len(100 << 20).expect("set_len");
        let u = dir_usage(&d).expect("usage");
        assert_eq!(u.files, 2);
        assert_eq!(u.apparent_bytes, 10_000 + (100 << 20));
        assert!(
            u.allocated_bytes >= 10_000 && u.allocated_bytes < 1 << 20,
            "{u:?}"
        );
        fs::remove_dir_all(&d).expect("cleanup");
    }
}

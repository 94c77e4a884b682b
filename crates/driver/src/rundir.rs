//! Run directories: kvbench writes only into directories it created.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::DriverError;

/// Marker file kvbench writes in every run directory it creates.
pub const RUN_MARKER: &str = "KVBENCH_RUN";

/// A run directory kvbench owns.
#[derive(Debug)]
pub struct RunDir {
    path: PathBuf,
}

impl RunDir {
    /// Creates `path` for a run. An existing directory is refused unless it
    /// is empty or `force` is set; kvbench then writes beside what is there
    /// and deletes nothing it did not create.
    pub fn create(path: &Path, force: bool) -> Result<Self, DriverError> {
        let io = |what, source| DriverError::Io {
            what,
            path: path.to_path_buf(),
            source,
        };
        match fs::metadata(path) {
            Ok(md) if !md.is_dir() => {
                return Err(DriverError::Config(format!(
                    "output path {} is a file; give a directory that does not exist yet",
                    path.display()
                )));
            }
            Ok(_) => {
                let empty = fs::read_dir(path)
                    .map_err(|e| io("reading output directory", e))?
                    .next()
                    .is_none();
                if !empty && !force {
                    return Err(DriverError::Config(format!(
                        "output directory {} already exists and is not empty; kvbench does not write into \
                         directories it did not create. Give a new --out path, or pass --force to write beside \
                         its contents (nothing there is deleted)",
                        path.display()
                    )));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                fs::create_dir_all(path).map_err(|e| io("creating output directory", e))?;
            }
            Err(e) => return Err(io("checking output directory", e)),
        }
        fs::write(path.join(RUN_MARKER), "kvbench run directory\n")
            .map_err(|e| io("writing run marker in", e))?;
        Ok(Self {
            path: path.to_path_buf(),
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A fresh directory for one store of one backend run; it must not exist.
    pub fn store_dir(&self, run: &str, store: &str) -> Result<PathBuf, DriverError> {
        let d = self.path.join("stores").join(sanitize(run)).join(store);
        if d.exists() {
            return Err(DriverError::Config(format!(
                "store directory {} already exists; use a new --out directory",
                d.display()
            )));
        }
        Ok(d)
    }

    /// Removes a store directory this run created (to free disk between backends).
    pub fn remove_store_dir(&self, dir: &Path) -> Result<(), DriverError> {
        // Only ever below our own stores/ folder.
        if !dir.starts_with(self.path.join("stores")) {
            return Err(DriverError::Config(format!(
                "refusing to remove {}: not a store of this run",
                dir.display()
            )));
        }
        fs::remove_dir_all(dir).map_err(|source| DriverError::Io {
            what: "removing store directory",
            path: dir.to_path_buf(),
            source,
        })
    }
}

/// Where a run writes when `--out` is not given: `NAME-TIMESTAMP` under
/// `$KVBENCH_RUNS_DIR`, or under `kvbench-runs` in the working directory.
pub fn default_out(name: &str) -> PathBuf {
    let root = std::env::var_os("KVBENCH_RUNS_DIR")
        .map_or_else(|| PathBuf::from("kvbench-runs"), PathBuf::from);
    root.join(format!(
        "{}-{}",
        sanitize(name),
        crate::timefmt::now_stamp()
    ))
}

/// Makes a label safe as one path component.
pub fn sanitize(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_foreign_dirs_unless_forced_and_never_deletes() {
        let t = tempfile::tempdir().expect("tempdir");
        let out = t.path().join("run");
        let rd = RunDir::create(&out, false).expect("new dir");
        assert!(out.join(RUN_MARKER).exists());
        let s = rd
            .store_dir("ledgers=lmdb,txdata=mdbx", "txdata")
            .expect("fresh");
        assert!(s.ends_with("stores/ledgers_lmdb_txdata_mdbx/txdata"));
        assert!(
            rd.remove_store_dir(t.path()).is_err(),
            "outside stores/ is refused"
        );

        let foreign = t.path().join("foreign");
        fs::create_dir(&foreign).expect("mkdir");
        fs::write(foreign.join("keep.txt"), "mine").expect("write");
        let e = RunDir::create(&foreign, false).expect_err("refused");
        assert!(e.to_string().contains("--force"), "{e}");
        RunDir::create(&foreign, true).expect("forced");
        assert_eq!(
            fs::read_to_string(foreign.join("keep.txt")).expect("kept"),
            "mine"
        );

        let file = foreign.join("keep.txt");
        assert!(RunDir::create(&file, true).is_err());
    }
}

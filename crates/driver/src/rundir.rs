//! Run directories: ledgerbench writes only into directories it created.
//!
//! Each run claims a directory of its own, atomically: a fresh one it
//! creates (`mkdir` fails if another run got there first), or an empty one
//! the user named, claimed by creating the marker file exclusively. With
//! `--force` a directory that already holds files gets the run in a new
//! subdirectory beside them, so no run ever replaces or appends to another
//! run's files. A run that ends having kept nothing removes what it made,
//! so it never blocks its own retry.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::DriverError;

/// Marker file ledgerbench writes in every run directory it creates.
pub const RUN_MARKER: &str = "LEDGERBENCH_RUN";
/// Set by a supervisor for its worker: the run directory it claimed.
pub const RUN_DIR_ENV: &str = "LEDGERBENCH_RUN_DIR";

/// A run directory ledgerbench owns.
#[derive(Debug)]
pub struct RunDir {
    path: PathBuf,
    /// This run made the directory itself (not a user's empty one).
    made: bool,
    /// The runs root this run made for it (`ledgerbench-runs/` on a first run),
    /// removed with the run when it kept nothing and holds nothing else.
    made_root: Option<PathBuf>,
}

fn io_err(what: &'static str, path: &Path) -> impl FnOnce(io::Error) -> DriverError {
    let path = path.to_path_buf();
    move |source| DriverError::Io { what, path, source }
}

impl RunDir {
    /// Claims a directory for one run: `out`, or a fresh one named after
    /// `workload` under the runs root. An existing non-empty `out` is
    /// refused unless `force`, which puts the run in a new subdirectory of
    /// it; nothing there is touched.
    pub fn claim(out: Option<&Path>, workload: &str, force: bool) -> Result<Self, DriverError> {
        let Some(out) = out else {
            return Self::fresh_in(&runs_root(), workload);
        };
        // Every failure names the flag and the path the user gave.
        Self::claim_out(out, workload, force).map_err(|e| match e {
            DriverError::Io { .. } => DriverError::Config(format!("--out {}: {e}", out.display())),
            other => other,
        })
    }

    fn claim_out(out: &Path, workload: &str, force: bool) -> Result<Self, DriverError> {
        match fs::metadata(out) {
            Ok(md) if !md.is_dir() => Err(DriverError::Config(format!(
                "--out {} is a file; give a directory that does not exist yet",
                out.display()
            ))),
            Ok(_) => Self::existing(out, workload, force),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
                    fs::create_dir_all(parent).map_err(io_err(
                        "creating the parent of the output directory",
                        parent,
                    ))?;
                }
                match fs::create_dir(out) {
                    Ok(()) => Self::mark(out, true),
                    // Another run made it a moment ago: judged as existing.
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                        Self::existing(out, workload, force)
                    }
                    Err(e) => Err(io_err("creating output directory", out)(e)),
                }
            }
            Err(e) => Err(io_err("checking output directory", out)(e)),
        }
    }

    fn existing(out: &Path, workload: &str, force: bool) -> Result<Self, DriverError> {
        let empty = fs::read_dir(out)
            .map_err(io_err("reading output directory", out))?
            .next()
            .is_none();
        if empty {
            return Self::mark(out, false);
        }
        if !force {
            let what = if out.join(RUN_MARKER).exists() {
                "holds an earlier ledgerbench run, whose files are its own"
            } else {
                "already exists and is not empty; ledgerbench does not write into directories it did not create"
            };
            return Err(DriverError::Config(format!(
                "output directory {} {what}. Give a new --out path, or pass --force to write this \
                 run into a new subdirectory of it (nothing there is replaced or deleted)",
                out.display()
            )));
        }
        let d = Self::fresh_in(out, workload)?;
        ledgerbench_core::note!(
            "ledgerbench: {} holds other files; this run writes into {} (--force)",
            out.display(),
            d.path.display()
        );
        Ok(d)
    }

    /// Makes `NAME-YYYYMMDD-HHMMSS[-N]` under `root`: `mkdir` either makes
    /// it or fails, so two runs started in the same second get two names.
    fn fresh_in(root: &Path, workload: &str) -> Result<Self, DriverError> {
        let root_is_new = !root.exists();
        fs::create_dir_all(root).map_err(io_err("creating the runs directory", root))?;
        let base = format!("{}-{}", sanitize(workload), crate::timefmt::now_stamp());
        for n in 1..10_000 {
            let name = if n == 1 {
                base.clone()
            } else {
                format!("{base}-{n}")
            };
            let path = root.join(name);
            match fs::create_dir(&path) {
                Ok(()) => {
                    let mut d = Self::mark(&path, true)?;
                    d.made_root = root_is_new.then(|| root.to_path_buf());
                    return Ok(d);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io_err("creating output directory", &path)(e)),
            }
        }
        Err(DriverError::Config(format!(
            "{} holds 10,000 runs named {base}: give --out",
            root.display()
        )))
    }

    /// Writes the marker exclusively: of two runs given one empty
    /// directory, one gets it and the other is told.
    fn mark(path: &Path, made: bool) -> Result<Self, DriverError> {
        let marker = path.join(RUN_MARKER);
        let mut f = match fs::File::options()
            .write(true)
            .create_new(true)
            .open(&marker)
        {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(DriverError::Config(format!(
                    "another ledgerbench run claimed {} a moment ago; give a new --out path",
                    path.display()
                )));
            }
            Err(e) => return Err(io_err("writing run marker in", path)(e)),
        };
        let d = Self {
            path: path.to_path_buf(),
            made,
            made_root: None,
        };
        if let Err(e) = writeln!(f, "ledgerbench run directory\npid={}", std::process::id()) {
            // A full disk: the marker stays empty, but must not linger.
            drop(f);
            d.discard_if_empty();
            return Err(io_err("writing run marker in", path)(e));
        }
        Ok(d)
    }

    /// Claims again a run directory ledgerbench made, to go on with its run
    /// (`--resume`): its marker then names this process. Never removed
    /// when this drops: it holds the run's results.
    pub fn reopen(path: &Path) -> Result<Self, DriverError> {
        let marker = path.join(RUN_MARKER);
        if !marker.is_file() {
            return Err(DriverError::Config(format!(
                "{} is not a ledgerbench run directory",
                path.display()
            )));
        }
        fs::write(
            &marker,
            format!("ledgerbench run directory\npid={}\n", std::process::id()),
        )
        .map_err(io_err("writing run marker in", path))?;
        Ok(Self {
            path: path.to_path_buf(),
            made: false,
            made_root: None,
        })
    }

    /// The directory a supervisor claimed for this worker
    /// ([`RUN_DIR_ENV`]), if this process is one.
    pub fn adopt() -> Option<Result<Self, DriverError>> {
        let path = PathBuf::from(std::env::var_os(RUN_DIR_ENV)?);
        Some(if path.join(RUN_MARKER).is_file() {
            Ok(Self {
                path,
                made: false,
                made_root: None,
            })
        } else {
            Err(DriverError::Config(format!(
                "{RUN_DIR_ENV}={} is not a ledgerbench run directory",
                path.display()
            )))
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A fresh directory for one store of one backend run; it must not exist.
    pub fn store_dir(&self, run: &str, store: &str) -> Result<PathBuf, DriverError> {
        let d = self.stores_of(run).join(store);
        if d.exists() {
            return Err(DriverError::Config(format!(
                "store directory {} already exists; use a new --out directory",
                d.display()
            )));
        }
        Ok(d)
    }

    /// Where the stores of run `run` live.
    pub fn stores_of(&self, run: &str) -> PathBuf {
        self.path.join("stores").join(sanitize(run))
    }

    /// Removes a store directory this run created (to free disk between
    /// backends), then its run's folder and `stores/` when they are empty.
    pub fn remove_store_dir(&self, dir: &Path) -> Result<(), DriverError> {
        let stores = self.path.join("stores");
        // Only ever below our own stores/ folder.
        if !dir.starts_with(&stores) || dir == stores {
            return Err(DriverError::Config(format!(
                "refusing to remove {}: not a store of this run",
                dir.display()
            )));
        }
        match fs::remove_dir_all(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err("removing store directory", dir)(e)),
        }
        let mut up = dir.parent();
        while let Some(p) = up.filter(|p| p.starts_with(&stores)) {
            if fs::remove_dir(p).is_err() {
                break;
            }
            up = p.parent();
        }
        Ok(())
    }

    /// When the run kept nothing (no run recorded, no batch, only ledgerbench's
    /// own bookkeeping), removes what it made: its marker, empty results,
    /// files left aside by a failed write, empty folders, and the directory
    /// itself if this run made it. Returns true when it did. A retry into
    /// the same `--out` then starts clean instead of being refused.
    pub fn discard_if_empty(&self) -> bool {
        if !kept_nothing(&self.path) {
            remove_tmp_files(&self.path);
            return false;
        }
        for name in [
            RUN_MARKER,
            "results.json",
            ".ledgerbench-current-run",
            "batches.jsonl",
        ] {
            let _ = fs::remove_file(self.path.join(name));
        }
        remove_tmp_files(&self.path);
        remove_empty_dirs(&self.path.join("stores"));
        if self.made {
            let _ = fs::remove_dir(&self.path);
            if let Some(root) = &self.made_root {
                let _ = fs::remove_dir(root);
            }
        }
        true
    }
}

impl Drop for RunDir {
    /// A run that ends having kept nothing (refused, failed before its
    /// first result, out of disk) leaves nothing behind.
    fn drop(&mut self) {
        self.discard_if_empty();
    }
}

/// True when `dir` holds nothing but a run's bookkeeping: no recorded run,
/// no batch or segment line, no store, no file a user or another run put there.
fn kept_nothing(dir: &Path) -> bool {
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        let empty_file = || fs::metadata(&path).is_ok_and(|m| m.len() == 0);
        let ok = match name.as_str() {
            RUN_MARKER | ".ledgerbench-current-run" => true,
            "results.json" => no_runs(&path),
            "batches.jsonl" | "segments.jsonl" | "measurements.jsonl" => empty_file(),
            "stores" => only_empty_dirs(&path),
            n => n.ends_with(".tmp"),
        };
        if !ok {
            return false;
        }
    }
    true
}

fn no_runs(results: &Path) -> bool {
    let Ok(bytes) = fs::read(results) else {
        return false;
    };
    serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|v| v.get("runs").and_then(|r| r.as_array()).map(Vec::is_empty))
        .unwrap_or(false)
}

fn only_empty_dirs(dir: &Path) -> bool {
    fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .all(|e| e.file_type().is_ok_and(|t| t.is_dir()) && only_empty_dirs(&e.path()))
    })
}

fn remove_empty_dirs(dir: &Path) {
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_empty_dirs(&e.path());
            }
        }
    }
    let _ = fs::remove_dir(dir);
}

/// Files a failed atomic write left aside (`NAME.tmp`) in the run's top level.
fn remove_tmp_files(dir: &Path) {
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().ends_with(".tmp")
                && e.file_type().is_ok_and(|t| t.is_file())
            {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}

/// The root of default run directories: `$LEDGERBENCH_RUNS_DIR`, or
/// `ledgerbench-runs` in the working directory.
pub fn runs_root() -> PathBuf {
    std::env::var_os("LEDGERBENCH_RUNS_DIR")
        .map_or_else(|| PathBuf::from("ledgerbench-runs"), PathBuf::from)
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
mod tests;

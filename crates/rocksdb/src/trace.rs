//! RocksDB's own query trace of a store (`trace_dir` in the config), written
//! by RocksDB through its C API (`rocksdb_start_trace`), as a node's
//! operator would capture one: every Get, Write and Seek the run makes, in
//! RocksDB's format, for `ledgerbench import rocksdb-trace`.

use std::ffi::{CStr, CString, c_char};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use ledgerbench_core::{Error, Op, Result};
use rocksdb::{AsRawPtr, DB};

use crate::ENGINE;

/// Where a store's trace goes: `DIR/<store directory name>.trace`.
pub(crate) fn file_for(dir: &Path, store_dir: &Path) -> PathBuf {
    let name = store_dir
        .file_name()
        .map_or_else(|| "store".into(), |n| n.to_string_lossy().into_owned());
    dir.join(format!("{name}.trace"))
}

fn failed(op: Op, path: &Path, what: String) -> Error {
    Error::engine(ENGINE, op, path, what)
}

/// Takes the error RocksDB left in `err`, freeing it.
///
/// # Safety
/// `err` is null or a string RocksDB allocated.
pub(crate) unsafe fn take(err: *mut c_char) -> Option<String> {
    if err.is_null() {
        return None;
    }
    // SAFETY: RocksDB's C API leaves a NUL-terminated string it allocated.
    let s = unsafe { CStr::from_ptr(err) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: freed once, by RocksDB's own free.
    unsafe { librocksdb_sys::rocksdb_free(err.cast()) };
    Some(s)
}

/// Refuses `trace_dir` for a backend of several databases (`what`, say
/// "a sharded store"): one trace file per store could not hold them.
pub(crate) fn refuse_for_several(cfg: &crate::RocksConfig, what: &str) -> Result<()> {
    match cfg.trace_dir {
        Some(_) => Err(Error::Config {
            engine: ENGINE,
            message: format!(
                "trace_dir: {what} is several databases; trace with rocksdb-leveled, -universal, -fifo, -blob or -tuned"
            ),
        }),
        None => Ok(()),
    }
}

/// Starts tracing `db` into `file` (never over an existing file).
pub(crate) fn start(db: &DB, file: &Path) -> Result<()> {
    if file.exists() {
        return Err(failed(
            Op::Open,
            file,
            "a trace file is already there; name a new trace_dir (a trace is never overwritten)"
                .into(),
        ));
    }
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).map_err(|e| failed(Op::Open, parent, e.to_string()))?;
    }
    let c = CString::new(file.as_os_str().as_bytes())
        .map_err(|_| failed(Op::Open, file, "a trace path holds no NUL byte".into()))?;
    let mut err: *mut c_char = std::ptr::null_mut();
    // SAFETY: the database handle is alive for the call; null env, env
    // options and trace options mean the database's env and defaults.
    unsafe {
        librocksdb_sys::rocksdb_start_trace(
            db.as_raw_ptr(),
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
            c.as_ptr(),
            &mut err,
        );
    }
    // SAFETY: `err` is what the call left.
    match unsafe { take(err) } {
        Some(e) => Err(failed(
            Op::Open,
            file,
            format!("starting RocksDB's trace: {e}"),
        )),
        None => Ok(()),
    }
}

/// Ends the trace of `db`: RocksDB writes the end record and closes the file.
pub(crate) fn end(db: &DB, file: &Path) -> Result<()> {
    let mut err: *mut c_char = std::ptr::null_mut();
    // SAFETY: the database handle is alive for the call.
    unsafe { librocksdb_sys::rocksdb_end_trace(db.as_raw_ptr(), &mut err) };
    // SAFETY: `err` is what the call left.
    match unsafe { take(err) } {
        Some(e) => Err(failed(
            Op::Close,
            file,
            format!("ending RocksDB's trace: {e}"),
        )),
        None => Ok(()),
    }
}

//! A Go engine in ledgerbench's process: the engines of `go/` built as a
//! shared library ([`crate::golib`], loaded at the first Go open), called
//! through the small C ABI of `go/capi.go`. A call costs a cgo transition,
//! not a socket round trip; the Go runtime runs inside this process, so the
//! process meters (CPU, RSS) and the run's memory cgroup see the engine's
//! work, and a kill -9 or a power cut ends it with everything else.
//!
//! The Go runtime keeps its own defaults for `GOMAXPROCS` (the CPUs this
//! process may use, cgroup quotas included): the Rust threads that call in
//! take the Go scheduler's processors only while inside an engine, and an
//! engine's fsync hands its processor on. Its collector's soft memory limit
//! is three quarters of the memory cgroup the process is in at each open
//! (`setMemoryLimit` in `go/engine.go` says why); both are in each store's
//! stats (`extra.go_maxprocs`, `extra.go_memory_limit_bytes`).

use std::ffi::{CStr, c_char, c_int};

use crate::golib::{GoLib, lib};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ledgerbench_core::{Batch, Capabilities, EngineStats, Error, KvStore, Op, Result};

use crate::GoEngine;
use crate::wire::{self, FIRST_PAGE};

/// What flock's EWOULDBLOCK reads as in a Go error: the store's directory
/// is locked.
const LOCK_BUSY: &str = "resource temporarily unavailable";
/// Opens retried while the lock is busy, 25 ms apart.
const LOCK_RETRIES: u32 = 40;

/// The error a call returned (a C string the Go side allocated), freed.
fn taken(err: *mut c_char) -> Option<String> {
    if err.is_null() {
        return None;
    }
    // SAFETY: a non-null return is a NUL-terminated string from C.CString,
    // ours to free once read.
    let s = unsafe { CStr::from_ptr(err) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: C.CString allocates with malloc.
    unsafe { libc::free(err.cast()) };
    Some(s)
}

/// A scan page's first size; pages grow when one entry is larger.
const SCAN_BYTES: usize = 1 << 20;

/// A Go engine's store in this process.
pub struct InProcStore {
    go: &'static GoLib,
    /// The Go side's handle; 0 once closed.
    handle: usize,
    engine: GoEngine,
    path: PathBuf,
    /// Encoded batches' buffers, reused: a batch crosses as one buffer.
    bufs: Mutex<Vec<Vec<u8>>>,
}

impl InProcStore {
    /// Opens the store in `dir` (its `db` directory).
    pub(crate) fn open(dir: &Path, engine: GoEngine, config_json: &str) -> Result<Self> {
        let db = dir.join("db");
        let name = engine.name();
        let go = lib().map_err(|why| Error::Config {
            engine: name,
            message: format!("the Go engines are unavailable: {why}"),
        })?;
        let db_bytes = db.as_os_str().as_encoded_bytes();
        let mut handle = 0usize;
        let mut try_open = || {
            // SAFETY: every pointer is valid for its length during the
            // call; the Go side copies what it keeps.
            taken(unsafe {
                (go.open)(
                    name.as_ptr().cast(),
                    name.len(),
                    db_bytes.as_ptr().cast(),
                    db_bytes.len(),
                    config_json.as_ptr().cast(),
                    config_json.len(),
                    &mut handle,
                )
            })
        };
        let mut err = try_open();
        // Badger, goleveldb and bbolt lock their directory with flock. A
        // child this process forks (a sidecar, a tool) holds a copy of the
        // lock's file until it execs, so a store closed a moment ago can
        // look locked for that moment: a reopen right after a close (the
        // conformance suite's, a run's next phase) waits up to a second
        // for it before calling the store locked.
        for _ in 0..LOCK_RETRIES {
            match &err {
                Some(e) if e.contains(LOCK_BUSY) => {
                    std::thread::sleep(std::time::Duration::from_millis(25));
                    err = try_open();
                }
                _ => break,
            }
        }
        if let Some(e) = err {
            return Err(Error::engine(
                name,
                Op::Open,
                dir,
                format!("open {}: {e}", db.display()),
            ));
        }
        Ok(Self {
            go,
            handle,
            engine,
            path: dir.to_path_buf(),
            bufs: Mutex::new(Vec::new()),
        })
    }

    fn check(&self, op: Op, err: *mut c_char) -> Result<()> {
        match taken(err) {
            None => Ok(()),
            Some(e) => Err(self.fail(op, e)),
        }
    }

    /// The engine's error, as a full disk when it says so (ENOSPC), so the
    /// harness reports it as it does for every engine.
    fn fail(&self, op: Op, message: String) -> Error {
        if message.contains("no space left on device") {
            return Error::Full {
                engine: self.engine.name(),
                op,
                path: self.path.clone(),
                setting: "the filesystem's free space",
                message,
            };
        }
        Error::engine(self.engine.name(), op, &self.path, message)
    }

    fn garbled(&self) -> Error {
        Error::engine(
            self.engine.name(),
            Op::Iterate,
            &self.path,
            "a garbled scan page",
        )
    }

    /// One page of at most `limit` entries from `from` into `page`:
    /// whether more follow.
    fn scan_page(&self, from: &[u8], limit: u32, page: &mut Vec<u8>) -> Result<bool> {
        loop {
            let (mut used, mut count, mut more) = (0usize, 0usize, 0 as c_int);
            page.clear();
            // SAFETY: `from` is valid for its length, `page` for its
            // capacity; the Go side writes at most that much.
            let err = unsafe {
                (self.go.scan)(
                    self.handle,
                    from.as_ptr().cast(),
                    from.len(),
                    limit as usize,
                    page.as_mut_ptr().cast(),
                    page.capacity(),
                    &mut used,
                    &mut count,
                    &mut more,
                )
            };
            self.check(Op::Iterate, err)?;
            if count == 0 && used > page.capacity() {
                // One entry larger than the page: again, with room for it.
                page.reserve(used);
                continue;
            }
            // SAFETY: the Go side wrote `used` bytes, within the capacity.
            unsafe { page.set_len(used) };
            return Ok(more != 0);
        }
    }
}

impl KvStore for InProcStore {
    fn engine(&self) -> &'static str {
        self.engine.name()
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        out.clear();
        if out.capacity() == 0 {
            out.reserve(256);
        }
        loop {
            let mut vlen = 0i64;
            // SAFETY: `key` is valid for its length and `out` for its
            // capacity; the Go side writes into `out` only a value that fits.
            let err = unsafe {
                (self.go.get)(
                    self.handle,
                    key.as_ptr().cast(),
                    key.len(),
                    out.as_mut_ptr().cast(),
                    out.capacity(),
                    &mut vlen,
                )
            };
            self.check(Op::Get, err)?;
            let Ok(len) = usize::try_from(vlen) else {
                return Ok(false);
            };
            if len > out.capacity() {
                out.reserve(len);
                continue;
            }
            // SAFETY: the Go side copied `len` bytes, within the capacity.
            unsafe { out.set_len(len) };
            return Ok(true);
        }
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        let batch = wire::native_ranges(self.engine, self, batch)?;
        let mut buf = self
            .bufs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default();
        buf.clear();
        let r = wire::encode_batch(self.engine, &self.path, &batch, &mut buf).and_then(|()| {
            // SAFETY: `buf` is valid for its length during the call; every
            // engine copies what it keeps before its commit returns.
            let err = unsafe { (self.go.write)(self.handle, buf.as_ptr().cast(), buf.len()) };
            self.check(Op::Write, err)
        });
        self.bufs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(buf);
        r
    }

    fn scan(&self, start: &[u8], visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        let mut from = start.to_vec();
        let mut page = Vec::with_capacity(SCAN_BYTES);
        let mut limit = FIRST_PAGE;
        loop {
            let more = self.scan_page(&from, limit, &mut page)?;
            limit = wire::next_page(limit);
            match wire::visit_page(&page, visit, || self.garbled())? {
                Some(Some(k)) if more => {
                    // The next page starts just after the last key.
                    from.clear();
                    from.extend_from_slice(k);
                    from.push(0);
                }
                _ => return Ok(()),
            }
        }
    }

    fn flush(&self) -> Result<()> {
        // SAFETY: a live handle.
        let err = unsafe { (self.go.flush)(self.handle) };
        self.check(Op::Flush, err)
    }

    fn compact(&self) -> Result<()> {
        if !self.capabilities().manual_compaction {
            return Err(Error::Unsupported {
                engine: self.engine.name(),
                op: Op::Compact,
            });
        }
        // SAFETY: a live handle.
        let err = unsafe { (self.go.compact)(self.handle) };
        self.check(Op::Compact, err)
    }

    fn stats(&self) -> Result<EngineStats> {
        let mut buf: Vec<u8> = Vec::with_capacity(4096);
        loop {
            let mut len = 0usize;
            // SAFETY: `buf` is valid for its capacity; the Go side writes
            // the JSON only when it fits.
            let err = unsafe {
                (self.go.stats)(
                    self.handle,
                    buf.as_mut_ptr().cast(),
                    buf.capacity(),
                    &mut len,
                )
            };
            self.check(Op::Stats, err)?;
            if len > buf.capacity() {
                buf.reserve(len);
                continue;
            }
            // SAFETY: the Go side wrote `len` bytes, within the capacity.
            unsafe { buf.set_len(len) };
            return serde_json::from_slice(&buf)
                .map_err(|e| self.fail(Op::Stats, format!("the engine's stats: {e}")));
        }
    }

    fn capabilities(&self) -> Capabilities {
        wire::capabilities(self.engine)
    }

    fn close(mut self: Box<Self>) -> Result<()> {
        let h = std::mem::take(&mut self.handle);
        // SAFETY: a live handle, freed by the call.
        let err = unsafe { (self.go.close)(h) };
        self.check(Op::Close, err)
    }
}

impl Drop for InProcStore {
    /// A store dropped without a close is closed, as the engines linked
    /// from C and Rust are, so its directory can be opened again.
    fn drop(&mut self) {
        if self.handle != 0 {
            // SAFETY: a live handle, freed by the call.
            let _ = taken(unsafe { (self.go.close)(self.handle) });
        }
    }
}

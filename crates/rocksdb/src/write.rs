//! A commit through RocksDB's C API with a WriteBatch each thread clears
//! and reuses, as db_bench's writers do. The rocksdb crate's `write_opt`
//! takes its WriteBatch by value, so each commit built a new one (170
//! instructions a put in its constructor under callgrind, and an
//! allocation freed after it) that db_bench does not spend, which a
//! comparison with db_bench counted against the harness.

use std::cell::RefCell;
use std::ffi::{c_char, c_int};
use std::path::Path;

use ledgerbench_core::{Batch, BatchOp, Error, Op, Result};
use rocksdb::{AsRawPtr, DB};

use crate::ENGINE;

/// A batch this large is not kept for the thread's next commit: clearing
/// keeps a batch's buffer, and a thread that once committed a 100 MB
/// ledger would hold 100 MB for the rest of the run.
const KEEP_BYTES: usize = 1 << 20;

/// Write options RocksDB's C API takes, built once a store from its
/// config's durability ([`crate::RocksConfig::wal`], as the crate's are).
pub(crate) struct RawWriteOptions(*mut librocksdb_sys::rocksdb_writeoptions_t);

// SAFETY: RocksDB only reads its WriteOptions during a write, so one may
// serve writes on many threads at once (the rocksdb crate's WriteOptions
// is Send and Sync likewise); nothing here changes them after `new`.
unsafe impl Send for RawWriteOptions {}
// SAFETY: as above.
unsafe impl Sync for RawWriteOptions {}

impl RawWriteOptions {
    /// Options that sync the WAL at each commit when `sync`, and write no
    /// WAL when `no_wal`, as [`crate::RocksConfig::wal`] gives them.
    pub(crate) fn new((sync, no_wal): (bool, bool)) -> Self {
        // SAFETY: creates an object this value owns and frees once, and
        // sets two of its fields.
        unsafe {
            let o = librocksdb_sys::rocksdb_writeoptions_create();
            librocksdb_sys::rocksdb_writeoptions_set_sync(o, u8::from(sync));
            librocksdb_sys::rocksdb_writeoptions_disable_WAL(o, c_int::from(no_wal));
            Self(o)
        }
    }
}

impl Drop for RawWriteOptions {
    fn drop(&mut self) {
        // SAFETY: created by `new`, freed here once.
        unsafe { librocksdb_sys::rocksdb_writeoptions_destroy(self.0) }
    }
}

/// A thread's WriteBatch, freed with the thread.
struct RawBatch(*mut librocksdb_sys::rocksdb_writebatch_t);

impl Drop for RawBatch {
    fn drop(&mut self) {
        // SAFETY: created in `write`, freed here once.
        unsafe { librocksdb_sys::rocksdb_writebatch_destroy(self.0) }
    }
}

thread_local! {
    /// This thread's batch: one for every store it writes, each commit
    /// clearing what the last left.
    static BATCH: RefCell<Option<RawBatch>> = const { RefCell::new(None) };
}

fn ptr(b: &[u8]) -> *const c_char {
    b.as_ptr().cast()
}

/// Commits `batch` to `db` (the store at `path`) in one WriteBatch (puts,
/// deletes, and a range delete as one tombstone; an inverted range, which
/// RocksDB refuses and which deletes nothing, left out).
pub(crate) fn write((db, path): (&DB, &Path), wo: &RawWriteOptions, batch: &Batch) -> Result<()> {
    BATCH.with(|cell| {
        // Nothing below calls back into Rust, so the cell is never borrowed twice.
        let mut slot = cell.borrow_mut();
        let wb = slot
            // SAFETY: creates a batch the slot owns.
            .get_or_insert_with(|| RawBatch(unsafe { librocksdb_sys::rocksdb_writebatch_create() }))
            .0;
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: `wb` is this thread's live batch; every key and value is
        // a slice alive for its call, which copies it; the database and
        // options are alive for the write.
        unsafe {
            librocksdb_sys::rocksdb_writebatch_clear(wb);
            for op in batch.iter() {
                match op {
                    BatchOp::Put(k, v) => {
                        librocksdb_sys::rocksdb_writebatch_put(wb, ptr(k), k.len(), ptr(v), v.len())
                    }
                    BatchOp::Delete(k) => {
                        librocksdb_sys::rocksdb_writebatch_delete(wb, ptr(k), k.len())
                    }
                    BatchOp::DeleteRange(s, e) if s < e => {
                        librocksdb_sys::rocksdb_writebatch_delete_range(
                            wb,
                            ptr(s),
                            s.len(),
                            ptr(e),
                            e.len(),
                        )
                    }
                    BatchOp::DeleteRange(..) => {}
                }
            }
            librocksdb_sys::rocksdb_write(db.as_raw_ptr(), wo.0, wb, &mut err);
        }
        // The batch's own bytes say its size, with no call into RocksDB a
        // commit (RocksDB's adds a few bytes of framing an operation).
        if batch.data().len() > KEEP_BYTES {
            *slot = None;
        }
        // SAFETY: `err` is null or the string RocksDB left.
        match unsafe { crate::trace::take(err) } {
            Some(e) => Err(Error::engine(ENGINE, Op::Write, path, e)),
            None => Ok(()),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocksdb::Options;

    #[test]
    fn a_reused_batch_commits_each_batch_and_nothing_of_the_last() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut opts = Options::default();
        opts.create_if_missing(true);
        let db = DB::open(&opts, dir.path()).expect("open");
        let wo = RawWriteOptions::new((false, false));
        let mut b = Batch::new();
        for k in [&b"a"[..], b"b", b"c", b"d"] {
            b.put(k, b"1");
        }
        write((&db, dir.path()), &wo, &b).expect("first");
        // The second batch alone: had the first stayed in the thread's
        // batch, `a` would come back.
        b.clear();
        b.delete(b"a");
        b.delete_range(b"b", b"d");
        b.delete_range(b"z", b"y");
        write((&db, dir.path()), &wo, &b).expect("second");
        let left: Vec<_> = ["a", "b", "c", "d"]
            .iter()
            .filter(|k| db.get(k).expect("get").is_some())
            .collect();
        assert_eq!(left, [&"d"]);
        // A batch past the size kept is committed whole, and the next
        // thread-local batch starts empty.
        b.clear();
        let big = vec![7u8; KEEP_BYTES + 1];
        b.put(b"big", &big);
        write((&db, dir.path()), &wo, &b).expect("big");
        BATCH.with(|c| assert!(c.borrow().is_none(), "a large batch is not kept"));
        assert_eq!(db.get(b"big").expect("get").as_deref(), Some(&big[..]));
        b.clear();
        b.put(b"e", b"2");
        write((&db, dir.path()), &wo, &b).expect("after");
        assert_eq!(db.get(b"a").expect("get"), None);
        assert_eq!(db.get(b"e").expect("get").as_deref(), Some(&b"2"[..]));
    }

    #[test]
    fn the_options_say_what_the_durability_asks() {
        for (sync, off) in [(false, false), (true, false), (true, true), (false, true)] {
            let cfg = crate::RocksConfig {
                sync_wal: sync,
                disable_wal: off,
                ..Default::default()
            };
            let o = RawWriteOptions::new(cfg.wal());
            // SAFETY: reads two fields of a live object.
            let (s, w) = unsafe {
                (
                    librocksdb_sys::rocksdb_writeoptions_get_sync(o.0),
                    librocksdb_sys::rocksdb_writeoptions_get_disable_WAL(o.0),
                )
            };
            assert_eq!(
                (s != 0, w != 0),
                (sync && !off, off),
                "sync {sync}, WAL off {off}"
            );
        }
    }
}

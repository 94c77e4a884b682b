//! A GET into the caller's buffer through RocksDB's C API
//! (`rocksdb_get_into_buffer`): RocksDB reads into a PinnableSlice on its
//! stack and copies the value out once, as db_bench's GET reads into one it
//! reuses. The rocksdb crate's `get_pinned` allocates a handle on the C++
//! heap for every GET and frees it after: a malloc and a free an operation
//! that db_bench does not make, which a comparison with db_bench counted
//! against the harness.

use std::ffi::c_char;
use std::path::Path;

use ledgerbench_core::{Error, Op, Result};
use rocksdb::{AsColumnFamilyRef, AsRawPtr, ColumnFamily, DB};

use crate::ENGINE;

/// Read options RocksDB's C API takes: the defaults, built once a store
/// (as `rocksdb::ReadOptions::default()`, which the crate does not hand
/// out as a pointer).
pub(crate) struct RawReadOptions(*mut librocksdb_sys::rocksdb_readoptions_t);

// SAFETY: RocksDB reads its ReadOptions and never changes them during a
// read, so one may serve reads on many threads at once (the rocksdb crate's
// ReadOptions is Send and Sync likewise); nothing here changes them.
unsafe impl Send for RawReadOptions {}
// SAFETY: as above.
unsafe impl Sync for RawReadOptions {}

impl RawReadOptions {
    /// RocksDB's default read options.
    pub(crate) fn new() -> Self {
        // SAFETY: creates an object this value owns and frees once.
        Self(unsafe { librocksdb_sys::rocksdb_readoptions_create() })
    }
}

impl Drop for RawReadOptions {
    fn drop(&mut self) {
        // SAFETY: created by `new`, freed here once.
        unsafe { librocksdb_sys::rocksdb_readoptions_destroy(self.0) }
    }
}

/// Reads `key` of `db` (the store at `path`; in family `cf`, or the
/// default) into `out`, cleared first; whether it was there. A value
/// longer than `out` can hold is read again once `out` has room for it
/// (RocksDB copies only a value that fits): after the first such GET a
/// reused buffer fits.
pub(crate) fn get_into(
    (db, path): (&DB, &Path),
    cf: Option<&ColumnFamily>,
    ro: &RawReadOptions,
    key: &[u8],
    out: &mut Vec<u8>,
) -> Result<bool> {
    out.clear();
    // Bounded by how often another writer grows the value between two
    // reads of it; each pass makes room for the size the last one saw.
    loop {
        let (mut len, mut found) = (0usize, 0u8);
        let mut err: *mut c_char = std::ptr::null_mut();
        let (buf, cap) = (out.as_mut_ptr().cast::<c_char>(), out.capacity());
        let (k, klen) = (key.as_ptr().cast::<c_char>(), key.len());
        // SAFETY: the database, family and options are alive for the call;
        // RocksDB writes at most `cap` bytes into `buf`, `out`'s spare
        // capacity, and sets `len`, `found` and `err`.
        let fit = unsafe {
            match cf {
                Some(cf) => librocksdb_sys::rocksdb_get_into_buffer_cf(
                    db.as_raw_ptr(),
                    ro.0,
                    cf.inner(),
                    k,
                    klen,
                    buf,
                    cap,
                    &mut len,
                    &mut found,
                    &mut err,
                ),
                None => librocksdb_sys::rocksdb_get_into_buffer(
                    db.as_raw_ptr(),
                    ro.0,
                    k,
                    klen,
                    buf,
                    cap,
                    &mut len,
                    &mut found,
                    &mut err,
                ),
            }
        };
        // SAFETY: `err` is null or the string RocksDB left.
        if let Some(e) = unsafe { crate::trace::take(err) } {
            return Err(Error::engine(ENGINE, Op::Get, path, e));
        }
        if found == 0 {
            return Ok(false);
        }
        if fit != 0 {
            // SAFETY: RocksDB copied `len` bytes, at most `cap`, into `out`.
            unsafe { out.set_len(len) };
            return Ok(true);
        }
        out.reserve(len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocksdb::Options;

    #[test]
    fn a_get_fills_the_callers_buffer_whatever_its_room() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        let db = DB::open_cf(&opts, dir.path(), ["other"]).expect("open");
        let big: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
        db.put(b"big", &big).expect("put");
        db.put(b"small", b"tiny").expect("put");
        let cf = db.cf_handle("other").expect("family");
        db.put_cf(cf, b"small", b"in the family").expect("put");
        let ro = RawReadOptions::new();
        let at = (&db, dir.path());
        let get = |cf, key: &[u8], out: &mut Vec<u8>| get_into(at, cf, &ro, key, out).expect("get");
        // No room at all: read again once there is.
        let mut out = Vec::new();
        assert!(get(None, b"big", &mut out));
        assert_eq!(out, big);
        // Room left over from the last: the old bytes go.
        assert!(get(None, b"small", &mut out));
        assert_eq!(out, b"tiny");
        assert!(get(Some(cf), b"small", &mut out));
        assert_eq!(out, b"in the family");
        // Absent: false, and nothing left in the buffer.
        assert!(!get(None, b"none", &mut out));
        assert!(out.is_empty());
        assert!(!get(Some(cf), b"big", &mut out));
    }
}

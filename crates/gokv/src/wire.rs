//! The bytes both bridges share: a batch encoded as one buffer, and a page
//! of scanned entries, as `go/engine.go` reads and writes them.

use std::borrow::Cow;
use std::path::Path;

use ledgerbench_core::{Batch, BatchOp, Capabilities, Error, KvStore, Result, WriterModel};

use crate::GoEngine;

/// Appends `n` as a little-endian u32.
pub(crate) fn put_u32(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u32).to_le_bytes());
}

/// Takes a little-endian u32 off the front of `b`.
pub(crate) fn take_u32(b: &mut &[u8]) -> Option<usize> {
    let (n, rest) = b.split_first_chunk::<4>()?;
    *b = rest;
    Some(u32::from_le_bytes(*n) as usize)
}

/// Takes `n` bytes off the front of `b`.
pub(crate) fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    let (x, rest) = b.split_at_checked(n)?;
    *b = rest;
    Some(x)
}

/// The batch as the engine takes it: range deletes kept for Pebble,
/// expanded to a delete per key for the others (null keeps nothing).
pub(crate) fn native_ranges<'a>(
    engine: GoEngine,
    store: &dyn KvStore,
    batch: &'a Batch,
) -> Result<Cow<'a, Batch>> {
    match engine.range_delete() {
        Some(ledgerbench_core::RangeDelete::Native) => Ok(Cow::Borrowed(batch)),
        _ => ledgerbench_core::ranges::expand(store, batch),
    }
}

/// Appends `batch` to `out` as `decodeWrite` reads it: u32 count, then per
/// op a tag byte (0 put, 1 delete, 2 range delete), the key and for a put
/// (a range delete) the value (end key), each after its u32 length. A key
/// the engine cannot hold is refused before anything is sent; an empty or
/// inverted range is left out (it deletes nothing).
pub(crate) fn encode_batch(
    engine: GoEngine,
    path: &Path,
    batch: &Batch,
    out: &mut Vec<u8>,
) -> Result<()> {
    // No limit below the encoding's u32 lengths.
    let max = engine.max_key().unwrap_or(u32::MAX as usize);
    let count_at = out.len();
    put_u32(out, 0);
    let mut count = 0usize;
    for o in batch.iter() {
        if let Some(e) = Error::key_too_long(engine.name(), path, o.key(), max) {
            return Err(e);
        }
        let (tag, k, v) = match o {
            BatchOp::Put(k, v) => (0, k, Some(v)),
            BatchOp::Delete(k) => (1, k, None),
            BatchOp::DeleteRange(k, e) if k >= e => continue,
            BatchOp::DeleteRange(k, e) => (2, k, Some(e)),
        };
        out.push(tag);
        put_u32(out, k.len());
        out.extend_from_slice(k);
        if let Some(v) = v {
            put_u32(out, v.len());
            out.extend_from_slice(v);
        }
        count += 1;
    }
    out[count_at..count_at + 4].copy_from_slice(&(count as u32).to_le_bytes());
    Ok(())
}

/// Visits the entries of a scanned page (u32 key length, key, u32 value
/// length, value each); the key last visited, or `None` when `visit`
/// asked to stop. Garbled bytes are an error from `garbled`.
pub(crate) fn visit_page<'a>(
    mut page: &'a [u8],
    visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    garbled: impl Fn() -> Error,
) -> Result<Option<Option<&'a [u8]>>> {
    let mut last = None;
    while !page.is_empty() {
        let entry = (|| {
            let kl = take_u32(&mut page)?;
            let k = take(&mut page, kl)?;
            let vl = take_u32(&mut page)?;
            Some((k, take(&mut page, vl)?))
        })();
        let (k, v) = entry.ok_or_else(&garbled)?;
        if !visit(k, v) {
            return Ok(None);
        }
        last = Some(k);
    }
    Ok(Some(last))
}

/// What a Go engine can do, whichever bridge reaches it.
pub(crate) fn capabilities(engine: GoEngine) -> Capabilities {
    Capabilities {
        ordered_iteration: engine != GoEngine::Null,
        // bbolt has no in-place compaction; null has nothing to compact.
        manual_compaction: !matches!(engine, GoEngine::Bbolt | GoEngine::Null),
        evicts_oldest: false,
        persistent: engine != GoEngine::Null,
        discards_writes: engine == GoEngine::Null,
        // bbolt runs one write transaction at a time; the LSM trees
        // queue concurrent commits themselves (Pebble's commit
        // pipeline, goleveldb's write merge, Badger's write channel).
        writers: Some(if engine == GoEngine::Bbolt {
            WriterModel::Single
        } else {
            WriterModel::Concurrent
        }),
        range_delete: engine.range_delete(),
    }
}

/// Entries of a scan's first page: a seek that reads one entry (db_bench's
/// seekrandom) must not make the engine copy 256. Each next page is twice
/// the one before, up to [`SCAN_PAGE`].
pub(crate) const FIRST_PAGE: u32 = 4;
/// The most entries fetched per scan request.
const SCAN_PAGE: u32 = 256;

/// The page after one of `limit` entries: twice as many, at most [`SCAN_PAGE`].
pub(crate) fn next_page(limit: u32) -> u32 {
    (limit * 2).min(SCAN_PAGE)
}

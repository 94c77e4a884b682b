//! What a reopened store holds, checked batch by batch.

use ledgerbench_core::KvStore;
use ledgerbench_rng::{Rng, stream};

use std::collections::BTreeMap;

use super::shape::{Fate, Held, StoreShape, expected, key, overwrite, value};
pub use ledgerbench_results::crash::Recovered;

/// A batch recovered in part (some of its writes there, not all).
const TORN: u8 = 1;
/// A batch's writes found beyond the recovered prefix.
const LATE: u8 = 2;

/// Checks store `st` (shape `store` of the test, index `idx`): every batch
/// from `window` up to `upto` (exclusive), and `samples` random batches
/// below `window` (all of them when there are no more), so that a deep loss
/// or corruption is caught without reading the whole store every cycle.
///
/// The keys no later batch touches say which batches are whole, and the
/// first that is not ends the recovered prefix (found exactly: when it is a
/// sampled batch, the batches between it and the sample below are read
/// too). In a mixed store every overwritten, deleted and range-deleted key
/// is then checked against what that prefix leaves under it, and a
/// mismatch is charged to the batch whose write is missing or extra.
pub fn verify(
    seed: u64,
    store: &StoreShape,
    idx: usize,
    st: &dyn KvStore,
    window: u64,
    upto: u64,
    samples: u64,
) -> Recovered {
    let mut batches = chosen(seed, window.min(upto), upto, samples);
    let mut out = Recovered::default();
    let mut flags = BTreeMap::new();
    let mut gap = kept_keys(seed, store, idx, st, &batches, &mut out, &mut flags);
    // A gap at a sampled batch: the prefix ends somewhere from the sample
    // below it (whole) up to it, so read the batches between; every one
    // after the true gap then reads out of order on its own.
    if let Some(g) = gap.filter(|&g| g > 0 && batches.binary_search(&(g - 1)).is_err()) {
        let from = batches.iter().rev().find(|&&b| b < g).map_or(0, |&b| b + 1);
        let between: Vec<u64> = (from..g).collect();
        gap = kept_keys(seed, store, idx, st, &between, &mut out, &mut flags).or(gap);
        batches.extend(between);
        batches.sort_unstable();
    }
    out.recovered = gap.unwrap_or(upto);
    let r = out.recovered;
    // A write of batch `w` (at or past the prefix) that is there: the gap
    // batch partly there, or a batch beyond it.
    let extra = |w: u64| if w == r { TORN } else { LATE };
    let mut want = Vec::new();
    let touched: Vec<(u32, Fate)> = fates(store).filter(|&(_, f)| f != Fate::Kept).collect();
    let js: Vec<u32> = touched.iter().map(|&(j, _)| j).collect();
    for &b in &batches {
        let reads = read_batch(seed, store, idx, st, b, &js, &mut out);
        for (&(j, fate), got) in touched.iter().zip(reads) {
            let Some(got) = got else {
                continue;
            };
            let held = if let Some(got) = got {
                value(seed, store, idx, b, j, &mut want);
                if got == want {
                    Held::Original
                } else if fate == Fate::Overwritten && {
                    overwrite(seed, store, idx, b, j, &mut want);
                    got == want
                } {
                    Held::Overwrite
                } else {
                    out.corrupt += 1;
                    continue;
                }
            } else {
                Held::Absent
            };
            if held == expected(store, b, j, r) {
                continue;
            }
            let lag = fate.lag();
            let (w, what) = match held {
                // Batch b's put, where the prefix ends at or before b.
                Held::Original if r <= b => (b, extra(b)),
                // The prefix holds the batch whose write was due over it.
                Held::Original => (b + lag, TORN),
                Held::Overwrite => (b + 1, extra(b + 1)),
                // Nothing later removes an overwritten key: its own put is missing.
                Held::Absent if fate == Fate::Overwritten => (b, TORN),
                // Removed by a batch the prefix does not hold.
                Held::Absent => (b + lag, extra(b + lag)),
            };
            *flags.entry(w).or_default() |= what;
        }
    }
    out.torn = flags.values().filter(|&&f| f & TORN != 0).count() as u64;
    out.out_of_order = flags.values().filter(|&&f| f & LATE != 0).count() as u64;
    out
}

/// Reads the kept keys (those no later batch touches) of `batches`: flags
/// batches partly there as torn and whole ones after the first gap as out
/// of order, counts wrong values, and returns the first batch not whole.
fn kept_keys(
    seed: u64,
    store: &StoreShape,
    idx: usize,
    st: &dyn KvStore,
    batches: &[u64],
    out: &mut Recovered,
    flags: &mut BTreeMap<u64, u8>,
) -> Option<u64> {
    let mut want = Vec::new();
    let kept: Vec<u32> = fates(store)
        .filter(|&(_, f)| f == Fate::Kept)
        .map(|(j, _)| j)
        .collect();
    let mut first_gap: Option<u64> = None;
    for &b in batches {
        let (mut whole, mut present) = (0u32, 0u32);
        for (&j, got) in kept
            .iter()
            .zip(read_batch(seed, store, idx, st, b, &kept, out))
        {
            let Some(Some(got)) = got else {
                continue;
            };
            present += 1;
            value(seed, store, idx, b, j, &mut want);
            if got == want {
                whole += 1;
            } else {
                out.corrupt += 1;
            }
        }
        out.checked += 1;
        if present > 0 && (present as usize) < kept.len() {
            *flags.entry(b).or_default() |= TORN;
        }
        if whole as usize == kept.len() {
            if first_gap.is_some() {
                *flags.entry(b).or_default() |= LATE;
            }
        } else if first_gap.is_none() {
            first_gap = Some(b);
        }
    }
    first_gap
}

/// Every key index of a batch with its fate.
fn fates(store: &StoreShape) -> impl Iterator<Item = (u32, Fate)> + '_ {
    (0..store.keys_per_batch).map(|j| (j, store.fate(j)))
}

/// The batches to check: `samples` random ones below `window` (all when
/// there are no more) and every one from `window` to `upto`.
fn chosen(seed: u64, window: u64, upto: u64, samples: u64) -> Vec<u64> {
    let mut batches: Vec<u64> = if window <= samples {
        (0..window).collect()
    } else {
        let mut r = Rng::new(stream(seed, upto, window));
        let mut v: Vec<u64> = (0..samples).map(|_| r.below(window)).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    batches.extend(window..upto);
    batches
}

/// Reads keys `js` of batch `b` in one request: per key its value (`None`
/// when absent), or nothing when the read failed. When the request fails,
/// each key is read alone, so every failed read is counted as corrupt (its
/// first error kept) and the others still answer.
fn read_batch(
    seed: u64,
    store: &StoreShape,
    idx: usize,
    st: &dyn KvStore,
    b: u64,
    js: &[u32],
    out: &mut Recovered,
) -> Vec<Option<Option<Vec<u8>>>> {
    if js.is_empty() {
        return Vec::new();
    }
    let keys: Vec<Vec<u8>> = js
        .iter()
        .map(|&j| {
            let mut k = Vec::new();
            key(seed, store, idx, b, j, &mut k);
            k
        })
        .collect();
    let mut got = Vec::with_capacity(keys.len());
    let failed = match st.get_many(&keys, &mut got) {
        Ok(()) if got.len() == keys.len() => return got.into_iter().map(Some).collect(),
        Ok(()) => format!("{} answers to {} reads", got.len(), keys.len()),
        Err(e) => e.to_string(),
    };
    let before = out.corrupt;
    let each = keys
        .iter()
        .map(|k| match st.get(k) {
            Ok(v) => Some(v),
            Err(e) => {
                out.corrupt += 1;
                out.error.get_or_insert_with(|| e.to_string());
                None
            }
        })
        .collect();
    // Every key read alone: the request's failure still counts, once.
    if out.corrupt == before {
        out.corrupt += 1;
        out.error.get_or_insert(failed);
    }
    each
}

#[cfg(test)]
mod tests {
    use ledgerbench_core::{Batch, KvBackend, KvStore};
    use ledgerbench_mem::{Mem, MemConfig};

    use super::*;
    use crate::crash::shape::{CrashShape, batch};

    fn shape() -> StoreShape {
        CrashShape::generic().stores.remove(0)
    }

    fn store_with(batches: &[u64], torn: Option<u64>) -> (tempfile::TempDir, Box<dyn KvStore>) {
        let dir = tempfile::tempdir().expect("tempdir");
        let st = Mem::open_boxed(&dir.path().join("s"), &MemConfig::default()).expect("open");
        let shape = shape();
        let mut b = Batch::new();
        for &n in batches {
            batch(7, &shape, 0, n, &mut b);
            st.write(&b).expect("write");
        }
        if let Some(n) = torn {
            let (mut k, mut v) = (Vec::new(), Vec::new());
            let mut half = Batch::new();
            for j in 0..shape.keys_per_batch / 2 {
                key(7, &shape, 0, n, j, &mut k);
                value(7, &shape, 0, n, j, &mut v);
                half.put(&k, &v);
            }
            st.write(&half).expect("write");
        }
        (dir, st)
    }

    /// Puts key `j` of `batch` back to its original value.
    fn restore(st: &dyn KvStore, batch: u64, j: u32) {
        let s = shape();
        let (mut k, mut v) = (Vec::new(), Vec::new());
        key(7, &s, 0, batch, j, &mut k);
        value(7, &s, 0, batch, j, &mut v);
        let mut b = Batch::new();
        b.put(&k, &v);
        st.write(&b).expect("write");
    }

    #[test]
    fn a_clean_prefix_is_recovered_exactly() {
        let (_d, st) = store_with(&[0, 1, 2, 3, 4], None);
        let r = verify(7, &shape(), 0, &*st, 2, 7, 100);
        assert_eq!(r.recovered, 5);
        assert_eq!((r.torn, r.corrupt, r.out_of_order), (0, 0, 0), "{r:?}");
        assert_eq!(r.checked, 7);
    }

    #[test]
    fn torn_gapped_and_wrong_batches_are_each_caught() {
        let s = shape();
        let (_d, st) = store_with(&[0, 1, 3], Some(2));
        let r = verify(7, &s, 0, &*st, 0, 5, 0);
        assert_eq!(r.recovered, 2, "{r:?}");
        assert_eq!(r.torn, 1, "batch 2 half there");
        // Batch 3 whole after the torn 2: its writes under earlier keys
        // (batch 0's range family and batch 1's deleted key gone, batch 2's
        // key overwritten) are charged to it, not to those batches.
        assert_eq!(r.out_of_order, 1, "{r:?}");
        // A value of another seed reads as corrupt, not as present.
        let r = verify(8, &s, 0, &*st, 0, 2, 0);
        assert_eq!(r.recovered, 0);
        assert_eq!(r.corrupt, 0, "other seed: other keys, so absent");
        let mut b = Batch::new();
        let mut k = Vec::new();
        key(7, &s, 0, 0, 0, &mut k);
        b.put(&k, b"wrong");
        st.write(&b).expect("write");
        let r = verify(7, &s, 0, &*st, 0, 2, 0);
        assert_eq!((r.recovered, r.corrupt), (0, 1), "{r:?}");
    }

    #[test]
    fn a_lost_overwrite_delete_or_range_delete_is_a_torn_batch() {
        let s = shape();
        let (_d, st) = store_with(&[0, 1, 2, 3, 4], None);
        // Batch 3's overwrite of key 1 of batch 2 undone.
        restore(&*st, 2, 1);
        let r = verify(7, &s, 0, &*st, 0, 6, 0);
        assert_eq!((r.recovered, r.torn, r.out_of_order), (5, 1, 0), "{r:?}");
        // Batch 3's delete of key 2 of batch 1, and batch 4's range delete
        // of batch 1's family (key 3).
        restore(&*st, 1, 2);
        restore(&*st, 1, 3);
        let r = verify(7, &s, 0, &*st, 0, 6, 0);
        assert_eq!((r.recovered, r.torn, r.out_of_order), (5, 2, 0), "{r:?}");
        assert_eq!(r.corrupt, 0);
    }

    #[test]
    fn a_later_batchs_overwrite_beyond_the_prefix_is_out_of_order() {
        let s = shape();
        let (_d, st) = store_with(&[0, 1, 2], None);
        // Batch 3's overwrite of key 1 of batch 2 alone: batch 3, the
        // first not whole, is there in part.
        let (mut k, mut v) = (Vec::new(), Vec::new());
        key(7, &s, 0, 2, 1, &mut k);
        overwrite(7, &s, 0, 2, 1, &mut v);
        let mut b = Batch::new();
        b.put(&k, &v);
        st.write(&b).expect("write");
        let r = verify(7, &s, 0, &*st, 0, 5, 0);
        assert_eq!((r.recovered, r.torn, r.out_of_order), (3, 1, 0), "{r:?}");
        // Batch 4's too: a write of a batch beyond the one partly there.
        key(7, &s, 0, 3, 1, &mut k);
        overwrite(7, &s, 0, 3, 1, &mut v);
        b.clear();
        b.put(&k, &v);
        st.write(&b).expect("write");
        let r = verify(7, &s, 0, &*st, 0, 6, 0);
        assert_eq!((r.recovered, r.torn, r.out_of_order), (3, 1, 1), "{r:?}");
    }

    #[test]
    fn a_gap_among_sampled_batches_is_found_exactly() {
        let s = shape();
        let written: Vec<u64> = (0..17).collect();
        let (_d, st) = store_with(&written, None);
        // Below the window only 3 samples: the prefix is still found where
        // it ends, and what it leaves under every key matches.
        let r = verify(7, &s, 0, &*st, 36, 40, 3);
        assert_eq!(r.recovered, 17, "{r:?}");
        assert_eq!((r.torn, r.corrupt, r.out_of_order), (0, 0, 0), "{r:?}");
    }

    /// A store whose many-key reads fail and whose single reads work.
    struct NoMany(Box<dyn KvStore>);

    impl KvStore for NoMany {
        fn engine(&self) -> &'static str {
            "no-many"
        }
        fn path(&self) -> &std::path::Path {
            self.0.path()
        }
        fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> ledgerbench_core::Result<bool> {
            self.0.get_into(key, out)
        }
        fn get_many(
            &self,
            _: &[Vec<u8>],
            _: &mut Vec<Option<Vec<u8>>>,
        ) -> ledgerbench_core::Result<()> {
            Err(ledgerbench_core::Error::engine(
                "no-many",
                ledgerbench_core::Op::Get,
                self.path(),
                "reply lost",
            ))
        }
        fn write(&self, b: &Batch) -> ledgerbench_core::Result<()> {
            self.0.write(b)
        }
        fn scan(
            &self,
            start: &[u8],
            visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
        ) -> ledgerbench_core::Result<()> {
            self.0.scan(start, visit)
        }
        fn flush(&self) -> ledgerbench_core::Result<()> {
            self.0.flush()
        }
        fn stats(&self) -> ledgerbench_core::Result<ledgerbench_core::EngineStats> {
            self.0.stats()
        }
        fn capabilities(&self) -> ledgerbench_core::Capabilities {
            self.0.capabilities()
        }
        fn close(self: Box<Self>) -> ledgerbench_core::Result<()> {
            self.0.close()
        }
    }

    #[test]
    fn a_failed_many_key_read_falls_back_to_single_reads_and_still_counts() {
        let (_d, st) = store_with(&[0, 1, 2, 3, 4], None);
        let st = NoMany(st);
        let r = verify(7, &shape(), 0, &st, 2, 7, 100);
        // The same prefix, found by reading each key alone...
        assert_eq!(r.recovered, 5, "{r:?}");
        assert_eq!((r.torn, r.out_of_order), (0, 0), "{r:?}");
        // ...and each failed request counted once, with its error kept.
        assert!(r.corrupt > 0, "{r:?}");
        assert!(
            r.error.as_deref().is_some_and(|e| e.contains("reply lost")),
            "{r:?}"
        );
    }
}

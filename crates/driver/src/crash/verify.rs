//! What a reopened store holds, checked batch by batch.

use ledgerbench_core::KvStore;
use ledgerbench_rng::{Rng, stream};

use super::shape::{StoreShape, key, value};
pub use ledgerbench_results::crash::Recovered;

/// Checks store `st` (shape `store` of the test, index `idx`): every batch
/// from `window` up to `upto` (exclusive), and `samples` random batches
/// below `window` (all of them when there are no more), so that a deep loss
/// or corruption is caught without reading the whole store every cycle.
pub fn verify(
    seed: u64,
    store: &StoreShape,
    idx: usize,
    st: &dyn KvStore,
    window: u64,
    upto: u64,
    samples: u64,
) -> Recovered {
    let window = window.min(upto);
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
    let mut out = Recovered {
        recovered: upto,
        ..Recovered::default()
    };
    let (mut k, mut want, mut got) = (Vec::new(), Vec::new(), Vec::new());
    let mut first_gap: Option<u64> = None;
    for &b in &batches {
        let mut whole = 0u32;
        let mut present = 0u32;
        for j in 0..store.keys_per_batch {
            key(seed, store, idx, b, j, &mut k);
            match st.get_into(&k, &mut got) {
                Ok(true) => {
                    present += 1;
                    value(seed, store, idx, b, j, &mut want);
                    if got == want {
                        whole += 1;
                    } else {
                        out.corrupt += 1;
                    }
                }
                Ok(false) => {}
                Err(e) => {
                    out.corrupt += 1;
                    out.error.get_or_insert_with(|| e.to_string());
                }
            }
        }
        out.checked += 1;
        if present > 0 && present < store.keys_per_batch {
            out.torn += 1;
        }
        if whole == store.keys_per_batch {
            if first_gap.is_some() {
                out.out_of_order += 1;
            }
        } else if first_gap.is_none() {
            first_gap = Some(b);
        }
    }
    if let Some(g) = first_gap {
        out.recovered = g;
    }
    out
}

#[cfg(test)]
mod tests {
    use ledgerbench_core::{Batch, KvBackend, KvStore};
    use ledgerbench_mem::{Mem, MemConfig};

    use super::*;
    use crate::crash::shape::{CrashShape, batch};

    fn store_with(batches: &[u64], torn: Option<u64>) -> (tempfile::TempDir, Box<dyn KvStore>) {
        let dir = tempfile::tempdir().expect("tempdir");
        let st = Mem::open_boxed(&dir.path().join("s"), &MemConfig::default()).expect("open");
        let shape = &CrashShape::generic().stores[0];
        let mut b = Batch::new();
        for &n in batches {
            batch(7, shape, 0, n, &mut b);
            st.write(&b).expect("write");
        }
        if let Some(n) = torn {
            let (mut k, mut v) = (Vec::new(), Vec::new());
            let mut half = Batch::new();
            for j in 0..shape.keys_per_batch / 2 {
                key(7, shape, 0, n, j, &mut k);
                value(7, shape, 0, n, j, &mut v);
                half.put(&k, &v);
            }
            st.write(&half).expect("write");
        }
        (dir, st)
    }

    #[test]
    fn a_clean_prefix_is_recovered_exactly() {
        let shape = &CrashShape::generic().stores[0];
        let (_d, st) = store_with(&[0, 1, 2, 3, 4], None);
        let r = verify(7, shape, 0, &*st, 2, 7, 100);
        assert_eq!(r.recovered, 5);
        assert_eq!((r.torn, r.corrupt, r.out_of_order), (0, 0, 0));
        assert_eq!(r.checked, 7);
    }

    #[test]
    fn torn_gapped_and_wrong_batches_are_each_caught() {
        let shape = &CrashShape::generic().stores[0];
        let (_d, st) = store_with(&[0, 1, 3], Some(2));
        let r = verify(7, shape, 0, &*st, 0, 5, 0);
        assert_eq!(r.recovered, 2, "{r:?}");
        assert_eq!(r.torn, 1);
        assert_eq!(r.out_of_order, 1, "batch 3 after the torn 2");
        // A value of another seed reads as corrupt, not as present.
        let r = verify(8, shape, 0, &*st, 0, 2, 0);
        assert_eq!(r.recovered, 0);
        assert_eq!(r.corrupt, 0, "other seed: other keys, so absent");
        let mut b = Batch::new();
        let mut k = Vec::new();
        key(7, shape, 0, 0, 0, &mut k);
        b.put(&k, b"wrong");
        st.write(&b).expect("write");
        let r = verify(7, shape, 0, &*st, 0, 2, 0);
        assert_eq!((r.recovered, r.corrupt), (0, 1), "{r:?}");
    }
}

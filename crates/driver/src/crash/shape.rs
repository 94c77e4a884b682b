//! What each batch of a crash test writes, regenerated from its position,
//! and what each key holds once a prefix of the batches is committed.

use ledgerbench_core::Batch;
use ledgerbench_rng::{Rng, stream};

pub use ledgerbench_results::crash::{CrashShape, Fate, KeyKind, StoreShape};

/// First byte of every range-family key; other random keys never start
/// with it, so one range delete removes a family and nothing else.
const FAMILY: u8 = 0;

/// The first bytes of batch `batch`'s range family in store `store`: the
/// family is every key from this prefix up to the next batch's.
fn family_prefix(store: usize, batch: u64) -> [u8; 10] {
    let mut p = [0u8; 10];
    p[0] = FAMILY;
    p[1] = store as u8;
    p[2..].copy_from_slice(&batch.to_be_bytes());
    p
}

/// Key `j` of batch `batch` in store `store` (index into the shape).
pub fn key(seed: u64, shape: &StoreShape, store: usize, batch: u64, j: u32, out: &mut Vec<u8>) {
    out.clear();
    match shape.keys {
        KeyKind::Sequence => {
            let n = batch * u64::from(shape.keys_per_batch) + u64::from(j);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        }
        KeyKind::Random32 => {
            let mut r = Rng::new(stream(
                seed ^ 0x006b_6579,
                batch,
                (store as u64) << 32 | u64::from(j),
            ));
            if shape.fate(j) == Fate::RangeDeleted {
                out.extend_from_slice(&family_prefix(store, batch));
                out.extend_from_slice(&j.to_be_bytes());
                let rest = 32 - out.len();
                r.fill(out, rest);
            } else {
                r.fill(out, 32);
                if shape.mixed && out[0] == FAMILY {
                    out[0] = FAMILY + 1;
                }
            }
        }
    }
}

/// Value batch `batch` puts under its key `j` in store `store`.
pub fn value(seed: u64, shape: &StoreShape, store: usize, batch: u64, j: u32, out: &mut Vec<u8>) {
    fill_value(seed ^ 0x0076_616c, shape, store, batch, j, out);
}

/// Value the next batch puts over key `j` of batch `batch` (an
/// [`Fate::Overwritten`] key).
pub fn overwrite(
    seed: u64,
    shape: &StoreShape,
    store: usize,
    batch: u64,
    j: u32,
    out: &mut Vec<u8>,
) {
    fill_value(seed ^ 0x6f76_6572, shape, store, batch, j, out);
}

fn fill_value(seed: u64, shape: &StoreShape, store: usize, batch: u64, j: u32, out: &mut Vec<u8>) {
    out.clear();
    let mut r = Rng::new(stream(seed, batch, (store as u64) << 32 | u64::from(j)));
    r.fill(out, shape.value_bytes as usize);
}

/// The batch `batch` writes into store `store`, built into `out`: its own
/// keys, and in a mixed store the overwrites, deletes and range delete
/// that fall due at it.
pub fn batch(seed: u64, shape: &StoreShape, store: usize, batch: u64, out: &mut Batch) {
    out.clear();
    let (mut k, mut v) = (
        Vec::with_capacity(32),
        Vec::with_capacity(shape.value_bytes as usize),
    );
    for j in 0..shape.keys_per_batch {
        key(seed, shape, store, batch, j, &mut k);
        value(seed, shape, store, batch, j, &mut v);
        out.put(&k, &v);
    }
    if !shape.mixed {
        return;
    }
    for j in 0..shape.keys_per_batch {
        let fate = shape.fate(j);
        // Kept keys are never written again; a range family goes whole, in
        // one range delete below.
        if !matches!(fate, Fate::Overwritten | Fate::Deleted) {
            continue;
        }
        let Some(of) = batch.checked_sub(fate.lag()) else {
            continue;
        };
        key(seed, shape, store, of, j, &mut k);
        if fate == Fate::Overwritten {
            overwrite(seed, shape, store, of, j, &mut v);
            out.put(&k, &v);
        } else {
            out.delete(&k);
        }
    }
    let ranged = (0..shape.keys_per_batch).any(|j| shape.fate(j) == Fate::RangeDeleted);
    if let Some(of) = batch
        .checked_sub(Fate::RangeDeleted.lag())
        .filter(|_| ranged)
    {
        out.delete_range(&family_prefix(store, of), &family_prefix(store, of + 1));
    }
}

/// What a key can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// Nothing.
    Absent,
    /// The value its own batch put.
    Original,
    /// The value the next batch put over it.
    Overwrite,
}

/// What key `j` of batch `batch` holds once batches `0..prefix` are committed
/// and no other.
pub fn expected(shape: &StoreShape, batch: u64, j: u32, prefix: u64) -> Held {
    if prefix <= batch {
        return Held::Absent;
    }
    let fate = shape.fate(j);
    if prefix <= batch + fate.lag() {
        return Held::Original;
    }
    match fate {
        Fate::Kept => Held::Original,
        Fate::Overwritten => Held::Overwrite,
        Fate::Deleted | Fate::RangeDeleted => Held::Absent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mixed() -> StoreShape {
        CrashShape::generic().stores.remove(0)
    }

    #[test]
    fn a_mixed_batch_overwrites_deletes_and_range_deletes_what_fell_due() {
        let s = mixed();
        let mut b = Batch::new();
        batch(1, &s, 0, 0, &mut b);
        assert_eq!(b.len(), 200, "batch 0 only puts");
        assert!(!b.has_range_deletes());
        batch(1, &s, 0, 5, &mut b);
        // 200 puts, 25 overwrites, 25 deletes, one range delete.
        assert_eq!(b.len(), 251);
        assert!(b.has_range_deletes());
        let stellar = CrashShape::stellar();
        batch(1, &stellar.stores[1], 1, 5, &mut b);
        assert_eq!(b.len(), 2580, "stellar batches only put");
    }

    #[test]
    fn range_family_keys_sort_together_and_no_other_key_joins_them() {
        let s = mixed();
        let mut k = Vec::new();
        for b in [0u64, 7, 300] {
            for j in 0..s.keys_per_batch {
                key(9, &s, 0, b, j, &mut k);
                assert_eq!(k.len(), 32);
                let lo = family_prefix(0, b);
                let hi = family_prefix(0, b + 1);
                let inside = k.as_slice() >= lo.as_slice() && k.as_slice() < hi.as_slice();
                assert_eq!(inside, s.fate(j) == Fate::RangeDeleted, "batch {b} key {j}");
                assert_eq!(k[0] == FAMILY, s.fate(j) == Fate::RangeDeleted);
            }
        }
    }

    #[test]
    fn expected_state_follows_the_prefix() {
        let s = mixed();
        // Key 1 of batch 4 is overwritten by batch 5.
        assert_eq!(expected(&s, 4, 1, 4), Held::Absent);
        assert_eq!(expected(&s, 4, 1, 5), Held::Original);
        assert_eq!(expected(&s, 4, 1, 6), Held::Overwrite);
        // Key 2 is deleted by batch 6, key 3 range-deleted by batch 7.
        assert_eq!(expected(&s, 4, 2, 6), Held::Original);
        assert_eq!(expected(&s, 4, 2, 7), Held::Absent);
        assert_eq!(expected(&s, 4, 3, 7), Held::Original);
        assert_eq!(expected(&s, 4, 3, 8), Held::Absent);
    }
}

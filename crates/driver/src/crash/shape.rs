//! What each batch of a crash test writes, regenerated from its position.

use ledgerbench_core::Batch;
use ledgerbench_rng::{Rng, stream};

pub use ledgerbench_results::crash::{CrashShape, KeyKind, StoreShape};

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
            r.fill(out, 32);
        }
    }
}

/// Value of key `j` of batch `batch` in store `store`.
pub fn value(seed: u64, shape: &StoreShape, store: usize, batch: u64, j: u32, out: &mut Vec<u8>) {
    out.clear();
    let mut r = Rng::new(stream(
        seed ^ 0x0076_616c,
        batch,
        (store as u64) << 32 | u64::from(j),
    ));
    r.fill(out, shape.value_bytes as usize);
}

/// The batch `batch` puts into store `store`, built into `out`.
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
}

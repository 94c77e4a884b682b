//! A Solana blockstore: data and coding shreds keyed by (slot, index), big
//! endian, arriving out of order within a slot, each insert reading and
//! rewriting the slot's metadata; retention deletes whole slots behind the
//! root (for leveled engines) or leaves expiry to a FIFO size cap.

use ledgerbench_rng::{Rng, stream};
use ledgerbench_trace::queue::{OwnedOp, Refill};
use ledgerbench_trace::{Expect, Header};
use serde::{Deserialize, Serialize};

use crate::generated::GenError;

const DATA: u8 = 0;
const CODE: u8 = 1;
const META: u8 = 2;

/// How old slots go away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Retention {
    /// Delete every shred and the metadata of slots older than `keep_slots`
    /// behind the newest (per key: the trait has no range delete).
    Delete,
    /// Delete nothing: run on `rocksdb-fifo`, whose size cap expires old files.
    Fifo,
}

/// Settings of a Solana blockstore run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SolanaConfig {
    /// Slots written.
    pub slots: u64,
    /// Data shreds per slot.
    pub data_shreds: u32,
    /// Coding shreds per slot.
    pub coding_shreds: u32,
    /// Data shred bytes.
    pub data_bytes: u32,
    /// Coding shred bytes.
    pub coding_bytes: u32,
    /// Slot metadata bytes.
    pub meta_bytes: u32,
    /// Shreds per atomic commit (an insert_shreds call).
    pub shreds_per_commit: u32,
    /// Slots kept behind the newest before retention removes them.
    pub keep_slots: u64,
    /// Retention: delete or fifo.
    pub retention: Retention,
    /// Slots per segment (a flush and a mark each).
    pub slots_per_segment: u64,
    /// Shreds of each finished slot read back and checked byte for byte.
    pub verify_per_slot: u32,
}

impl Default for SolanaConfig {
    fn default() -> Self {
        Self {
            slots: 2000,
            data_shreds: 64,
            coding_shreds: 64,
            data_bytes: 1203,
            coding_bytes: 1228,
            meta_bytes: 100,
            shreds_per_commit: 32,
            keep_slots: 500,
            retention: Retention::Delete,
            slots_per_segment: 50,
            verify_per_slot: 2,
        }
    }
}

/// The Solana blockstore generator.
pub struct Solana {
    cfg: SolanaConfig,
    header: Header,
    seed: u64,
    slot: u64,
}

/// Key of shred `index` of `slot`: slot then index, both big-endian.
pub fn shred_key(slot: u64, index: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(16);
    k.extend_from_slice(&slot.to_be_bytes());
    k.extend_from_slice(&index.to_be_bytes());
    k
}

impl Solana {
    /// A generator.
    pub fn new(seed: u64, cfg: SolanaConfig) -> Result<Self, GenError> {
        if cfg.slots == 0
            || cfg.data_shreds + cfg.coding_shreds == 0
            || cfg.shreds_per_commit == 0
            || cfg.slots_per_segment == 0
        {
            return Err(GenError::config(
                "solana",
                "slots, shreds, shreds_per_commit and slots_per_segment must be at least 1",
            ));
        }
        Ok(Self {
            header: crate::generated::header(
                "solana",
                seed,
                &["data_shred", "code_shred", "slot_meta"],
                &cfg,
            ),
            seed,
            slot: 0,
            cfg,
        })
    }

    fn shred(&self, slot: u64, i: u32) -> (u8, u64, u32, u64) {
        // (store, index, length, value seed)
        let (store, index, len) = if i < self.cfg.data_shreds {
            (DATA, u64::from(i), self.cfg.data_bytes)
        } else {
            (
                CODE,
                u64::from(i - self.cfg.data_shreds),
                self.cfg.coding_bytes,
            )
        };
        (store, index, len, stream(self.seed, slot, u64::from(i)))
    }
}

impl Refill for Solana {
    fn header(&self) -> &Header {
        &self.header
    }

    fn progress(&self) -> Option<(u64, u64)> {
        Some((self.slot, self.cfg.slots))
    }

    fn refill(&mut self, out: &mut Vec<OwnedOp>) -> Result<bool, ledgerbench_trace::SourceError> {
        if self.slot >= self.cfg.slots {
            return Ok(false);
        }
        let end = (self.slot + self.cfg.slots_per_segment).min(self.cfg.slots);
        let n = self.cfg.data_shreds + self.cfg.coding_shreds;
        for slot in self.slot..end {
            // Shreds of a slot arrive out of order: a seeded shuffle.
            let mut order: Vec<u32> = (0..n).collect();
            let mut r = Rng::new(stream(self.seed ^ 0x736c, slot, 0));
            for i in (1..order.len()).rev() {
                order.swap(i, r.below(i as u64 + 1) as usize);
            }
            let meta_key = slot.to_be_bytes().to_vec();
            for (j, &i) in order.iter().enumerate() {
                let (store, index, len, seed) = self.shred(slot, i);
                // The metadata read-modify-write of every insert; reads see
                // the last commit, so they are not checked.
                out.push(OwnedOp::Get(META, meta_key.clone(), Expect::Unchecked));
                out.push(OwnedOp::PutGenerated(
                    store,
                    shred_key(slot, index),
                    len,
                    seed,
                ));
                out.push(OwnedOp::PutGenerated(
                    META,
                    meta_key.clone(),
                    self.cfg.meta_bytes,
                    stream(self.seed ^ 0x6d65, slot, j as u64),
                ));
                if (j as u32 + 1).is_multiple_of(self.cfg.shreds_per_commit) || j as u32 + 1 == n {
                    out.push(OwnedOp::Commit(false));
                }
            }
            for v in 0..self.cfg.verify_per_slot.min(n) {
                let i = order[(v as usize * 7919) % order.len()];
                let (store, index, len, seed) = self.shred(slot, i);
                out.push(OwnedOp::Get(
                    store,
                    shred_key(slot, index),
                    Expect::Generated { len, seed },
                ));
            }
            if self.cfg.retention == Retention::Delete && slot >= self.cfg.keep_slots {
                let old = slot - self.cfg.keep_slots;
                for i in 0..n {
                    let (store, index, _, _) = self.shred(old, i);
                    out.push(OwnedOp::Delete(store, shred_key(old, index)));
                }
                out.push(OwnedOp::Delete(META, old.to_be_bytes().to_vec()));
                out.push(OwnedOp::Commit(false));
                out.push(OwnedOp::Get(DATA, shred_key(old, 0), Expect::Absent));
            }
        }
        out.push(OwnedOp::Flush(None));
        out.push(OwnedOp::Mark(format!("slot {end}")));
        self.slot = end;
        Ok(true)
    }
}

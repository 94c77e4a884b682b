//! Settings of the Solana blockstore and how old slots go away.

use serde::{Deserialize, Serialize};

use crate::generated::GenError;

/// How old slots go away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Retention {
    /// Delete every shred and the metadata of slots behind the root, one
    /// delete per key.
    Delete,
    /// Delete slots behind the root with one range delete per store (the
    /// blockstore's purge), `purge_every` slots at a time.
    Range,
    /// Delete nothing: run on `rocksdb-fifo`, whose size cap expires old files.
    Fifo,
    /// `range` on a store that keeps what it is given, `fifo` on one that
    /// drops its oldest data by itself: the runner decides per backend from
    /// what the registry says of it ([`resolve`]); a stream made without
    /// that decision purges by range.
    Auto,
}

/// `params` for a backend whose stores drop their oldest data by themselves
/// (`evicts_oldest`) or not: a Solana run's `retention = "auto"` becomes
/// `fifo` or `range`; anything else is returned as it is.
pub fn resolve(
    workload: &str,
    params: &serde_json::Value,
    evicts_oldest: bool,
) -> serde_json::Value {
    let mut p = params.clone();
    if workload == "solana"
        && let Some(r) = p.get_mut("retention")
        && r == "auto"
    {
        *r = if evicts_oldest { "fifo" } else { "range" }.into();
    }
    p
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
    /// Slots kept behind the newest complete slot before retention removes
    /// them (the root's distance).
    pub keep_slots: u64,
    /// Retention: delete, range, fifo or auto.
    pub retention: Retention,
    /// With `range` retention, slots purged at a time.
    pub purge_every: u64,
    /// Slots whose shreds arrive interleaved (1: one slot after another).
    pub in_flight: u32,
    /// Share of shreds that arrive late, by repair, `repair_delay_slots`
    /// slots after they were due.
    pub repair_fraction: f64,
    /// How many slots later a repaired shred arrives.
    pub repair_delay_slots: u64,
    /// Slots per segment (a flush and a mark each).
    pub slots_per_segment: u64,
    /// Shreds of each finished slot read back and checked byte for byte.
    pub verify_per_slot: u32,
    /// Read-backs and purge checks wait for the segment's end (a mark).
    /// Set for several client threads: a slot's shreds are committed by
    /// whichever thread their commit group went to, and only after a mark,
    /// a barrier, has every thread's write landed.
    pub checks_after_mark: bool,
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
            purge_every: 1,
            in_flight: 1,
            repair_fraction: 0.0,
            repair_delay_slots: 8,
            slots_per_segment: 50,
            verify_per_slot: 2,
            checks_after_mark: false,
        }
    }
}

impl SolanaConfig {
    /// Checks the settings; the message names the one to change.
    pub(super) fn validate(&self) -> Result<(), GenError> {
        let bad = |m: &str| Err(GenError::config("solana", m));
        if self.slots == 0
            || self.data_shreds + self.coding_shreds == 0
            || self.shreds_per_commit == 0
            || self.slots_per_segment == 0
            || self.in_flight == 0
            || self.purge_every == 0
        {
            return bad(
                "slots, shreds, shreds_per_commit, slots_per_segment, in_flight and purge_every must be at least 1",
            );
        }
        if !(0.0..=0.5).contains(&self.repair_fraction) {
            return bad("repair_fraction must be between 0 and 0.5");
        }
        if self.retention != Retention::Fifo
            && self.repair_fraction > 0.0
            && self.repair_delay_slots + u64::from(self.in_flight) >= self.keep_slots
        {
            return bad(
                "repair_delay_slots + in_flight must be below keep_slots: a repair must not land in a purged slot",
            );
        }
        Ok(())
    }
}

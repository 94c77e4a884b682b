//! What a long Stellar run keeps beside its batches: the lookups timed at
//! chosen batches, and every stop and resume of a checkpointed run.

use serde::{Deserialize, Serialize};

use crate::{Latency, LookupReads};

/// Lookups timed right after a batch (its flush and compaction done), with
/// nothing else running: what a GET costs at that size of the data.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LookupsAt {
    /// The batch they followed, from 1.
    pub batch: u32,
    /// `txdata[hash]`: the one-step lookup, decompression included
    /// (absent when none ran).
    pub one_step: Option<Latency>,
    /// `txindex[hash]` then `ledgers[seq]`: the two-step lookup.
    pub two_step: Option<Latency>,
    /// What the lookups read from each store's device and cache.
    pub reads: LookupReads,
}

/// A checkpointed run that stopped and was resumed (`--resume`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resume {
    /// Batches complete (recorded and synced) when it stopped: the resumed
    /// run began with the next.
    pub after_batch: u32,
    /// What stopped it, as far as the resuming process can tell.
    pub why: String,
    /// When it was resumed (UTC, RFC 3339).
    pub at: String,
    /// Git commit of the build that resumed it.
    pub commit: String,
}

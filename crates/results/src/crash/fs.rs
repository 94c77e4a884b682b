//! What the crash filesystem did at a crash (`--kinds lose,reorder,torn`).

use serde::{Deserialize, Serialize};

/// The writes and directory changes not yet synced when a crash came, and
/// which of them the simulated device kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FsCrash {
    /// Data writes (and size changes) not covered by an fsync of their file.
    pub unsynced_writes: u64,
    /// Of those, the ones kept (each whole, but for a torn one).
    pub persisted_writes: u64,
    /// Creates, removes and renames not covered by an fsync of their directory.
    pub unsynced_names: u64,
    /// Of those, the ones kept (a prefix, in order, as a journal commits them).
    pub persisted_names: u64,
    /// The write cut at a sector boundary, for a `torn` crash that found one
    /// spanning a boundary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torn: Option<TornWrite>,
    /// Bytes the layer logged to undo and redo the writes of the cycle.
    pub logged_bytes: u64,
    /// The first name changes the crash undid, in order (`create
    /// kv/data.mdb`, `rename kv/a -> kv/b`): a store that loses its files
    /// whole names here what was never synced into its directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost_names: Vec<String>,
}

/// Most name changes a crash record lists.
pub const LOST_NAMES_LISTED: usize = 8;

/// A write of which only the bytes before a sector boundary reached the device.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TornWrite {
    /// The file, relative to the stores' directory.
    pub path: String,
    /// Where the write started in the file.
    pub offset: u64,
    /// Its length.
    pub len: u64,
    /// The bytes kept (up to a 512 B or 4 KiB boundary of the file).
    pub kept: u64,
}

//! The stores a crash test writes and what goes into each of their batches.

use serde::{Deserialize, Serialize};

/// How a store's keys are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyKind {
    /// 32 random bytes (transaction hashes): inserts land all over the tree.
    Random32,
    /// 4-byte big-endian sequence numbers (ledger numbers): appends.
    Sequence,
}

/// One store of a crash shape: what each batch puts into it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreShape {
    /// Store name.
    pub name: String,
    /// Keys each batch puts.
    pub keys_per_batch: u32,
    /// How keys are made.
    pub keys: KeyKind,
    /// Value size, bytes (random, incompressible).
    pub value_bytes: u32,
    /// Each batch also overwrites, deletes and range-deletes keys of the
    /// batches before it (see [`Fate`]); false in files from before mixed
    /// batches, whose batches only put.
    #[serde(default)]
    pub mixed: bool,
}

/// What becomes of one key of a mixed batch in the batches after its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Never written again.
    Kept,
    /// The next batch puts a new value under it.
    Overwritten,
    /// The batch two after its own deletes it.
    Deleted,
    /// Its key is in its batch's range family, which the batch three after
    /// its own removes with one range delete.
    RangeDeleted,
}

impl Fate {
    /// Batches after the key's own at which its fate comes (0 for kept).
    pub fn lag(self) -> u64 {
        match self {
            Fate::Kept => 0,
            Fate::Overwritten => 1,
            Fate::Deleted => 2,
            Fate::RangeDeleted => 3,
        }
    }
}

impl StoreShape {
    /// The fate of key `j` of every batch: one key in eight each is
    /// overwritten, deleted and range-deleted when the store is mixed.
    pub fn fate(&self, j: u32) -> Fate {
        if !self.mixed {
            return Fate::Kept;
        }
        match j % 8 {
            1 => Fate::Overwritten,
            2 => Fate::Deleted,
            3 => Fate::RangeDeleted,
            _ => Fate::Kept,
        }
    }
}

/// The stores a crash test writes and what goes into each batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashShape {
    /// Shape name: `generic` or `stellar`.
    pub name: String,
    /// The stores, each committed separately per batch, in this order.
    pub stores: Vec<StoreShape>,
}

impl CrashShape {
    /// One store, batches of 200 random 32-byte keys with 1,000-byte values
    /// that also overwrite, delete and range-delete earlier batches' keys.
    pub fn generic() -> Self {
        Self {
            name: "generic".into(),
            stores: vec![StoreShape {
                name: "kv".into(),
                keys_per_batch: 200,
                keys: KeyKind::Random32,
                value_bytes: 1000,
                mixed: true,
            }],
        }
    }

    /// The Stellar ingestion stores, scaled to a 10-ledger batch: `ledgers`
    /// (sequence keys, 150 KB values), `txdata` (258 transactions a ledger,
    /// hash keys, 1.1 KB values) and `txindex` (hash keys, 4-byte values);
    /// puts only, as ingestion writes them.
    pub fn stellar() -> Self {
        let store = |name: &str, keys_per_batch, keys, value_bytes| StoreShape {
            name: name.into(),
            keys_per_batch,
            keys,
            value_bytes,
            mixed: false,
        };
        Self {
            name: "stellar".into(),
            stores: vec![
                store("ledgers", 10, KeyKind::Sequence, 150_000),
                store("txdata", 2580, KeyKind::Random32, 1100),
                store("txindex", 2580, KeyKind::Random32, 4),
            ],
        }
    }

    /// A shape by name.
    pub fn by_name(name: &str) -> Result<Self, crate::InvalidConfig> {
        match name {
            "generic" => Ok(Self::generic()),
            "stellar" => Ok(Self::stellar()),
            other => Err(crate::InvalidConfig(format!(
                "unknown crash shape `{other}`; accepted: generic, stellar"
            ))),
        }
    }
}

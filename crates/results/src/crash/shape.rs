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
    /// One store, batches of 200 random 32-byte keys with 1,000-byte values.
    pub fn generic() -> Self {
        Self {
            name: "generic".into(),
            stores: vec![StoreShape {
                name: "kv".into(),
                keys_per_batch: 200,
                keys: KeyKind::Random32,
                value_bytes: 1000,
            }],
        }
    }

    /// The Stellar ingestion stores, scaled to a 10-ledger batch: `ledgers`
    /// (sequence keys, 150 KB values), `txdata` (258 transactions a ledger,
    /// hash keys, 1.1 KB values) and `txindex` (hash keys, 4-byte values).
    pub fn stellar() -> Self {
        let store = |name: &str, keys_per_batch, keys, value_bytes| StoreShape {
            name: name.into(),
            keys_per_batch,
            keys,
            value_bytes,
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

    /// Logical bytes one batch writes over all stores.
    pub fn batch_bytes(&self) -> u64 {
        self.stores
            .iter()
            .map(|s| u64::from(s.keys_per_batch) * (key_len(s.keys) + u64::from(s.value_bytes)))
            .sum()
    }
}

pub(crate) fn key_len(k: KeyKind) -> u64 {
    match k {
        KeyKind::Random32 => 32,
        KeyKind::Sequence => 4,
    }
}

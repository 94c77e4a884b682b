//! An Ethereum-style hexary Merkle-Patricia state trie kept in any
//! [`KvStore`](ledgerbench_core::KvStore), stored two ways: by node hash
//! (old nodes stay, as geth's hash scheme) or by nibble path (updates
//! overwrite in place, as geth's path scheme and reth's trie tables), with
//! the flat account table beside it.
//!
//! The bulk load and the reference root are built from sorted keys
//! ([`build`]); blocks update the stored trie in place ([`Trie`]), and the
//! two must agree on every root.

pub mod accounts;
pub mod build;
mod db;
pub mod node;

pub use db::{ReadTrace, Scheme, Trie, UpdateCost, flat_key};

/// A keccak-256 hash.
pub type Hash = [u8; 32];

/// The root of the empty trie: keccak-256 of RLP's empty string.
pub const EMPTY_ROOT: Hash = [
    0x56, 0xe8, 0x1f, 0x17, 0x1b, 0xcc, 0x55, 0xa6, 0xff, 0x83, 0x45, 0xe6, 0x92, 0xc0, 0xf8, 0x6e,
    0x5b, 0x48, 0xe0, 0x1b, 0x99, 0x6c, 0xad, 0xc0, 0x01, 0x62, 0x2f, 0xb5, 0xe3, 0x63, 0xb4, 0x21,
];

/// Keccak-256 of `data`.
pub fn keccak(data: &[u8]) -> Hash {
    use tiny_keccak::{Hasher, Keccak};
    let mut k = Keccak::v256();
    k.update(data);
    let mut out = [0u8; 32];
    k.finalize(&mut out);
    out
}

/// What went wrong in the trie.
#[derive(Debug, thiserror::Error)]
pub enum TrieError {
    /// A stored node is not a well-formed node.
    #[error("trie node does not decode: {0}")]
    Decode(String),
    /// A node the trie refers to is not in the store.
    #[error(
        "trie node missing from the store at path {path} (the store lost a write, or holds another trie)"
    )]
    Missing {
        /// The node's nibble path, hex.
        path: String,
    },
    /// An update or read named a key the trie does not hold.
    #[error("key {0} is not in the trie: blocks update existing accounts only")]
    NotInTrie(String),
    /// Keys given out of order, repeated or of mixed lengths.
    #[error("{0}")]
    Order(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] ledgerbench_core::Error),
}

#[cfg(test)]
mod tests;

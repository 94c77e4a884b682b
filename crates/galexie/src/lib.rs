//! Real Stellar ledgers for ledgerbench: reads SEP-54 data-lake files (zstd XDR
//! `LedgerCloseMetaBatch`, `.xdr.zst` / `.xdr.zstd`, with or without
//! partition folders and `.config.json`) and base64-per-line
//! `LedgerCloseMeta` files, recomputes every transaction hash with the
//! network passphrase and checks it against the hash in the meta, and turns
//! ledgers into the Stellar workload's three stores.

use std::collections::HashMap;
use std::path::PathBuf;

mod files;
mod ops;

pub use files::{collect, read_file, start_seq};
pub use ops::{ImportConfig, ImportStats, LedgerOps};

use ledgerbench_trace::queue::{OwnedOp, Refill};
use sha2::{Digest, Sha256};
use stellar_xdr::{
    GeneralizedTransactionSet, LedgerCloseMeta, LedgerCloseMetaBatch, Limits, ReadXdr,
    TransactionEnvelope, TransactionPhase, TxSetComponent, WriteXdr,
};

/// The pubnet passphrase, used unless a `.config.json` or the caller says otherwise.
pub const PUBNET: &str = "Public Global Stellar Network ; September 2015";

/// What went wrong reading real ledgers.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A file is not what it claims to be.
    #[error("{}: {what}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        what: String,
    },
    /// A recomputed hash did not match the meta's.
    #[error("ledger {ledger}: {what}")]
    Hash {
        /// Ledger sequence.
        ledger: u32,
        /// What did not match.
        what: String,
    },
}

/// One transaction of a ledger, in apply order.
#[derive(Debug, Clone)]
pub struct Tx {
    /// Transaction hash (recomputed and checked).
    pub hash: [u8; 32],
    /// Position in the ledger's apply order.
    pub index: u32,
    /// Envelope XDR.
    pub envelope: Vec<u8>,
    /// Result and meta XDR (`TransactionResultMeta` or its V1).
    pub result_meta: Vec<u8>,
}

/// One ledger.
#[derive(Debug, Clone)]
pub struct Ledger {
    /// Sequence number.
    pub seq: u32,
    /// Close time, seconds since the Unix epoch.
    pub close_time: u64,
    /// Ledger protocol version.
    pub protocol: u32,
    /// `LedgerCloseMeta` variant (0, 1 or 2).
    pub meta_version: u32,
    /// The whole `LedgerCloseMeta` XDR.
    pub xdr: Vec<u8>,
    /// Transactions, in apply order.
    pub txs: Vec<Tx>,
}

impl Ledger {
    /// The `txdata` record of transaction `i`: envelope, result and meta,
    /// ledger sequence, close time and index, length-prefixed.
    pub fn tx_record(&self, i: usize, out: &mut Vec<u8>) {
        let t = &self.txs[i];
        out.clear();
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&self.close_time.to_be_bytes());
        out.extend_from_slice(&t.index.to_be_bytes());
        for part in [&t.envelope, &t.result_meta] {
            out.extend_from_slice(&(part.len() as u32).to_be_bytes());
            out.extend_from_slice(part);
        }
    }
}

/// SHA-256 of the passphrase: the network id transaction hashes commit to.
pub fn network_id(passphrase: &str) -> [u8; 32] {
    Sha256::digest(passphrase.as_bytes()).into()
}

pub(crate) fn limits() -> Limits {
    Limits {
        depth: 10_000,
        len: usize::MAX,
    }
}

fn set_envelopes(s: &GeneralizedTransactionSet) -> Vec<&TransactionEnvelope> {
    let GeneralizedTransactionSet::V1(v1) = s;
    let mut out = Vec::new();
    for phase in v1.phases.iter() {
        match phase {
            TransactionPhase::V0(comps) => {
                for c in comps.iter() {
                    let TxSetComponent::TxsetCompTxsMaybeDiscountedFee(c) = c;
                    out.extend(c.txs.iter());
                }
            }
            TransactionPhase::V1(par) => {
                for stage in par.execution_stages.iter() {
                    for cluster in stage.0.iter() {
                        out.extend(cluster.0.iter());
                    }
                }
            }
        }
    }
    out
}

fn envelopes(lcm: &LedgerCloseMeta) -> Vec<&TransactionEnvelope> {
    match lcm {
        LedgerCloseMeta::V0(m) => m.tx_set.txs.iter().collect(),
        LedgerCloseMeta::V1(m) => set_envelopes(&m.tx_set),
        LedgerCloseMeta::V2(m) => set_envelopes(&m.tx_set),
    }
}

/// Decodes one ledger, checking every transaction hash against the meta.
pub fn decode(lcm: &LedgerCloseMeta, network: [u8; 32]) -> Result<Ledger, ImportError> {
    let (header, version) = match lcm {
        LedgerCloseMeta::V0(m) => (&m.ledger_header.header, 0),
        LedgerCloseMeta::V1(m) => (&m.ledger_header.header, 1),
        LedgerCloseMeta::V2(m) => (&m.ledger_header.header, 2),
    };
    let seq = header.ledger_seq;
    let xdr_err = |what: &str, e: stellar_xdr::Error| ImportError::Hash {
        ledger: seq,
        what: format!("{what}: {e}"),
    };
    let mut by_hash: HashMap<[u8; 32], &TransactionEnvelope> = HashMap::new();
    for env in envelopes(lcm) {
        let h = env
            .hash(network)
            .map_err(|e| xdr_err("hashing an envelope", e))?;
        by_hash.insert(h, env);
    }
    // (hash in the meta, result + meta XDR) in apply order.
    let results: Vec<([u8; 32], Vec<u8>)> = match lcm {
        LedgerCloseMeta::V0(m) => m
            .tx_processing
            .iter()
            .map(|r| Ok((r.result.transaction_hash.0, r.to_xdr(limits())?)))
            .collect::<Result<_, stellar_xdr::Error>>(),
        LedgerCloseMeta::V1(m) => m
            .tx_processing
            .iter()
            .map(|r| Ok((r.result.transaction_hash.0, r.to_xdr(limits())?)))
            .collect(),
        LedgerCloseMeta::V2(m) => m
            .tx_processing
            .iter()
            .map(|r| Ok((r.result.transaction_hash.0, r.to_xdr(limits())?)))
            .collect(),
    }
    .map_err(|e| xdr_err("encoding a result", e))?;
    if results.len() != by_hash.len() {
        return Err(ImportError::Hash {
            ledger: seq,
            what: format!(
                "{} transactions in the set but {} results in the meta",
                by_hash.len(),
                results.len()
            ),
        });
    }
    let mut txs = Vec::with_capacity(results.len());
    for (i, (hash, result_meta)) in results.into_iter().enumerate() {
        let env = by_hash.get(&hash).ok_or_else(|| ImportError::Hash {
            ledger: seq,
            what: format!(
                "result {i} names transaction {} but no envelope in the set hashes to it with this network passphrase (check --passphrase, or the network of .config.json)",
                hex(&hash)
            ),
        })?;
        txs.push(Tx {
            hash,
            index: i as u32,
            envelope: env
                .to_xdr(limits())
                .map_err(|e| xdr_err("encoding an envelope", e))?,
            result_meta,
        });
    }
    Ok(Ledger {
        seq,
        close_time: header.scp_value.close_time.0,
        protocol: header.ledger_version,
        meta_version: version,
        xdr: lcm
            .to_xdr(limits())
            .map_err(|e| xdr_err("encoding the ledger", e))?,
        txs,
    })
}

pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

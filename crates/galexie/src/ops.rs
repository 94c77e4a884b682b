//! Real ledgers as the Stellar workload's operations on its three stores.

use std::path::PathBuf;

use crate::*;

/// How real ledgers become operations.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ImportConfig {
    /// Network passphrase the hashes are checked with.
    pub passphrase: String,
    /// zstd level of the stored ledgers and transaction records.
    pub zstd_level: i32,
    /// Ledgers per atomic commit.
    pub commit_ledgers: u32,
    /// Ledgers per batch (a flush and a mark end each).
    pub batch_ledgers: u32,
    /// Compact every store after each batch (the Stellar report's protocol).
    pub compact: bool,
}

impl Default for ImportConfig {
    fn default() -> Self {
        Self {
            passphrase: PUBNET.into(),
            zstd_level: 3,
            commit_ledgers: 1,
            batch_ledgers: 1,
            compact: true,
        }
    }
}

/// Counts of what an import read.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ImportStats {
    /// Files read.
    pub files: u64,
    /// Ledgers read.
    pub ledgers: u64,
    /// Transactions read, every hash recomputed and matched.
    pub txs: u64,
    /// Lowest ledger sequence read.
    pub first: Option<u32>,
    /// Highest ledger sequence read.
    pub last: Option<u32>,
    /// Ledgers whose sequence was below the one read before them (files
    /// named out of sequence order): the trace keeps the order read.
    pub out_of_order: u64,
    #[serde(skip)]
    previous: Option<u32>,
    /// Raw XDR bytes of ledgers.
    pub ledger_raw_bytes: u64,
    /// Compressed bytes of ledgers.
    pub ledger_stored_bytes: u64,
    /// Raw bytes of transaction records.
    pub tx_raw_bytes: u64,
    /// Compressed bytes of transaction records.
    pub tx_stored_bytes: u64,
}

/// Real ledgers as the Stellar workload's operations: `ledgers` seq (4 bytes
/// big-endian) -> zstd(LedgerCloseMeta XDR), `txdata` hash -> zstd(record),
/// `txindex` hash -> seq.
pub struct LedgerOps {
    files: Vec<PathBuf>,
    file: usize,
    pending: std::collections::VecDeque<LedgerCloseMeta>,
    cfg: ImportConfig,
    network: [u8; 32],
    header: ledgerbench_trace::Header,
    in_commit: u32,
    in_batch: u32,
    batches: u32,
    compressor: zstd::bulk::Compressor<'static>,
    record: Vec<u8>,
    stats: ImportStats,
    finished: bool,
}

impl LedgerOps {
    /// Operations of every ledger in `files`, in order.
    pub fn new(files: Vec<PathBuf>, cfg: ImportConfig) -> Result<Self, ImportError> {
        let compressor =
            zstd::bulk::Compressor::new(cfg.zstd_level).map_err(|e| ImportError::Format {
                path: PathBuf::new(),
                what: format!("zstd level {}: {e}", cfg.zstd_level),
            })?;
        let header = ledgerbench_trace::Header {
            workload: "galexie".into(),
            seed: 0,
            stores: vec!["ledgers".into(), "txdata".into(), "txindex".into()],
            source: serde_json::json!({
                "files": files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
                "config": cfg,
            }),
        };
        Ok(Self {
            network: network_id(&cfg.passphrase),
            files,
            file: 0,
            pending: Default::default(),
            cfg,
            header,
            in_commit: 0,
            in_batch: 0,
            batches: 0,
            compressor,
            record: Vec::new(),
            stats: ImportStats::default(),
            finished: false,
        })
    }

    /// What has been read so far.
    pub fn stats(&self) -> &ImportStats {
        &self.stats
    }

    fn compress(&mut self, what: &str, seq: u32, data: &[u8]) -> Result<Vec<u8>, ImportError> {
        self.compressor
            .compress(data)
            .map_err(|e| ImportError::Hash {
                ledger: seq,
                what: format!("compressing the {what}: {e}"),
            })
    }

    fn end_batch(&mut self, out: &mut Vec<OwnedOp>) {
        out.push(OwnedOp::Flush(None));
        if self.cfg.compact {
            out.push(OwnedOp::Compact(None));
        }
        self.batches += 1;
        out.push(OwnedOp::Mark(format!("batch {}", self.batches)));
        self.in_batch = 0;
    }

    /// Queues the next ledger's operations; false when none is left.
    fn next_ledger(&mut self, out: &mut Vec<OwnedOp>) -> Result<bool, ImportError> {
        while self.pending.is_empty() {
            let Some(f) = self.files.get(self.file).cloned() else {
                if self.finished {
                    return Ok(false);
                }
                // The tail: commit and close the last partial batch.
                self.finished = true;
                if self.in_commit > 0 {
                    out.push(OwnedOp::Commit(false));
                }
                if self.in_batch > 0 {
                    self.end_batch(out);
                }
                return Ok(!out.is_empty());
            };
            self.file += 1;
            self.stats.files += 1;
            self.pending.extend(read_file(&f)?);
        }
        let Some(lcm) = self.pending.pop_front() else {
            return Ok(false);
        };
        let l = decode(&lcm, self.network)?;
        let st = &mut self.stats;
        st.ledgers += 1;
        st.txs += l.txs.len() as u64;
        st.first = Some(st.first.map_or(l.seq, |f| f.min(l.seq)));
        st.last = Some(st.last.map_or(l.seq, |m| m.max(l.seq)));
        if st.previous.is_some_and(|p| l.seq < p) {
            st.out_of_order += 1;
        }
        st.previous = Some(l.seq);
        st.ledger_raw_bytes += l.xdr.len() as u64;
        let seq_key = l.seq.to_be_bytes().to_vec();
        let packed = self.compress("ledger", l.seq, &l.xdr)?;
        self.stats.ledger_stored_bytes += packed.len() as u64;
        out.push(OwnedOp::Put(0, seq_key.clone(), packed));
        for i in 0..l.txs.len() {
            let mut rec = std::mem::take(&mut self.record);
            l.tx_record(i, &mut rec);
            let packed = self.compress("transaction record", l.seq, &rec)?;
            self.stats.tx_raw_bytes += rec.len() as u64;
            self.stats.tx_stored_bytes += packed.len() as u64;
            self.record = rec;
            let h = l.txs[i].hash.to_vec();
            out.push(OwnedOp::Put(1, h.clone(), packed));
            out.push(OwnedOp::Put(2, h, seq_key.clone()));
        }
        self.in_commit += 1;
        self.in_batch += 1;
        if self.in_commit >= self.cfg.commit_ledgers.max(1)
            || self.in_batch >= self.cfg.batch_ledgers.max(1)
        {
            out.push(OwnedOp::Commit(false));
            self.in_commit = 0;
        }
        if self.in_batch >= self.cfg.batch_ledgers.max(1) {
            self.end_batch(out);
        }
        Ok(true)
    }
}

impl Refill for LedgerOps {
    fn header(&self) -> &ledgerbench_trace::Header {
        &self.header
    }

    fn refill(&mut self, out: &mut Vec<OwnedOp>) -> Result<bool, ledgerbench_trace::SourceError> {
        self.next_ledger(out).map_err(Into::into)
    }
}

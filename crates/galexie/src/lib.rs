//! Real Stellar ledgers for kvbench: reads SEP-54 data-lake files (zstd XDR
//! `LedgerCloseMetaBatch`, `.xdr.zst` / `.xdr.zstd`, with or without
//! partition folders and `.config.json`) and base64-per-line
//! `LedgerCloseMeta` files, recomputes every transaction hash with the
//! network passphrase and checks it against the hash in the meta, and turns
//! ledgers into the Stellar workload's three stores.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use kvbench_trace::queue::{OwnedOp, Refill};
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

fn limits() -> Limits {
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
                "result {i} names transaction {} but no envelope in the set hashes to it with this network passphrase",
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

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Files to read under `paths` (files as given; directories searched for
/// data-lake files), and the passphrase of the first `.config.json` found.
pub fn collect(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, Option<String>), ImportError> {
    let mut files = Vec::new();
    let mut passphrase = None;
    let mut stack: Vec<PathBuf> = paths.to_vec();
    while let Some(p) = stack.pop() {
        let meta = std::fs::metadata(&p).map_err(|source| ImportError::Io {
            path: p.clone(),
            source,
        })?;
        if meta.is_dir() {
            let rd = std::fs::read_dir(&p).map_err(|source| ImportError::Io {
                path: p.clone(),
                source,
            })?;
            for e in rd.flatten() {
                let path = e.path();
                let name = e.file_name().to_string_lossy().to_string();
                if name == ".config.json" {
                    passphrase = passphrase.or(read_config(&path)?);
                } else if path.is_dir() || is_lake_file(&name) || is_line_file(&name) {
                    stack.push(path);
                }
            }
        } else {
            files.push(p);
        }
    }
    // Lake file names start with 0xFFFFFFFF - start in hex: sorting by
    // the start sequence, not the name, gives ledger order.
    files.sort_by_key(|f| (start_seq(f).unwrap_or(u32::MAX), f.clone()));
    Ok((files, passphrase))
}

/// Base64 line files found in a directory scan: `*.txt`, `*.b64`, and the
/// same zstd-compressed (`*.txt.zst`, `*.b64.zst`).
fn is_line_file(name: &str) -> bool {
    let name = name.strip_suffix(".zst").unwrap_or(name);
    name.ends_with(".txt") || name.ends_with(".b64")
}

fn is_lake_file(name: &str) -> bool {
    name.ends_with(".xdr.zst") || name.ends_with(".xdr.zstd")
}

/// The first ledger of a data-lake file, from its SEP-54 name.
pub fn start_seq(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_string_lossy().to_string();
    let (_, rest) = name.split_once("--")?;
    rest.split(['-', '.']).next()?.parse().ok()
}

fn read_config(path: &Path) -> Result<Option<String>, ImportError> {
    let text = std::fs::read(path).map_err(|source| ImportError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let v: serde_json::Value = serde_json::from_slice(&text).map_err(|e| ImportError::Format {
        path: path.to_path_buf(),
        what: format!("not JSON: {e}"),
    })?;
    Ok(v.get("networkPassphrase")
        .and_then(serde_json::Value::as_str)
        .map(str::to_string))
}

/// Reads the ledgers of one file: a data-lake batch (by its `.xdr.zst` /
/// `.xdr.zstd` name) or base64 `LedgerCloseMeta` lines (anything else;
/// zstd-compressed when the name ends in `.zst`).
pub fn read_file(path: &Path) -> Result<Vec<LedgerCloseMeta>, ImportError> {
    let fmt = |what: String| ImportError::Format {
        path: path.to_path_buf(),
        what,
    };
    let io = |source| ImportError::Io {
        path: path.to_path_buf(),
        source,
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    if is_lake_file(&name) {
        let file = std::fs::File::open(path).map_err(io)?;
        let raw = zstd::stream::decode_all(file).map_err(|e| {
            fmt(format!(
                "not a zstd stream ({e}); expected a SEP-54 data-lake file"
            ))
        })?;
        let batch = LedgerCloseMetaBatch::from_xdr(&raw, limits())
            .map_err(|e| fmt(format!("not an XDR LedgerCloseMetaBatch: {e}")))?;
        let n = batch.ledger_close_metas.len() as u64;
        let span = u64::from(batch.end_sequence) + 1
            - u64::from(batch.start_sequence).min(u64::from(batch.end_sequence) + 1);
        if n != span {
            return Err(fmt(format!(
                "batch claims ledgers {}..={} but holds {n}",
                batch.start_sequence, batch.end_sequence
            )));
        }
        return Ok(batch.ledger_close_metas.to_vec());
    }
    let file = std::fs::File::open(path).map_err(io)?;
    let reader: Box<dyn std::io::Read> = if name.ends_with(".zst") {
        Box::new(zstd::stream::read::Decoder::new(file).map_err(io)?)
    } else {
        Box::new(file)
    };
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(reader).lines().enumerate() {
        let line = line.map_err(io)?;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        out.push(LedgerCloseMeta::from_xdr_base64(line, limits()).map_err(|e| {
            fmt(format!(
                "line {}: not a base64 XDR LedgerCloseMeta ({e}); expected one per line, or a .xdr.zst data-lake file",
                i + 1
            ))
        })?);
    }
    Ok(out)
}

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
    /// First and last ledger sequence.
    pub first: Option<u32>,
    /// Last ledger sequence.
    pub last: Option<u32>,
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
    header: kvbench_trace::Header,
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
        let header = kvbench_trace::Header {
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
        st.first = st.first.or(Some(l.seq));
        st.last = Some(l.seq);
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
    fn header(&self) -> &kvbench_trace::Header {
        &self.header
    }

    fn refill(&mut self, out: &mut Vec<OwnedOp>) -> Result<bool, String> {
        self.next_ledger(out).map_err(|e| e.to_string())
    }
}

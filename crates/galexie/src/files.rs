//! Finding and reading ledger files: SEP-54 data-lake batches and base64
//! line files, plain or zstd.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::*;

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

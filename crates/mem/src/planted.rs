//! A planted bug for testing crash tests: a commit index written next to
//! the log. The log's frames are trusted up to the committed length the
//! index holds (no checksum), so the order in which the two reach the
//! device decides what a crash leaves:
//!
//! - [`Planted::IndexAfterSync`] syncs the log before it writes the index
//!   (a barrier): any crash leaves an index no longer than the synced log.
//! - [`Planted::IndexNoBarrier`] writes the index, then syncs both: a crash
//!   that loses every unsynced write is harmless, but a device that keeps
//!   the index write and not the log's leaves a committed length over bytes
//!   that never arrived, and the store opens with garbage or not at all.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Which commit order the planted store uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Planted {
    /// Log synced, then the index written and synced: correct.
    IndexAfterSync,
    /// Index written before the log is synced: the bug.
    IndexNoBarrier,
}

const INDEX: &str = "commit.idx";

/// Opens (making it, durably, if new) the index in `dir`; returns it and
/// the committed length it holds.
pub(crate) fn open_index(dir: &Path) -> io::Result<(File, u64)> {
    let path = dir.join(INDEX);
    let existed = path.exists();
    let f = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)?;
    if !existed {
        f.write_all_at(&0u64.to_le_bytes(), 0)?;
        f.sync_data()?;
        ledgerbench_core::fsutil::sync_dir(dir)?;
    }
    let mut b = [0u8; 8];
    let committed = match f.read_exact_at(&mut b, 0) {
        Ok(()) => u64::from_le_bytes(b),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => 0,
        Err(e) => return Err(e),
    };
    Ok((f, committed))
}

/// Applies the log's frames up to `committed`, trusting their lengths
/// (that trust is the point), and cuts the log there.
pub(crate) fn replay(
    path: &Path,
    committed: u64,
    map: &mut BTreeMap<Vec<u8>, Vec<u8>>,
) -> io::Result<File> {
    // The log's name is as durable as the index: the only bug planted
    // here is the missing barrier.
    let mut f = crate::open_log(path)?;
    let mut data = Vec::new();
    f.read_to_end(&mut data)?;
    let end = committed as usize;
    let beyond = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "the commit index points past the log",
        )
    };
    let mut at = 0;
    while at < end {
        let head = data.get(at..at + 12).ok_or_else(beyond)?;
        let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let body = data.get(at + 12..at + 12 + len).ok_or_else(beyond)?;
        super::apply_frame(body, map)?;
        at += 12 + len;
    }
    if data.len() > at {
        f.set_len(at as u64)?;
        f.sync_data()?;
    }
    Ok(f)
}

/// Appends `frame` to `log` and commits it in `index` in the planted order.
pub(crate) fn commit(
    p: Planted,
    log: &mut File,
    index: &File,
    frame: &[u8],
    new_len: u64,
) -> io::Result<()> {
    log.write_all(frame)?;
    let len = new_len.to_le_bytes();
    match p {
        Planted::IndexAfterSync => {
            log.sync_data()?;
            index.write_all_at(&len, 0)?;
            index.sync_data()
        }
        Planted::IndexNoBarrier => {
            index.write_all_at(&len, 0)?;
            log.sync_data()?;
            index.sync_data()
        }
    }
}

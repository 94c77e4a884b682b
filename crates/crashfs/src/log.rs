//! What the crash filesystem did since it was mounted, in order: every
//! change with the bytes to undo and redo it, and every sync. Payloads live
//! in a scratch file, so the harness's heap grows only by a few words per
//! operation, not by the data written.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

/// Bytes kept in the payload file: where they start and how many.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Span {
    pub(crate) at: u64,
    pub(crate) len: u64,
}

/// One operation the filesystem performed.
#[derive(Debug, Clone)]
pub(crate) enum Rec {
    /// `len` bytes written at `off` of file `ino`; `undo` holds what they
    /// replaced (up to the old end of file), `redo` what was written.
    Write {
        ino: u64,
        off: u64,
        old_size: u64,
        undo: Span,
        redo: Span,
    },
    /// File `ino`'s size changed (truncate, extending fallocate); `undo`
    /// holds the bytes a shrink cut off.
    SetSize {
        ino: u64,
        old_size: u64,
        new_size: u64,
        undo: Span,
    },
    /// `name` in directory `parent` was made (a file or a directory).
    Create {
        parent: u64,
        name: OsString,
        ino: u64,
        dir: bool,
    },
    /// `name` was removed from `parent`; a file is kept in `grave` so the
    /// removal can be undone (a removed directory was empty).
    Remove {
        parent: u64,
        name: OsString,
        ino: u64,
        grave: Option<PathBuf>,
    },
    /// `ino` moved from `parent/name` to `newparent/newname`, replacing the
    /// file `replaced` (kept in its grave) if there was one.
    Rename {
        parent: u64,
        name: OsString,
        newparent: u64,
        newname: OsString,
        ino: u64,
        replaced: Option<(u64, PathBuf)>,
    },
    /// `fsync`/`fdatasync` of a file: its data so far is durable.
    SyncFile { ino: u64 },
    /// `fsync` of a directory: its entries so far are durable.
    SyncDir { ino: u64 },
}

impl Rec {
    /// Whether this changes a directory's entries (as against a file's data).
    pub(crate) fn is_name_op(&self) -> bool {
        matches!(
            self,
            Rec::Create { .. } | Rec::Remove { .. } | Rec::Rename { .. }
        )
    }
}

/// The log: operations in order and the payload file their bytes live in.
pub(crate) struct OpLog {
    pub(crate) recs: Vec<Rec>,
    payload: File,
    end: u64,
}

impl OpLog {
    /// A fresh log over `payload` (truncated).
    pub(crate) fn new(payload: File) -> io::Result<OpLog> {
        payload.set_len(0)?;
        Ok(OpLog {
            recs: Vec::new(),
            payload,
            end: 0,
        })
    }

    /// Keeps `bytes` in the payload file.
    pub(crate) fn keep(&mut self, bytes: &[u8]) -> io::Result<Span> {
        let at = self.end;
        self.payload.write_all_at(bytes, at)?;
        self.end += bytes.len() as u64;
        Ok(Span {
            at,
            len: bytes.len() as u64,
        })
    }

    /// Reads back bytes kept earlier.
    pub(crate) fn read(&self, s: Span) -> io::Result<Vec<u8>> {
        let mut v = vec![0u8; s.len as usize];
        self.payload.read_exact_at(&mut v, s.at)?;
        Ok(v)
    }

    /// Bytes kept so far.
    pub(crate) fn payload_bytes(&self) -> u64 {
        self.end
    }
}

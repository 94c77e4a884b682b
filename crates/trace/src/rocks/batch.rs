//! The entries of a RocksDB WriteBatch, as a Write record carries it.
//!
//! Layout (`db/write_batch.cc`, tags from `db/dbformat.h`): a sequence
//! number (fixed64), a count (fixed32), then entries, each a tag byte, a
//! varint32 column family for the `ColumnFamily*` tags, and
//! varint32-length-prefixed strings. The count covers the entries that
//! change data (puts, deletes, range deletes, merges, blob indexes,
//! entities, timed puts), not log data, no-ops or transaction markers; a
//! batch whose count disagrees with its entries is refused, as RocksDB
//! refuses it.

use super::Cursor;

/// One entry of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry<'a> {
    /// `Put`, or `TimedPut` with its write time dropped.
    Put {
        /// Column family id.
        cf: u32,
        /// Key.
        key: &'a [u8],
        /// Value.
        value: &'a [u8],
        /// Whether it was a `TimedPut`.
        timed: bool,
    },
    /// `Delete` or `SingleDelete`.
    Delete {
        /// Column family id.
        cf: u32,
        /// Key.
        key: &'a [u8],
        /// Whether it was a `SingleDelete`.
        single: bool,
    },
    /// `DeleteRange`: `start` included, `end` excluded.
    DeleteRange {
        /// Column family id.
        cf: u32,
        /// First key deleted.
        start: &'a [u8],
        /// First key kept.
        end: &'a [u8],
    },
    /// `Merge`: an operand for a merge operator the trace does not name.
    Merge {
        /// Column family id.
        cf: u32,
        /// Key.
        key: &'a [u8],
        /// Operand.
        operand: &'a [u8],
    },
    /// Something with no engine-neutral meaning that changes data: a
    /// BlobDB index or a wide-column entity.
    Unportable {
        /// What it is.
        what: &'static str,
        /// Column family id.
        cf: u32,
    },
    /// Log data, a no-op or a two-phase-commit marker: no change to data.
    Marker {
        /// What it is.
        what: &'static str,
    },
}

/// Reads a batch's entries in order; errors name the offset in the batch.
pub struct Entries<'a> {
    c: Cursor<'a>,
    count: u32,
    found: u32,
    done: bool,
}

/// A batch that cannot be read: where (offset in the batch) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadBatch {
    /// Offset of the problem from the batch's first byte.
    pub at: usize,
    /// What was expected and what was found.
    pub what: String,
}

impl<'a> Entries<'a> {
    /// Reads the batch header.
    pub fn new(batch: &'a [u8]) -> Result<Self, BadBatch> {
        let mut c = Cursor::new(batch);
        let bad = |(at, w): (usize, String)| BadBatch {
            at,
            what: format!("WriteBatch header: {w}"),
        };
        c.fixed64().map_err(bad)?;
        let count = c.fixed32().map_err(bad)?;
        Ok(Entries {
            c,
            count,
            found: 0,
            done: false,
        })
    }

    /// Where reading stands: the offset of the next entry and the entries
    /// that count found so far, to [`Entries::resume`] from.
    pub fn position(&self) -> (usize, u32) {
        (self.c.pos, self.found)
    }

    /// Reads `batch` on from a [`Entries::position`] taken on the same bytes.
    pub fn resume(batch: &'a [u8], pos: usize, found: u32) -> Result<Self, BadBatch> {
        let mut e = Entries::new(batch)?;
        if pos < e.c.pos || pos > batch.len() {
            return Err(BadBatch {
                at: pos,
                what: format!(
                    "no entry can start at offset {pos} of a {}-byte batch",
                    batch.len()
                ),
            });
        }
        e.c.pos = pos;
        e.found = found;
        Ok(e)
    }

    /// The count the header declares.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The next entry; `None` at the end, once the count has been checked.
    pub fn next_entry(&mut self) -> Result<Option<Entry<'a>>, BadBatch> {
        if self.done {
            return Ok(None);
        }
        let at = self.c.pos;
        if at == self.c.b.len() {
            self.done = true;
            if self.found != self.count {
                return Err(BadBatch {
                    at,
                    what: format!(
                        "WriteBatch declares {} entries but holds {}",
                        self.count, self.found
                    ),
                });
            }
            return Ok(None);
        }
        let e = self.entry().map_err(|(at, w)| BadBatch { at, what: w })?;
        if !matches!(e, Entry::Marker { .. }) {
            self.found += 1;
        }
        Ok(Some(e))
    }

    /// Reads one entry.
    ///
    /// Long because one arm per group of RocksDB's entry tags, in
    /// `ReadRecordFromWriteBatch`'s order, so the two read side by side.
    fn entry(&mut self) -> Result<Entry<'a>, (usize, String)> {
        let at = self.c.pos;
        let tag = self.c.b[at];
        self.c.pos += 1;
        let c = &mut self.c;
        let b = c.b;
        // Tags with a column family carry it first; the others are family 0.
        let cf = match tag {
            0x4 | 0x5 | 0x6 | 0x8 | 0xE | 0x10 | 0x17 | 0x19 => c.varint32()?,
            _ => 0,
        };
        Ok(match tag {
            0x1 | 0x5 => {
                let k = c.prefixed()?;
                let v = c.prefixed()?;
                Entry::Put {
                    cf,
                    key: &b[k],
                    value: &b[v],
                    timed: false,
                }
            }
            0x18 | 0x19 => {
                let k = c.prefixed()?;
                let v = c.prefixed()?;
                if v.len() < 8 {
                    return Err((
                        at,
                        format!(
                            "a TimedPut value of {} bytes, shorter than its 8-byte write time",
                            v.len()
                        ),
                    ));
                }
                Entry::Put {
                    cf,
                    key: &b[k],
                    value: &b[v.start..v.end - 8],
                    timed: true,
                }
            }
            0x0 | 0x4 | 0x7 | 0x8 => {
                let k = c.prefixed()?;
                Entry::Delete {
                    cf,
                    key: &b[k],
                    single: matches!(tag, 0x7 | 0x8),
                }
            }
            0xF | 0xE => {
                let s = c.prefixed()?;
                let e = c.prefixed()?;
                Entry::DeleteRange {
                    cf,
                    start: &b[s],
                    end: &b[e],
                }
            }
            0x2 | 0x6 => {
                let k = c.prefixed()?;
                let v = c.prefixed()?;
                Entry::Merge {
                    cf,
                    key: &b[k],
                    operand: &b[v],
                }
            }
            0x10 | 0x11 | 0x16 | 0x17 => {
                c.prefixed()?;
                c.prefixed()?;
                let what = if tag < 0x16 {
                    "a BlobDB blob index"
                } else {
                    "a wide-column entity (PutEntity)"
                };
                Entry::Unportable { what, cf }
            }
            0x3 => {
                c.prefixed()?;
                Entry::Marker { what: "log data" }
            }
            0xD | 0x9 | 0x12 | 0x13 => Entry::Marker {
                what: if tag == 0xD {
                    "a no-op"
                } else {
                    "a begin-prepare marker"
                },
            },
            0xA..=0xC => {
                c.prefixed()?;
                Entry::Marker {
                    what: "a transaction marker",
                }
            }
            0x15 => {
                c.prefixed()?;
                c.prefixed()?;
                Entry::Marker {
                    what: "a transaction marker",
                }
            }
            t => return Err((at, format!("unknown WriteBatch entry tag 0x{t:x}"))),
        })
    }
}

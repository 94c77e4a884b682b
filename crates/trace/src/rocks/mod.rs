//! RocksDB query traces (`DB::StartTrace`, db_bench's `--trace_file`) read
//! as a stream, one record at a time, in constant memory.
//!
//! The layout is RocksDB's own (`trace_replay/trace_replay.{h,cc}`): every
//! record is a timestamp (fixed64, microseconds), a type byte, a payload
//! length (fixed32) and the payload. The first record is the header
//! (`feedcafedeadbeef\tTrace Version: 0.2\tRocksDB Version: ...`), the last
//! the end record `EndTrace` writes. Version 0.1 payloads are bare fields;
//! version 0.2 payloads start with a fixed64 bit map naming which fields
//! follow, in bit order. Integers are little-endian; strings are
//! varint32-length-prefixed. Every error names the byte offset in the file
//! and what was expected there.

pub mod batch;
mod fields;
pub mod import;
pub mod privacy;
pub mod survey;

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use crate::TraceError;
use crate::reader::read_full;
pub(crate) use fields::Cursor;
use fields::Fields;

/// First bytes of a trace's header payload.
pub const MAGIC: &[u8] = b"feedcafedeadbeef";
/// Largest record payload accepted: a bound so a corrupt length cannot
/// make the reader allocate gigabytes (RocksDB's own writes stay far below).
pub const MAX_RECORD: u32 = 256 << 20;
/// What a file that does not start with a trace header is told.
const NOT_A_TRACE: &str = "expected a header record starting \"feedcafedeadbeef\": this is not a RocksDB query trace (`DB::StartTrace`, db_bench --trace_file)";
/// Timestamp, type and payload length before every payload.
const META: usize = 13;

const T_BEGIN: u8 = 1;
const T_END: u8 = 2;
const T_WRITE: u8 = 3;
const T_GET: u8 = 4;
const T_SEEK: u8 = 5;
const T_SEEK_FOR_PREV: u8 = 6;
const T_MULTI_GET: u8 = 13;

/// Which way an iterator was positioned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeekKind {
    /// `Seek`: the first key at or after the target.
    Seek,
    /// `SeekForPrev`: the last key at or before the target.
    SeekForPrev,
}

/// One record of a trace, borrowing the reader's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record<'a> {
    /// `DB::Write` (and Put, Delete, Merge, which RocksDB traces as one-entry
    /// batches): the WriteBatch's bytes, read by [`batch::Entries`].
    Write {
        /// Microseconds, RocksDB's clock.
        ts: u64,
        /// The batch, header included.
        batch: &'a [u8],
        /// Its byte offset in the file.
        at: u64,
    },
    /// `DB::Get`.
    Get {
        /// Microseconds.
        ts: u64,
        /// Column family id.
        cf: u32,
        /// Key.
        key: &'a [u8],
    },
    /// An iterator's `Seek` or `SeekForPrev`, with the read options' bounds
    /// (empty when unset). The steps after it (`Next`) are not traced.
    Seek {
        /// Microseconds.
        ts: u64,
        /// Which seek.
        kind: SeekKind,
        /// Column family id.
        cf: u32,
        /// Target key.
        key: &'a [u8],
        /// `iterate_lower_bound`, empty when unset.
        lower: &'a [u8],
        /// `iterate_upper_bound`, empty when unset.
        upper: &'a [u8],
    },
    /// `DB::MultiGet`: its keys, each with a column family.
    MultiGet {
        /// Microseconds.
        ts: u64,
        /// The keys.
        keys: MultiGetKeys<'a>,
    },
}

/// The keys of a MultiGet record, checked when it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MultiGetKeys<'a> {
    payload: &'a [u8],
    spans: &'a [(u32, usize, usize)],
}

impl<'a> MultiGetKeys<'a> {
    /// How many keys.
    pub fn len(&self) -> usize {
        self.spans.len()
    }
    /// Whether there are none (never, for a record the reader returned).
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
    /// Column family and key of each, in the record's order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &'a [u8])> + '_ {
        let p = self.payload;
        self.spans.iter().map(move |&(cf, a, b)| (cf, &p[a..b]))
    }
}

/// Reads a RocksDB query trace as a stream.
pub struct RocksTraceReader<R: Read = BufReader<File>> {
    input: R,
    path: String,
    /// Byte offset of the next record.
    offset: u64,
    buf: Vec<u8>,
    spans: Vec<(u32, usize, usize)>,
    minor: u32,
    rocksdb: String,
    start_ts: u64,
    records: u64,
    done: bool,
    allow_missing_end: bool,
    /// The record read last: time, type, payload offset in the file, fields.
    cur: Option<(u64, u8, u64, Fields)>,
}

impl RocksTraceReader {
    /// Opens `path` and reads its header record.
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        let (file, p) = crate::reader::open_buffered(path)?;
        RocksTraceReader::new(file, p)
    }
}

impl<R: Read> RocksTraceReader<R> {
    /// Reads the header record from `input`; `name` names it in errors.
    pub fn new(input: R, name: String) -> Result<Self, TraceError> {
        let mut r = RocksTraceReader {
            input,
            path: name,
            offset: 0,
            buf: Vec::new(),
            spans: Vec::new(),
            minor: 0,
            rocksdb: String::new(),
            start_ts: 0,
            records: 0,
            done: false,
            allow_missing_end: false,
            cur: None,
        };
        let Some((ts, kind)) = r.read_raw()? else {
            return Err(r.err(
                0,
                "expected a RocksDB trace header, found an empty file".into(),
            ));
        };
        if kind != T_BEGIN || !r.buf.starts_with(MAGIC) {
            return Err(r.err(0, NOT_A_TRACE.into()));
        }
        let text = String::from_utf8_lossy(&r.buf).into_owned();
        let mut fields = text.split('\t').skip(1);
        let version = fields
            .next()
            .and_then(|f| f.strip_prefix("Trace Version: "))
            .map(str::to_string);
        let rocksdb = fields
            .next()
            .and_then(|f| f.strip_prefix("RocksDB Version: "))
            .map(str::to_string);
        let (Some(version), Some(rocksdb)) = (version, rocksdb) else {
            return Err(r.err(
                META as u64,
                format!("expected \"Trace Version: X.Y\" and \"RocksDB Version: X.Y\" after the magic, found {text:?}"),
            ));
        };
        r.minor = match version.trim() {
            "0.1" => 1,
            "0.2" => 2,
            v => {
                return Err(r.err(
                    META as u64,
                    format!(
                        "trace format version {v}; this ledgerbench reads versions 0.1 and 0.2"
                    ),
                ));
            }
        };
        r.rocksdb = rocksdb.trim().to_string();
        r.start_ts = ts;
        Ok(r)
    }

    /// Accepts a trace that ends without its end record (the traced process
    /// died before `EndTrace`), at a record boundary only.
    pub fn allow_missing_end(mut self, yes: bool) -> Self {
        self.allow_missing_end = yes;
        self
    }

    /// The trace format version, "0.1" or "0.2".
    pub fn format_version(&self) -> &'static str {
        if self.minor == 1 { "0.1" } else { "0.2" }
    }

    /// The version of the RocksDB that wrote it, as its header says.
    pub fn rocksdb_version(&self) -> &str {
        &self.rocksdb
    }

    /// The header's timestamp: when tracing began, in microseconds.
    pub fn start_micros(&self) -> u64 {
        self.start_ts
    }

    /// Bytes read so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Records read so far, the header and end records excluded.
    pub fn records(&self) -> u64 {
        self.records
    }

    fn err(&self, offset: u64, what: String) -> TraceError {
        TraceError::Format {
            path: self.path.clone(),
            offset,
            what,
        }
    }

    fn io(&self, source: std::io::Error) -> TraceError {
        TraceError::Io {
            path: self.path.clone(),
            source,
        }
    }

    /// Reads one record's timestamp and type, its payload into `buf`;
    /// `None` at a clean end of input.
    fn read_raw(&mut self) -> Result<Option<(u64, u8)>, TraceError> {
        let at = self.offset;
        let mut meta = [0u8; META];
        let got = read_full(&mut self.input, &mut meta).map_err(|e| self.io(e))?;
        if got == 0 {
            return Ok(None);
        }
        if got < META {
            return Err(self.err(
                at,
                format!("expected a {META}-byte record head (timestamp, type, length), found {got} bytes: the trace is truncated"),
            ));
        }
        let ts = u64::from_le_bytes(meta[..8].try_into().unwrap_or_default());
        let kind = meta[8];
        let len = u32::from_le_bytes(meta[9..].try_into().unwrap_or_default());
        // The header is a short line of text: a first record that is not
        // one is another kind of file, whatever its length field says.
        if at == 0 && (kind != T_BEGIN || len > 1 << 16) {
            return Err(self.err(0, NOT_A_TRACE.into()));
        }
        if len > MAX_RECORD {
            return Err(self.err(
                at + 9,
                format!("record payload of {len} bytes exceeds the {MAX_RECORD}-byte limit: the trace is corrupt"),
            ));
        }
        // Grown as bytes arrive, not to the length field: a corrupt length
        // in a short file must not allocate and zero hundreds of MiB.
        self.buf.clear();
        let got = (&mut self.input)
            .take(u64::from(len))
            .read_to_end(&mut self.buf)
            .map_err(|e| self.io(e))?;
        if got < len as usize {
            return Err(self.err(
                at + META as u64,
                format!("expected a {len}-byte payload, found {got} bytes: the trace is truncated"),
            ));
        }
        self.offset += META as u64 + u64::from(len);
        Ok(Some((ts, kind)))
    }

    /// The next record; `None` after the end record.
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, TraceError> {
        Ok(if self.advance()? {
            self.current()
        } else {
            None
        })
    }

    /// Reads the next record, which [`RocksTraceReader::current`] then
    /// gives; false after the end record. (Two steps so a caller can move
    /// on to another file when one ends without holding a borrow.)
    pub fn advance(&mut self) -> Result<bool, TraceError> {
        self.cur = None;
        if self.done {
            return Ok(false);
        }
        let at = self.offset;
        let Some((ts, kind)) = self.read_raw()? else {
            if self.allow_missing_end {
                self.done = true;
                return Ok(false);
            }
            return Err(self.err(
                at,
                format!("expected another record or the end record after {} records, found the end of the file: the trace was cut short (a complete trace ends with the record `EndTrace` writes; import a cut trace with --allow-missing-end)", self.records),
            ));
        };
        let body = at + META as u64;
        match kind {
            T_END => {
                self.done = true;
                let mut probe = [0u8; 1];
                if read_full(&mut self.input, &mut probe).map_err(|e| self.io(e))? != 0 {
                    return Err(self.err(
                        self.offset,
                        "expected the end of the file after the end record".into(),
                    ));
                }
                return Ok(false);
            }
            T_WRITE | T_GET | T_SEEK | T_SEEK_FOR_PREV => {}
            T_MULTI_GET if self.minor >= 2 => {}
            T_MULTI_GET => {
                return Err(self.err(
                    at + 8,
                    "a MultiGet record in a version 0.1 trace, which has none".into(),
                ));
            }
            T_BEGIN => return Err(self.err(at + 8, "a second header record".into())),
            t => {
                return Err(self.err(
                    at + 8,
                    format!("unknown record type {t}: a query trace has types 2 to 6 and 13 (a block cache or IO trace is another kind of file)"),
                ));
            }
        }
        let parsed = match kind {
            T_WRITE => self.write_fields(),
            T_GET => self.get_fields(),
            T_MULTI_GET => self.multiget_fields(),
            _ => self.seek_fields(),
        };
        let f = parsed.map_err(|(off, what)| self.err(body + off as u64, what))?;
        self.records += 1;
        self.cur = Some((ts, kind, body, f));
        Ok(true)
    }

    /// The record [`RocksTraceReader::advance`] read; `None` before the
    /// first and after the end.
    pub fn current(&self) -> Option<Record<'_>> {
        let (ts, kind, body, f) = self.cur.as_ref()?;
        let (ts, kind, body) = (*ts, *kind, *body);
        let b = &self.buf;
        Some(match kind {
            T_WRITE => Record::Write {
                ts,
                batch: &b[f[0].clone()],
                at: body + f[0].start as u64,
            },
            T_GET => Record::Get {
                ts,
                cf: f.cf,
                key: &b[f[1].clone()],
            },
            T_MULTI_GET => Record::MultiGet {
                ts,
                keys: MultiGetKeys {
                    payload: b,
                    spans: &self.spans,
                },
            },
            _ => Record::Seek {
                ts,
                kind: if kind == T_SEEK {
                    SeekKind::Seek
                } else {
                    SeekKind::SeekForPrev
                },
                cf: f.cf,
                key: &b[f[1].clone()],
                lower: &b[f[2].clone()],
                upper: &b[f[3].clone()],
            },
        })
    }
}

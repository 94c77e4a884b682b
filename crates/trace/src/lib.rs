//! The kvbench trace: a workload at the key-value level, engine-neutral,
//! written and read as a stream in constant memory.
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! file   := magic "KVBTRACE" | version u16 | frame* | end frame
//! frame  := payload length u32 | CRC-32 of payload u32 | payload
//! payload:= tag u8 | fields
//! ```
//!
//! The first frame is the header (JSON: workload, seed, store names). Keys
//! and literal values are stored as bytes; a generated value is stored as
//! its length and seed and regenerated on reading, so a synthetic workload's
//! trace stays small. The end frame carries the frame count: a file without
//! it was cut short. Every error names the byte offset and what was expected.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use kvbench_workload::rng::{Rng, mix};
use serde::{Deserialize, Serialize};

/// First bytes of every trace.
pub const MAGIC: &[u8; 8] = b"KVBTRACE";
/// Format version this crate writes and reads.
pub const VERSION: u16 = 1;
/// Largest payload accepted: a bound so a corrupt length cannot make the
/// reader allocate gigabytes.
pub const MAX_FRAME: u32 = 256 << 20;

const TAG_HEADER: u8 = 0;
const TAG_PUT: u8 = 1;
const TAG_DELETE: u8 = 2;
const TAG_GET: u8 = 3;
const TAG_COMMIT: u8 = 4;
const TAG_FLUSH: u8 = 5;
const TAG_COMPACT: u8 = 6;
const TAG_MARK: u8 = 7;
const TAG_END: u8 = 0xff;

const VALUE_BYTES: u8 = 0;
const VALUE_GENERATED: u8 = 1;
const EXPECT_UNCHECKED: u8 = 0;
const EXPECT_ABSENT: u8 = 1;
const EXPECT_VALUE: u8 = 2;
const ALL_STORES: u8 = 0xff;

/// What a trace describes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Workload that produced it (`stellar`, `ycsb-a`, `galexie`, ...).
    pub workload: String,
    /// Seed of its generators (0 for recorded real data).
    pub seed: u64,
    /// Store names; operations refer to stores by index into this list.
    pub stores: Vec<String>,
    /// Free-form description of the source: config, files, versions.
    #[serde(default)]
    pub source: serde_json::Value,
}

/// A value in a put.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueRef<'a> {
    /// The bytes themselves.
    Bytes(&'a [u8]),
    /// `len` bytes regenerated from `seed` (see [`generate`]).
    Generated {
        /// Length in bytes.
        len: u32,
        /// Seed of the bytes.
        seed: u64,
    },
}

/// What a get must return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Not checked.
    Unchecked,
    /// The key must be absent.
    Absent,
    /// A value of this length and [`value_hash`].
    Value {
        /// Length in bytes.
        len: u32,
        /// Its [`value_hash`].
        hash: u64,
    },
}

impl Expect {
    /// The expectation that `value` is returned.
    pub fn of(value: &[u8]) -> Self {
        Expect::Value {
            len: value.len() as u32,
            hash: value_hash(value),
        }
    }

    /// Whether `got` (None: absent) meets the expectation.
    pub fn check(&self, got: Option<&[u8]>) -> bool {
        match (self, got) {
            (Expect::Unchecked, _) => true,
            (Expect::Absent, None) => true,
            (Expect::Value { len, hash }, Some(v)) => {
                v.len() == *len as usize && value_hash(v) == *hash
            }
            _ => false,
        }
    }
}

/// One operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op<'a> {
    /// Add a put to the store's pending batch.
    Put {
        /// Store index.
        store: u8,
        /// Key.
        key: &'a [u8],
        /// Value.
        value: ValueRef<'a>,
    },
    /// Add a delete to the store's pending batch.
    Delete {
        /// Store index.
        store: u8,
        /// Key.
        key: &'a [u8],
    },
    /// Read a key now.
    Get {
        /// Store index.
        store: u8,
        /// Key.
        key: &'a [u8],
        /// What it must return.
        expect: Expect,
    },
    /// Commit every store's pending batch, each atomically.
    Commit {
        /// Wait for stable storage.
        sync: bool,
    },
    /// Flush one store (`Some`) or all.
    Flush {
        /// Store index, or all.
        store: Option<u8>,
    },
    /// Compact one store's whole key range, or all stores'.
    Compact {
        /// Store index, or all.
        store: Option<u8>,
    },
    /// End of a segment (a batch, a phase): meters take their readings here.
    Mark {
        /// What ended.
        label: &'a str,
    },
}

/// A trace that could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file is not a trace this version reads, or is damaged.
    #[error("{path}: at byte offset {offset}: {what}")]
    Format {
        /// The file.
        path: String,
        /// Where reading stopped.
        offset: u64,
        /// What was expected and what was found.
        what: String,
    },
    /// The OS refused a read or write.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The generator or importer behind an [`OpSource`] failed.
    #[error("{0}")]
    Source(String),
    /// A value does not fit the format (a store index past 254, a frame past [`MAX_FRAME`]).
    #[error("cannot encode: {0}")]
    Encode(String),
}

/// 64-bit hash of a value, for get expectations (not cryptographic).
pub fn value_hash(v: &[u8]) -> u64 {
    let mut h = mix(v.len() as u64);
    for chunk in v.chunks(8) {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        h = mix(h ^ u64::from_le_bytes(w));
    }
    h
}

/// Fills `out` with the `len` bytes a generated value of `seed` stands for.
pub fn generate(len: u32, seed: u64, out: &mut Vec<u8>) {
    out.clear();
    Rng::new(seed).fill(out, len as usize);
}

fn put_bytes(buf: &mut Vec<u8>, b: &[u8]) {
    buf.extend_from_slice(&(b.len() as u32).to_le_bytes());
    buf.extend_from_slice(b);
}

fn store_byte(s: Option<u8>) -> u8 {
    s.unwrap_or(ALL_STORES)
}

/// Writes a trace as a stream.
pub struct TraceWriter {
    out: BufWriter<File>,
    path: String,
    buf: Vec<u8>,
    frames: u64,
    stores: usize,
}

impl TraceWriter {
    /// Creates `path` (refusing to overwrite an existing file) and writes the header.
    pub fn create(path: &Path, header: &Header) -> Result<Self, TraceError> {
        let p = path.display().to_string();
        let io = |source| TraceError::Io {
            path: p.clone(),
            source,
        };
        if header.stores.is_empty() || header.stores.len() > 254 {
            return Err(TraceError::Encode(format!(
                "a trace has 1 to 254 stores, not {}",
                header.stores.len()
            )));
        }
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(io)?;
        let mut w = TraceWriter {
            out: BufWriter::with_capacity(1 << 20, file),
            path: p.clone(),
            buf: Vec::new(),
            frames: 0,
            stores: header.stores.len(),
        };
        w.out.write_all(MAGIC).map_err(io)?;
        w.out.write_all(&VERSION.to_le_bytes()).map_err(io)?;
        w.buf.push(TAG_HEADER);
        let json = serde_json::to_vec(header).map_err(|e| TraceError::Encode(e.to_string()))?;
        w.buf.extend_from_slice(&json);
        w.frame()?;
        Ok(w)
    }

    fn frame(&mut self) -> Result<(), TraceError> {
        let io = |source| TraceError::Io {
            path: self.path.clone(),
            source,
        };
        let len = u32::try_from(self.buf.len())
            .ok()
            .filter(|l| *l <= MAX_FRAME)
            .ok_or_else(|| TraceError::Encode(format!("frame of {} bytes", self.buf.len())))?;
        self.out.write_all(&len.to_le_bytes()).map_err(io)?;
        self.out
            .write_all(&crc32fast::hash(&self.buf).to_le_bytes())
            .map_err(io)?;
        self.out.write_all(&self.buf).map_err(io)?;
        self.buf.clear();
        self.frames += 1;
        Ok(())
    }

    fn check_store(&self, s: u8) -> Result<u8, TraceError> {
        if (s as usize) < self.stores {
            Ok(s)
        } else {
            Err(TraceError::Encode(format!(
                "store index {s} but the header names {} stores",
                self.stores
            )))
        }
    }

    /// Appends one operation.
    pub fn write(&mut self, op: &Op<'_>) -> Result<(), TraceError> {
        match *op {
            Op::Put { store, key, value } => {
                self.buf.push(TAG_PUT);
                self.buf.push(self.check_store(store)?);
                put_bytes(&mut self.buf, key);
                match value {
                    ValueRef::Bytes(v) => {
                        self.buf.push(VALUE_BYTES);
                        put_bytes(&mut self.buf, v);
                    }
                    ValueRef::Generated { len, seed } => {
                        self.buf.push(VALUE_GENERATED);
                        self.buf.extend_from_slice(&len.to_le_bytes());
                        self.buf.extend_from_slice(&seed.to_le_bytes());
                    }
                }
            }
            Op::Delete { store, key } => {
                self.buf.push(TAG_DELETE);
                self.buf.push(self.check_store(store)?);
                put_bytes(&mut self.buf, key);
            }
            Op::Get { store, key, expect } => {
                self.buf.push(TAG_GET);
                self.buf.push(self.check_store(store)?);
                put_bytes(&mut self.buf, key);
                match expect {
                    Expect::Unchecked => self.buf.push(EXPECT_UNCHECKED),
                    Expect::Absent => self.buf.push(EXPECT_ABSENT),
                    Expect::Value { len, hash } => {
                        self.buf.push(EXPECT_VALUE);
                        self.buf.extend_from_slice(&len.to_le_bytes());
                        self.buf.extend_from_slice(&hash.to_le_bytes());
                    }
                }
            }
            Op::Commit { sync } => {
                self.buf.push(TAG_COMMIT);
                self.buf.push(u8::from(sync));
            }
            Op::Flush { store } => {
                self.buf.push(TAG_FLUSH);
                if let Some(s) = store {
                    self.check_store(s)?;
                }
                self.buf.push(store_byte(store));
            }
            Op::Compact { store } => {
                self.buf.push(TAG_COMPACT);
                if let Some(s) = store {
                    self.check_store(s)?;
                }
                self.buf.push(store_byte(store));
            }
            Op::Mark { label } => {
                self.buf.push(TAG_MARK);
                self.buf.extend_from_slice(label.as_bytes());
            }
        }
        self.frame()
    }

    /// Writes the end frame, flushes and syncs; returns the frames written.
    pub fn finish(mut self) -> Result<u64, TraceError> {
        let count = self.frames;
        self.buf.push(TAG_END);
        self.buf.extend_from_slice(&count.to_le_bytes());
        self.frame()?;
        let path = self.path.clone();
        let file = self.out.into_inner().map_err(|e| TraceError::Io {
            path: path.clone(),
            source: e.into_error(),
        })?;
        file.sync_all()
            .map_err(|source| TraceError::Io { path, source })?;
        Ok(count + 1)
    }
}

/// Reads a trace as a stream, one operation at a time.
pub struct TraceReader<R: Read = BufReader<File>> {
    input: R,
    path: String,
    header: Header,
    offset: u64,
    frames: u64,
    buf: Vec<u8>,
    done: bool,
}

impl TraceReader {
    /// Opens `path` and reads its header.
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        let p = path.display().to_string();
        let file = File::open(path).map_err(|source| TraceError::Io {
            path: p.clone(),
            source,
        })?;
        TraceReader::new(BufReader::with_capacity(1 << 20, file), p)
    }
}

impl<R: Read> TraceReader<R> {
    /// Reads the header from `input`; `name` names it in errors.
    pub fn new(mut input: R, name: String) -> Result<Self, TraceError> {
        let mut head = [0u8; 10];
        let got = read_full(&mut input, &mut head).map_err(|source| TraceError::Io {
            path: name.clone(),
            source,
        })?;
        let bad = |offset: u64, what: String| TraceError::Format {
            path: name.clone(),
            offset,
            what,
        };
        if got < 8 || &head[..8] != MAGIC {
            return Err(bad(
                0,
                "expected the magic bytes \"KVBTRACE\": this is not a kvbench trace".into(),
            ));
        }
        if got < 10 {
            return Err(bad(
                8,
                "expected the format version, found the end of the file".into(),
            ));
        }
        let version = u16::from_le_bytes([head[8], head[9]]);
        if version != VERSION {
            return Err(bad(
                8,
                format!("format version {version}; this kvbench reads version {VERSION}"),
            ));
        }
        let mut r = TraceReader {
            input,
            path: name,
            header: Header {
                workload: String::new(),
                seed: 0,
                stores: Vec::new(),
                source: serde_json::Value::Null,
            },
            offset: 10,
            frames: 0,
            buf: Vec::new(),
            done: false,
        };
        let at = r.offset;
        if !r.read_frame()? {
            return Err(r.err(
                at,
                "expected the header frame, found the end of the file".into(),
            ));
        }
        if r.buf.first() != Some(&TAG_HEADER) {
            return Err(r.err(at, "expected the header frame first".into()));
        }
        r.header = serde_json::from_slice(&r.buf[1..])
            .map_err(|e| r.err(at, format!("header is not valid JSON: {e}")))?;
        if r.header.stores.is_empty() || r.header.stores.len() > 254 {
            return Err(r.err(
                at,
                format!(
                    "header names {} stores; 1 to 254 expected",
                    r.header.stores.len()
                ),
            ));
        }
        Ok(r)
    }

    /// The trace's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    fn err(&self, offset: u64, what: String) -> TraceError {
        TraceError::Format {
            path: self.path.clone(),
            offset,
            what,
        }
    }

    /// Reads one frame into `buf`; false at a clean end of input.
    fn read_frame(&mut self) -> Result<bool, TraceError> {
        let at = self.offset;
        let mut head = [0u8; 8];
        let got = read_full(&mut self.input, &mut head).map_err(|source| TraceError::Io {
            path: self.path.clone(),
            source,
        })?;
        if got == 0 {
            return Ok(false);
        }
        if got < 8 {
            return Err(self.err(
                at,
                format!("expected an 8-byte frame head, found {got} bytes: the file is truncated"),
            ));
        }
        let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
        let crc = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
        if len > MAX_FRAME {
            return Err(self.err(
                at,
                format!(
                    "frame length {len} exceeds the {MAX_FRAME}-byte limit: the file is corrupt"
                ),
            ));
        }
        self.buf.resize(len as usize, 0);
        let got = read_full(&mut self.input, &mut self.buf).map_err(|source| TraceError::Io {
            path: self.path.clone(),
            source,
        })?;
        if got < len as usize {
            return Err(self.err(
                at + 8,
                format!("expected a {len}-byte frame, found {got} bytes: the file is truncated"),
            ));
        }
        if crc32fast::hash(&self.buf) != crc {
            return Err(self.err(at, "frame checksum mismatch: the file is corrupt".into()));
        }
        self.offset += 8 + u64::from(len);
        self.frames += 1;
        Ok(true)
    }

    /// The next operation; `None` after the end frame.
    pub fn next_op(&mut self) -> Result<Option<Op<'_>>, TraceError> {
        if self.done {
            return Ok(None);
        }
        let at = self.offset;
        if !self.read_frame()? {
            return Err(self.err(at, format!("expected the end frame after {} frames, found the end of the file: the trace was cut short", self.frames)));
        }
        let stores = self.header.stores.len();
        let mut c = Cursor {
            b: &self.buf,
            pos: 0,
            at: at + 8,
        };
        let tag = c
            .u8()
            .map_err(|w| self.err(at + 8, format!("empty frame: {w}")))?;
        let store = |c: &mut Cursor<'_>| -> Result<u8, String> {
            let s = c.u8()?;
            if (s as usize) < stores {
                Ok(s)
            } else {
                Err(format!(
                    "store index {s}, but the header names {stores} stores"
                ))
            }
        };
        let any_store = |c: &mut Cursor<'_>| -> Result<Option<u8>, String> {
            let s = c.u8()?;
            if s == ALL_STORES {
                Ok(None)
            } else if (s as usize) < stores {
                Ok(Some(s))
            } else {
                Err(format!(
                    "store index {s}, but the header names {stores} stores"
                ))
            }
        };
        let parsed: Result<ParsedOp, String> = (|| {
            Ok(match tag {
                TAG_PUT => {
                    let s = store(&mut c)?;
                    let key = c.bytes()?;
                    let value = match c.u8()? {
                        VALUE_BYTES => ParsedValue::Bytes(c.bytes()?),
                        VALUE_GENERATED => ParsedValue::Generated(c.u32()?, c.u64()?),
                        v => return Err(format!("expected value kind 0 or 1, found {v}")),
                    };
                    ParsedOp::Put(s, key, value)
                }
                TAG_DELETE => ParsedOp::Delete(store(&mut c)?, c.bytes()?),
                TAG_GET => {
                    let s = store(&mut c)?;
                    let key = c.bytes()?;
                    let expect = match c.u8()? {
                        EXPECT_UNCHECKED => Expect::Unchecked,
                        EXPECT_ABSENT => Expect::Absent,
                        EXPECT_VALUE => Expect::Value {
                            len: c.u32()?,
                            hash: c.u64()?,
                        },
                        v => return Err(format!("expected expectation kind 0 to 2, found {v}")),
                    };
                    ParsedOp::Get(s, key, expect)
                }
                TAG_COMMIT => ParsedOp::Commit(match c.u8()? {
                    0 => false,
                    1 => true,
                    v => return Err(format!("expected sync flag 0 or 1, found {v}")),
                }),
                TAG_FLUSH => ParsedOp::Flush(any_store(&mut c)?),
                TAG_COMPACT => ParsedOp::Compact(any_store(&mut c)?),
                TAG_MARK => {
                    let r = c.rest();
                    std::str::from_utf8(&c.b[r.clone()])
                        .map_err(|_| "expected a UTF-8 mark label".to_string())?;
                    ParsedOp::Mark(r)
                }
                TAG_END => {
                    let n = c.u64()?;
                    if n + 1 != self.frames {
                        return Err(format!(
                            "end frame counts {n} frames before it, but {} were read",
                            self.frames - 1
                        ));
                    }
                    ParsedOp::End
                }
                TAG_HEADER => return Err("a second header frame".into()),
                t => return Err(format!("expected an operation tag, found {t}")),
            })
        })();
        let op = parsed.map_err(|what| self.err(c.at + c.pos as u64, what))?;
        if c.pos != self.buf.len() && !matches!(op, ParsedOp::Mark(_)) {
            return Err(self.err(
                at,
                format!("{} bytes left over in the frame", self.buf.len() - c.pos),
            ));
        }
        Ok(Some(match op {
            ParsedOp::Put(store, k, v) => {
                let value = match v {
                    ParsedValue::Bytes(r) => ValueRef::Bytes(&self.buf[r]),
                    ParsedValue::Generated(len, seed) => ValueRef::Generated { len, seed },
                };
                Op::Put {
                    store,
                    key: &self.buf[k],
                    value,
                }
            }
            ParsedOp::Delete(store, k) => Op::Delete {
                store,
                key: &self.buf[k],
            },
            ParsedOp::Get(store, k, expect) => Op::Get {
                store,
                key: &self.buf[k],
                expect,
            },
            ParsedOp::Commit(sync) => Op::Commit { sync },
            ParsedOp::Flush(store) => Op::Flush { store },
            ParsedOp::Compact(store) => Op::Compact { store },
            ParsedOp::Mark(r) => Op::Mark {
                label: std::str::from_utf8(&self.buf[r]).unwrap_or(""),
            },
            ParsedOp::End => {
                self.done = true;
                // Anything after the end frame means the file was damaged or appended to.
                let mut probe = [0u8; 1];
                let extra =
                    read_full(&mut self.input, &mut probe).map_err(|source| TraceError::Io {
                        path: self.path.clone(),
                        source,
                    })?;
                if extra != 0 {
                    return Err(self.err(
                        self.offset,
                        "expected the end of the file after the end frame".into(),
                    ));
                }
                return Ok(None);
            }
        }))
    }
}

/// Where operations come from: a trace file or a generator.
pub trait OpSource {
    /// What the operations describe (workload, seed, stores).
    fn header(&self) -> &Header;
    /// The next operation; `None` at the end.
    fn next_op(&mut self) -> Result<Option<Op<'_>>, TraceError>;
}

impl<R: Read> OpSource for TraceReader<R> {
    fn header(&self) -> &Header {
        TraceReader::header(self)
    }
    fn next_op(&mut self) -> Result<Option<Op<'_>>, TraceError> {
        TraceReader::next_op(self)
    }
}

/// A put's value as bytes: literal bytes as they are, a generated value
/// regenerated into `scratch`.
pub fn expand<'v>(value: ValueRef<'v>, scratch: &'v mut Vec<u8>) -> &'v [u8] {
    match value {
        ValueRef::Bytes(b) => b,
        ValueRef::Generated { len, seed } => {
            generate(len, seed, scratch);
            scratch
        }
    }
}

enum ParsedValue {
    Bytes(std::ops::Range<usize>),
    Generated(u32, u64),
}

enum ParsedOp {
    Put(u8, std::ops::Range<usize>, ParsedValue),
    Delete(u8, std::ops::Range<usize>),
    Get(u8, std::ops::Range<usize>, Expect),
    Commit(bool),
    Flush(Option<u8>),
    Compact(Option<u8>),
    Mark(std::ops::Range<usize>),
    End,
}

struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
    at: u64,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<std::ops::Range<usize>, String> {
        if self.b.len() - self.pos < n {
            return Err(format!(
                "expected {n} more bytes in the frame, found {}",
                self.b.len() - self.pos
            ));
        }
        let r = self.pos..self.pos + n;
        self.pos += n;
        Ok(r)
    }
    fn u8(&mut self) -> Result<u8, String> {
        let r = self.take(1)?;
        Ok(self.b[r.start])
    }
    fn u32(&mut self) -> Result<u32, String> {
        let r = self.take(4)?;
        let mut a = [0u8; 4];
        a.copy_from_slice(&self.b[r]);
        Ok(u32::from_le_bytes(a))
    }
    fn u64(&mut self) -> Result<u64, String> {
        let r = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(&self.b[r]);
        Ok(u64::from_le_bytes(a))
    }
    fn bytes(&mut self) -> Result<std::ops::Range<usize>, String> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn rest(&mut self) -> std::ops::Range<usize> {
        let r = self.pos..self.b.len();
        self.pos = self.b.len();
        r
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

//! Reading a trace as a stream: every frame checked, every error with the
//! byte offset and what was expected.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use crate::*;

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
        let (file, p) = open_buffered(path)?;
        TraceReader::new(file, p)
    }
}

/// `path` opened for reading with a 1 MiB buffer, and its name for errors.
pub(crate) fn open_buffered(path: &Path) -> Result<(BufReader<File>, String), TraceError> {
    let p = path.display().to_string();
    let file = File::open(path).map_err(|source| TraceError::Io {
        path: p.clone(),
        source,
    })?;
    Ok((BufReader::with_capacity(1 << 20, file), p))
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
                "expected the magic bytes \"KVBTRACE\": this is not a ledgerbench trace".into(),
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
                format!("format version {version}; this ledgerbench reads version {VERSION}"),
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
        // Grown as bytes arrive, not to the length field: a corrupt length
        // in a short file must not allocate and zero up to the frame limit.
        self.buf.clear();
        let got = (&mut self.input)
            .take(u64::from(len))
            .read_to_end(&mut self.buf)
            .map_err(|source| TraceError::Io {
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
    ///
    /// Long because one arm per frame kind of the trace format, in the format's order; split, the format would be read in pieces.
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
                TAG_DELETE_RANGE => {
                    let s = store(&mut c)?;
                    let start = c.bytes()?;
                    ParsedOp::DeleteRange(s, start, c.bytes()?)
                }
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
                        EXPECT_PRESENT => Expect::Present,
                        EXPECT_GENERATED => Expect::Generated {
                            len: c.u32()?,
                            seed: c.u64()?,
                        },
                        v => return Err(format!("expected expectation kind 0 to 4, found {v}")),
                    };
                    ParsedOp::Get(s, key, expect)
                }
                TAG_SCAN | TAG_SCAN_END => {
                    let s = store(&mut c)?;
                    let start = c.bytes()?;
                    let end = if tag == TAG_SCAN_END {
                        c.bytes()?
                    } else {
                        0..0
                    };
                    ParsedOp::Scan(s, start, end, c.u32()?)
                }
                TAG_AT => ParsedOp::At(c.u64()?),
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
            ParsedOp::DeleteRange(store, s, e) => Op::DeleteRange {
                store,
                start: &self.buf[s],
                end: &self.buf[e],
            },
            ParsedOp::Get(store, k, expect) => Op::Get {
                store,
                key: &self.buf[k],
                expect,
            },
            ParsedOp::Scan(store, r, e, limit) => Op::Scan {
                store,
                start: &self.buf[r],
                end: &self.buf[e],
                limit,
            },
            ParsedOp::At(micros) => Op::At { micros },
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

enum ParsedValue {
    Bytes(std::ops::Range<usize>),
    Generated(u32, u64),
}

enum ParsedOp {
    Put(u8, std::ops::Range<usize>, ParsedValue),
    Delete(u8, std::ops::Range<usize>),
    DeleteRange(u8, std::ops::Range<usize>, std::ops::Range<usize>),
    Get(u8, std::ops::Range<usize>, Expect),
    Scan(u8, std::ops::Range<usize>, std::ops::Range<usize>, u32),
    At(u64),
    Commit(bool),
    Flush(Option<u8>),
    Compact(Option<u8>),
    Mark(std::ops::Range<usize>),
    End,
}

/// Reads one frame's fields. Its errors are text on purpose: each is the
/// `what` of the [`TraceError::Format`] the reader wraps it in, with the
/// file and the offset it has and the cursor does not.
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
pub(crate) fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
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

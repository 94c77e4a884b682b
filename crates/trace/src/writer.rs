//! Writing a trace: frames appended to a buffered file, each with its CRC.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::*;

/// A put's value: its bytes, or the length and seed it is made from.
fn put_value(buf: &mut Vec<u8>, value: ValueRef<'_>) {
    match value {
        ValueRef::Bytes(v) => {
            buf.push(VALUE_BYTES);
            put_bytes(buf, v);
        }
        ValueRef::Generated { len, seed } => {
            buf.push(VALUE_GENERATED);
            buf.extend_from_slice(&len.to_le_bytes());
            buf.extend_from_slice(&seed.to_le_bytes());
        }
    }
}

/// What a GET expects to read.
fn put_expect(buf: &mut Vec<u8>, expect: Expect) {
    match expect {
        Expect::Unchecked => buf.push(EXPECT_UNCHECKED),
        Expect::Absent => buf.push(EXPECT_ABSENT),
        Expect::Value { len, hash } => {
            buf.push(EXPECT_VALUE);
            buf.extend_from_slice(&len.to_le_bytes());
            buf.extend_from_slice(&hash.to_le_bytes());
        }
        Expect::Present => buf.push(EXPECT_PRESENT),
        Expect::Generated { len, seed } => {
            buf.push(EXPECT_GENERATED);
            buf.extend_from_slice(&len.to_le_bytes());
            buf.extend_from_slice(&seed.to_le_bytes());
        }
    }
}

fn put_bytes(buf: &mut Vec<u8>, b: &[u8]) {
    buf.extend_from_slice(&(b.len() as u32).to_le_bytes());
    buf.extend_from_slice(b);
}

fn store_byte(s: Option<u8>) -> u8 {
    s.unwrap_or(ALL_STORES)
}

/// Writes a trace as a stream: into a hidden partial file beside the
/// destination, which appears under its name only when [`finish`] ends it
/// whole. Dropped unfinished (an error, an interrupt), the writer removes
/// the partial file, so a retry finds nothing in its way.
///
/// [`finish`]: TraceWriter::finish
pub struct TraceWriter {
    out: BufWriter<File>,
    path: String,
    dest: PathBuf,
    /// The partial file, until it is linked into place.
    partial: Option<PathBuf>,
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
        if fs::symlink_metadata(path).is_ok() {
            return Err(TraceError::Io {
                path: p.clone(),
                source: std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "the file exists and ledgerbench does not overwrite files it did not create; give another path",
                ),
            });
        }
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let partial = path.with_file_name(format!(".{name}.partial-{}", std::process::id()));
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&partial)
            .map_err(|source| TraceError::Io {
                path: partial.display().to_string(),
                source,
            })?;
        let mut w = TraceWriter {
            out: BufWriter::with_capacity(1 << 20, file),
            path: p.clone(),
            dest: path.to_path_buf(),
            partial: Some(partial),
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
                put_value(&mut self.buf, value);
            }
            Op::Delete { store, key } => {
                self.buf.push(TAG_DELETE);
                self.buf.push(self.check_store(store)?);
                put_bytes(&mut self.buf, key);
            }
            Op::DeleteRange { store, start, end } => {
                self.buf.push(TAG_DELETE_RANGE);
                self.buf.push(self.check_store(store)?);
                put_bytes(&mut self.buf, start);
                put_bytes(&mut self.buf, end);
            }
            Op::Get { store, key, expect } => {
                self.buf.push(TAG_GET);
                self.buf.push(self.check_store(store)?);
                put_bytes(&mut self.buf, key);
                put_expect(&mut self.buf, expect);
            }
            Op::Scan {
                store,
                start,
                end,
                limit,
            } => {
                // An unbounded scan keeps the tag traces had before bounds.
                self.buf.push(if end.is_empty() {
                    TAG_SCAN
                } else {
                    TAG_SCAN_END
                });
                self.buf.push(self.check_store(store)?);
                put_bytes(&mut self.buf, start);
                if !end.is_empty() {
                    put_bytes(&mut self.buf, end);
                }
                self.buf.extend_from_slice(&limit.to_le_bytes());
            }
            Op::At { micros } => {
                self.buf.push(TAG_AT);
                self.buf.extend_from_slice(&micros.to_le_bytes());
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

    /// Writes the end frame, flushes and syncs, then puts the trace under
    /// its name (never over a file that appeared meanwhile); returns the
    /// frames written.
    pub fn finish(mut self) -> Result<u64, TraceError> {
        let count = self.frames;
        self.buf.push(TAG_END);
        self.buf.extend_from_slice(&count.to_le_bytes());
        self.frame()?;
        let io = |source| TraceError::Io {
            path: self.path.clone(),
            source,
        };
        self.out.flush().map_err(io)?;
        self.out.get_ref().sync_all().map_err(io)?;
        if let Some(partial) = &self.partial {
            // A link fails where the name is taken; the partial goes after.
            fs::hard_link(partial, &self.dest).map_err(io)?;
            let _ = fs::remove_file(partial);
        }
        self.partial = None;
        Ok(count + 1)
    }
}

impl Drop for TraceWriter {
    fn drop(&mut self) {
        if let Some(partial) = self.partial.take() {
            let _ = fs::remove_file(partial);
        }
    }
}

//! The pre-generated path: every chunk generated and compressed before the
//! timed ingestion into a spool file, then streamed from it, so the engines,
//! not the generator, set the pace (`pregenerate = true`).
//!
//! The harness's heap stays as bounded as on the live path (one chunk being
//! read, one queued). Under a memory limit the spool's pages are dropped
//! from the page cache as they are consumed, so they do not take the
//! engine's share of the limit; without one they stay cached.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crossbeam_channel::Sender;
use ledgerbench_core::{Batch, Len};

use super::produce::Chunk;
use crate::DriverError;

const MAGIC: &[u8; 8] = b"KVBSPL01";
/// Set in a length table's key length: the operation is a range delete.
const RANGE_BIT: u32 = 1 << 31;

fn io_err(what: &str, path: &Path) -> impl Fn(std::io::Error) -> DriverError {
    let m = format!("spool {} ({what})", path.display());
    move |e| DriverError::Generator(format!("{m}: {e}"))
}

/// Tells the kernel the spool's pages up to `upto` are not needed again, so
/// reading it does not fill a memory-limited cgroup's page cache.
fn drop_cached(file: &File, upto: u64) {
    // SAFETY: advisory call on an open descriptor; a failure only leaves
    // pages cached.
    unsafe {
        libc::posix_fadvise(
            file.as_raw_fd(),
            0,
            upto as libc::off_t,
            libc::POSIX_FADV_DONTNEED,
        );
    }
}

/// Appends chunks to a new spool file, which is removed when dropped.
pub(super) struct SpoolWriter {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    bytes: u64,
    /// Whether dropping this removes the file (until a reader takes it over).
    owned: bool,
}

impl SpoolWriter {
    /// Creates the spool file `path` (which must not exist: ledgerbench
    /// only removes files it made).
    pub(super) fn create(path: &Path) -> Result<Self, DriverError> {
        let path = path.to_path_buf();
        let f = File::options()
            .write(true)
            .read(true)
            .create_new(true)
            .open(&path)
            .map_err(io_err("creating", &path))?;
        let mut out = BufWriter::with_capacity(1 << 20, f);
        out.write_all(MAGIC).map_err(io_err("writing", &path))?;
        Ok(Self {
            path,
            out: Some(out),
            bytes: MAGIC.len() as u64,
            owned: true,
        })
    }

    /// Appends one chunk.
    pub(super) fn append(&mut self, c: &Chunk) -> Result<(), DriverError> {
        let path = self.path.clone();
        let out = self.out.as_mut().expect("spool open until finish");
        let mut head = Vec::with_capacity(64);
        head.extend_from_slice(&c.batch.to_le_bytes());
        head.extend_from_slice(&c.ledgers.to_le_bytes());
        head.extend_from_slice(&c.txs.to_le_bytes());
        for r in c.raw {
            head.extend_from_slice(&r.to_le_bytes());
        }
        head.extend_from_slice(&(c.generate.as_nanos() as u64).to_le_bytes());
        head.extend_from_slice(&(c.compress.as_nanos() as u64).to_le_bytes());
        let w = io_err("writing", &path);
        out.write_all(&head).map_err(&w)?;
        self.bytes += head.len() as u64;
        // Per store: op count, data bytes, a length table, then the data
        // in one piece, so reading a batch back is two reads and a copy.
        for b in &c.writes {
            out.write_all(&(b.len() as u64).to_le_bytes()).map_err(&w)?;
            out.write_all(&b.logical_bytes().to_le_bytes())
                .map_err(&w)?;
            let mut table = Vec::with_capacity(b.len() * 8);
            for (k, then) in b.lengths() {
                // A delete has value length u32::MAX; a range delete sets
                // the key length's top bit, its end key in the value's place.
                let (k, v) = match then {
                    Len::Value(v) => (k as u32, v as u32),
                    Len::Delete => (k as u32, u32::MAX),
                    Len::RangeEnd(e) => (k as u32 | RANGE_BIT, e as u32),
                };
                table.extend_from_slice(&k.to_le_bytes());
                table.extend_from_slice(&v.to_le_bytes());
            }
            out.write_all(&table).map_err(&w)?;
            out.write_all(b.data()).map_err(&w)?;
            self.bytes += 16 + table.len() as u64 + b.logical_bytes();
        }
        Ok(())
    }

    /// Writes back what is buffered and returns a reader at the first chunk.
    /// With `drop_behind` (under a memory limit) the spool leaves the page
    /// cache now and each part once read, at the price of reading it from
    /// the disk; without, it stays cached and reads cost a copy.
    pub(super) fn finish(mut self, drop_behind: bool) -> Result<SpoolReader, DriverError> {
        let path = self.path.clone();
        let out = self.out.take().expect("spool open until finish");
        let f = out
            .into_inner()
            .map_err(|e| io_err("writing", &path)(e.into_error()))?;
        f.sync_all().map_err(io_err("syncing", &path))?;
        if drop_behind {
            drop_cached(&f, self.bytes);
        }
        drop(f);
        // The reader removes the file from here on.
        self.owned = false;
        SpoolReader::open(&path, drop_behind, true)
    }
}

impl Drop for SpoolWriter {
    fn drop(&mut self) {
        if self.owned {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Reads chunks back in the order they were appended; removes the spool
/// when dropped, unless it is kept for later runs.
pub(super) struct SpoolReader {
    path: PathBuf,
    input: BufReader<File>,
    offset: u64,
    dropped: u64,
    drop_behind: bool,
    /// Whether dropping this removes the file.
    owned: bool,
}

impl SpoolReader {
    /// Opens the spool `path` at its first chunk; `owned`: remove it when
    /// dropped.
    pub(super) fn open(path: &Path, drop_behind: bool, owned: bool) -> Result<Self, DriverError> {
        let f = File::open(path).map_err(io_err("opening", path))?;
        // SAFETY: advisory call on an open descriptor. Read in order: the
        // kernel reads ahead.
        unsafe {
            libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_SEQUENTIAL);
        }
        if drop_behind {
            drop_cached(&f, 0);
        }
        let mut r = SpoolReader {
            path: path.to_path_buf(),
            input: BufReader::with_capacity(1 << 20, f),
            offset: 0,
            dropped: 0,
            drop_behind,
            owned,
        };
        let mut magic = [0u8; 8];
        r.read(&mut magic)?;
        if &magic != MAGIC {
            return Err(DriverError::Generator(format!(
                "spool {}: not a ledgerbench spool",
                path.display()
            )));
        }
        Ok(r)
    }

    /// Moves the spool to `to` and keeps it there when dropped.
    pub(super) fn keep_as(&mut self, to: &Path) -> Result<(), DriverError> {
        std::fs::rename(&self.path, to).map_err(io_err("keeping", &self.path))?;
        self.path = to.to_path_buf();
        self.owned = false;
        Ok(())
    }

    fn read(&mut self, buf: &mut [u8]) -> Result<(), DriverError> {
        self.input
            .read_exact(buf)
            .map_err(io_err("reading", &self.path))?;
        self.offset += buf.len() as u64;
        Ok(())
    }

    fn u64(&mut self) -> Result<u64, DriverError> {
        let mut b = [0u8; 8];
        self.read(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    fn u32(&mut self) -> Result<u32, DriverError> {
        let mut b = [0u8; 4];
        self.read(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// The next chunk (the caller knows how many there are).
    pub(super) fn next_chunk(&mut self) -> Result<Chunk, DriverError> {
        let batch = self.u32()?;
        let ledgers = self.u32()?;
        let txs = self.u64()?;
        let raw = [self.u64()?, self.u64()?, self.u64()?];
        let generate = Duration::from_nanos(self.u64()?);
        let compress = Duration::from_nanos(self.u64()?);
        let mut writes: [Batch; 3] = Default::default();
        for w in &mut writes {
            let (ops, bytes) = (self.u64()? as usize, self.u64()? as usize);
            let mut table = vec![0u8; ops * 8];
            self.read(&mut table)?;
            // Read straight into the batch's buffer, without zeroing it first.
            let mut data = Vec::with_capacity(bytes);
            let got = (&mut self.input)
                .take(bytes as u64)
                .read_to_end(&mut data)
                .map_err(io_err("reading", &self.path))?;
            if got != bytes {
                return Err(DriverError::Generator(format!(
                    "spool {}: ends inside a batch",
                    self.path.display()
                )));
            }
            self.offset += bytes as u64;
            let lengths = table.chunks_exact(8).map(|e| {
                let k = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
                let v = u32::from_le_bytes([e[4], e[5], e[6], e[7]]);
                let then = match (k & RANGE_BIT != 0, v) {
                    (true, e) => Len::RangeEnd(e as usize),
                    (false, u32::MAX) => Len::Delete,
                    (false, v) => Len::Value(v as usize),
                };
                ((k & !RANGE_BIT) as usize, then)
            });
            *w = Batch::from_parts(data, lengths).ok_or_else(|| {
                DriverError::Generator(format!(
                    "spool {}: a batch's lengths do not match its data",
                    self.path.display()
                ))
            })?;
        }
        // Every 64 MiB consumed, let the kernel drop what was read.
        if self.drop_behind && self.offset - self.dropped > 64 << 20 {
            drop_cached(self.input.get_ref(), self.offset);
            self.dropped = self.offset;
        }
        Ok(Chunk {
            batch,
            ledgers,
            txs,
            writes,
            raw,
            generate,
            compress,
        })
    }

    /// Sends `n` chunks to `tx`, stopping early when the writer hangs up.
    pub(super) fn stream(mut self, n: u64, tx: &Sender<Result<Chunk, DriverError>>) {
        for _ in 0..n {
            let c = self.next_chunk();
            let failed = c.is_err();
            if tx.send(c).is_err() || failed {
                return;
            }
        }
    }
}

impl Drop for SpoolReader {
    fn drop(&mut self) {
        if self.owned {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

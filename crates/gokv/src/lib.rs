//! The Go engines ledgerbench cannot link: Pebble, goleveldb, Badger and bbolt
//! run inside `ledgerbench-sidecar` (a Go program in `sidecar/`, one process per
//! open store) and are driven over a Unix socket: each thread using a store
//! takes a connection of its own from the store's pool, and the sidecar
//! serves connections concurrently, so a Go engine sees as many requests at
//! once as an engine linked into ledgerbench would.
//!
//! The socket costs a round trip per operation, which ledgerbench measures and
//! reports instead of subtracting: every store pings its sidecar at open and
//! records the mean round trip (`extra.sidecar_rtt_ns`) and the time per MiB
//! a request carries (`extra.sidecar_ns_per_mib`; a batch of B MiB costs the
//! round trip plus B times that), and the `go-null`
//! engine (answers from nothing, keeps nothing) runs any workload through
//! the same socket, so its figures are the socket's cost alone.

mod config;
mod conn;
mod sidecar;

pub use config::{GoConfig, GoEngine};

pub use sidecar::{NoSidecar, sidecar};

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ledgerbench_core::{
    Batch, BatchOp, Capabilities, Durability, EngineStats, Error, KvBackend, KvStore, Op, Result,
    fsutil,
};

use conn::{Conn, NOT_FOUND, Process, op};

/// The Go backends.
pub struct Go;

/// A store served by one sidecar process.
pub struct GoStore {
    proc: Arc<Process>,
    /// Connections not in use; a thread that finds none opens another, so
    /// the pool grows to the number of threads using the store at once.
    idle: Mutex<Vec<Conn>>,
    engine: GoEngine,
    path: PathBuf,
    /// Mean round trip of an empty request at open, nanoseconds.
    rtt_ns: u64,
    /// Socket time per MiB of request beyond the round trip, nanoseconds.
    ns_per_mib: u64,
}

/// Round trips timed at open.
const PINGS: u32 = 1000;
/// 1 MiB round trips timed at open.
const MIB_PINGS: u32 = 32;
/// Entries fetched per scan request.
const SCAN_PAGE: u32 = 256;

impl KvBackend for Go {
    const NAME: &'static str = "go";
    type Config = GoConfig;
    type Store = GoStore;

    fn set_durability(cfg: &mut GoConfig, level: Durability) -> Result<()> {
        if cfg.go_engine == GoEngine::Null && level != Durability::None {
            return Err(Error::Config {
                engine: "null",
                message: format!(
                    "durability {level}: go-null keeps nothing, so it promises nothing; run it with --durability none"
                ),
            });
        }
        cfg.durability = level;
        Ok(())
    }

    fn durability(cfg: &GoConfig) -> Durability {
        cfg.durability
    }

    fn read_path(cfg: &GoConfig) -> ledgerbench_core::ReadPath {
        match cfg.go_engine {
            GoEngine::Bbolt => ledgerbench_core::ReadPath::Mmap,
            GoEngine::Null => ledgerbench_core::ReadPath::None,
            _ => ledgerbench_core::ReadPath::Buffered,
        }
    }

    fn unavailable() -> Option<String> {
        sidecar().err().map(|e| e.to_string())
    }

    fn discards_writes(cfg: &GoConfig) -> bool {
        cfg.go_engine == GoEngine::Null
    }

    fn version(_store_dir: &Path) -> Option<String> {
        None
    }

    fn scale_memory(cfg: &mut GoConfig, bytes: u64) {
        cfg.cache_bytes = (bytes / 2).max(8 << 20);
        cfg.memtable_bytes = (bytes / 4).max(cfg.go_engine.min_memtable());
    }

    fn open(dir: &Path, cfg: &GoConfig) -> Result<GoStore> {
        let engine = cfg.go_engine;
        let binary = sidecar().map_err(|why| Error::Config {
            engine: engine.name(),
            message: format!("the Go backends are unavailable: {why}"),
        })?;
        fsutil::claim_store_dir(engine.name(), dir)?;
        let config = serde_json::to_string(&serde_json::json!({
            "cache_bytes": cfg.cache_bytes,
            "memtable_bytes": cfg.memtable_bytes,
            "l0_compaction_trigger": cfg.l0_compaction_trigger,
            "l0_stop_writes_trigger": cfg.l0_stop_writes_trigger,
            "max_concurrent_compactions": cfg.max_concurrent_compactions,
            "durability": cfg.durability.name(),
            "value_bytes": cfg.value_bytes,
        }))
        .map_err(|e| Error::Config {
            engine: engine.name(),
            message: e.to_string(),
        })?;
        let proc = Process::spawn(&binary, engine.name(), &dir.join("db"), &config)?;
        let mut conn = proc.connect(Op::Open)?;
        let t = Instant::now();
        for _ in 0..PINGS {
            conn.begin(op::PING);
            conn.call(Op::Open)?;
        }
        let rtt_ns = (t.elapsed().as_nanos() / u128::from(PINGS)) as u64;
        // Bytes through the socket: pings carrying 1 MiB each (the sidecar
        // ignores a ping's body), so a batch's cost is rtt + size x this.
        let t = Instant::now();
        for _ in 0..MIB_PINGS {
            conn.begin(op::PING);
            conn.req.resize(1 + (1 << 20), 0);
            conn.call(Op::Open)?;
        }
        let ns_per_mib = (t.elapsed().as_nanos() / u128::from(MIB_PINGS)) as u64;
        let ns_per_mib = ns_per_mib.saturating_sub(rtt_ns);
        Ok(GoStore {
            proc,
            idle: Mutex::new(vec![conn]),
            engine,
            path: dir.to_path_buf(),
            rtt_ns,
            ns_per_mib,
        })
    }
}

fn put_u32(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u32).to_le_bytes());
}

fn take_u32(b: &mut &[u8]) -> Option<usize> {
    let (n, rest) = b.split_first_chunk::<4>()?;
    *b = rest;
    Some(u32::from_le_bytes(*n) as usize)
}

fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    let (x, rest) = b.split_at_checked(n)?;
    *b = rest;
    Some(x)
}

impl GoStore {
    /// Runs `f` on a connection of this thread's own for the call.
    fn with<T>(&self, op: Op, f: impl FnOnce(&mut Conn) -> Result<T>) -> Result<T> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut c = match idle {
            Some(c) => c,
            None => self.proc.connect(op)?,
        };
        let r = f(&mut c);
        if !c.broken {
            self.idle.lock().unwrap_or_else(|e| e.into_inner()).push(c);
        }
        r
    }

    fn garbled(&self, op: Op) -> Error {
        Error::engine(
            self.engine.name(),
            op,
            &self.path,
            "the sidecar sent a malformed reply",
        )
    }
}

impl KvStore for GoStore {
    fn engine(&self) -> &'static str {
        self.engine.name()
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        out.clear();
        self.with(Op::Get, |c| {
            c.begin(op::GET);
            c.req.extend_from_slice(key);
            if c.call(Op::Get)? == NOT_FOUND {
                return Ok(false);
            }
            out.extend_from_slice(&c.reply);
            Ok(true)
        })
    }

    fn get_many(&self, keys: &[Vec<u8>], out: &mut Vec<Option<Vec<u8>>>) -> Result<()> {
        out.clear();
        self.with(Op::Get, |c| {
            c.begin(op::GET_MANY);
            put_u32(&mut c.req, keys.len());
            for k in keys {
                put_u32(&mut c.req, k.len());
                c.req.extend_from_slice(k);
            }
            c.call(Op::Get)?;
            // Per key: a found byte, then a found value's u32 length and bytes.
            let mut r = &c.reply[..];
            for _ in keys {
                let (&found, rest) = r.split_first().ok_or_else(|| self.garbled(Op::Get))?;
                r = rest;
                if found == 0 {
                    out.push(None);
                    continue;
                }
                let len = take_u32(&mut r).ok_or_else(|| self.garbled(Op::Get))?;
                let v = r.get(..len).ok_or_else(|| self.garbled(Op::Get))?;
                out.push(Some(v.to_vec()));
                r = &r[len..];
            }
            if !r.is_empty() {
                return Err(self.garbled(Op::Get));
            }
            Ok(())
        })
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        let batch = match self.engine.range_delete() {
            Some(ledgerbench_core::RangeDelete::Native) => std::borrow::Cow::Borrowed(batch),
            // A delete per key the range holds (null: nothing is kept).
            _ => ledgerbench_core::ranges::expand(self, batch)?,
        };
        // No limit below the frame's u32 lengths.
        let max = self.engine.max_key().unwrap_or(u32::MAX as usize);
        self.with(Op::Write, |c| {
            c.begin(op::WRITE);
            // The count is patched in once known: empty ranges are not sent.
            let count_at = c.req.len();
            put_u32(&mut c.req, 0);
            let mut count = 0usize;
            for o in batch.iter() {
                // Checked while encoding: nothing is sent for a batch with
                // a key the engine cannot hold.
                if let Some(e) = Error::key_too_long(self.engine.name(), &self.path, o.key(), max) {
                    return Err(e);
                }
                match o {
                    BatchOp::Put(k, v) => {
                        c.req.push(0);
                        put_u32(&mut c.req, k.len());
                        c.req.extend_from_slice(k);
                        put_u32(&mut c.req, v.len());
                        c.req.extend_from_slice(v);
                    }
                    BatchOp::Delete(k) => {
                        c.req.push(1);
                        put_u32(&mut c.req, k.len());
                        c.req.extend_from_slice(k);
                    }
                    // An empty or inverted range deletes nothing.
                    BatchOp::DeleteRange(k, e) if k >= e => continue,
                    BatchOp::DeleteRange(k, e) => {
                        c.req.push(2);
                        put_u32(&mut c.req, k.len());
                        c.req.extend_from_slice(k);
                        put_u32(&mut c.req, e.len());
                        c.req.extend_from_slice(e);
                    }
                }
                count += 1;
            }
            c.req[count_at..count_at + 4].copy_from_slice(&(count as u32).to_le_bytes());
            c.call(Op::Write).map(|_| ())
        })
    }

    fn scan(&self, start: &[u8], visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        let mut from = start.to_vec();
        loop {
            // One page per request; the next starts just after its last key.
            let more = self.with(Op::Iterate, |c| {
                c.begin(op::SCAN);
                put_u32(&mut c.req, SCAN_PAGE as usize);
                c.req.extend_from_slice(&from);
                c.call(Op::Iterate)?;
                let mut b: &[u8] = &c.reply;
                let (&more, rest) = b.split_first().ok_or_else(|| self.garbled(Op::Iterate))?;
                b = rest;
                let mut last = None;
                while !b.is_empty() {
                    let entry = (|| {
                        let kl = take_u32(&mut b)?;
                        let k = take(&mut b, kl)?;
                        let vl = take_u32(&mut b)?;
                        Some((k, take(&mut b, vl)?))
                    })();
                    let (k, v) = entry.ok_or_else(|| self.garbled(Op::Iterate))?;
                    if !visit(k, v) {
                        return Ok(false);
                    }
                    last = Some(k);
                }
                match last {
                    Some(k) if more == 1 => {
                        from.clear();
                        from.extend_from_slice(k);
                        from.push(0);
                        Ok(true)
                    }
                    _ => Ok(false),
                }
            })?;
            if !more {
                return Ok(());
            }
        }
    }

    fn flush(&self) -> Result<()> {
        self.with(Op::Flush, |c| {
            c.begin(op::FLUSH);
            c.call(Op::Flush).map(|_| ())
        })
    }

    fn compact(&self) -> Result<()> {
        if !self.capabilities().manual_compaction {
            return Err(Error::Unsupported {
                engine: self.engine.name(),
                op: Op::Compact,
            });
        }
        self.with(Op::Compact, |c| {
            c.begin(op::COMPACT);
            c.call(Op::Compact).map(|_| ())
        })
    }

    fn stats(&self) -> Result<EngineStats> {
        let mut s: EngineStats = self.with(Op::Stats, |c| {
            c.begin(op::STATS);
            c.call(Op::Stats)?;
            serde_json::from_slice(&c.reply).map_err(|e| {
                Error::engine(
                    self.engine.name(),
                    Op::Stats,
                    &self.path,
                    format!("the sidecar's stats: {e}"),
                )
            })
        })?;
        s.extra.insert("sidecar_rtt_ns".into(), self.rtt_ns);
        s.extra.insert("sidecar_ns_per_mib".into(), self.ns_per_mib);
        Ok(s)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            ordered_iteration: self.engine != GoEngine::Null,
            // bbolt has no in-place compaction; null has nothing to compact.
            manual_compaction: !matches!(self.engine, GoEngine::Bbolt | GoEngine::Null),
            evicts_oldest: false,
            persistent: self.engine != GoEngine::Null,
            discards_writes: self.engine == GoEngine::Null,
            // bbolt runs one write transaction at a time; the LSM trees
            // queue concurrent commits themselves (Pebble's commit
            // pipeline, goleveldb's write merge, Badger's write channel).
            writers: Some(if self.engine == GoEngine::Bbolt {
                ledgerbench_core::WriterModel::Single
            } else {
                ledgerbench_core::WriterModel::Concurrent
            }),
            range_delete: self.engine.range_delete(),
        }
    }

    fn close(self: Box<Self>) -> Result<()> {
        let idle = std::mem::take(&mut *self.idle.lock().unwrap_or_else(|e| e.into_inner()));
        let mut idle = idle.into_iter();
        let c = match idle.next() {
            Some(c) => c,
            None => self.proc.connect(Op::Close)?,
        };
        c.close()
    }
}

#[cfg(test)]
mod tests;

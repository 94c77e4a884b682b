//! A store served by a sidecar process over a Unix socket: each thread
//! using a store takes a connection of its own from the store's pool, and
//! the sidecar serves connections concurrently. Kept to measure the socket
//! path beside the in-process one: the store pings its sidecar at open and
//! records the mean round trip (`extra.sidecar_rtt_ns`) and the time per
//! MiB a request carries (`extra.sidecar_ns_per_mib`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ledgerbench_core::{Batch, Capabilities, EngineStats, Error, KvStore, Op, Result};

use crate::conn::{Conn, NOT_FOUND, Process, op};
use crate::wire::{self, FIRST_PAGE, put_u32, take_u32};
use crate::{GoConfig, GoEngine};

/// A store served by one sidecar process.
pub struct SidecarStore {
    proc: Arc<Process>,
    /// Connections not in use; a thread that finds none opens another, so
    /// the pool grows to the number of threads using the store at once.
    pub(crate) idle: Mutex<Vec<Conn>>,
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

impl SidecarStore {
    /// Starts the sidecar on the store in `dir` (its `db` directory) and
    /// times the socket.
    pub(crate) fn open(dir: &Path, cfg: &GoConfig, config_json: &str) -> Result<Self> {
        let engine = cfg.go_engine;
        let binary = crate::sidecar().map_err(|why| Error::Config {
            engine: engine.name(),
            message: format!("the Go sidecar is unavailable: {why}"),
        })?;
        let proc = Process::spawn(&binary, engine.name(), &dir.join("db"), config_json)?;
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
        Ok(Self {
            proc,
            idle: Mutex::new(vec![conn]),
            engine,
            path: dir.to_path_buf(),
            rtt_ns,
            ns_per_mib,
        })
    }

    /// Runs `f` on a connection of this thread's own for the call.
    pub(crate) fn with<T>(&self, op: Op, f: impl FnOnce(&mut Conn) -> Result<T>) -> Result<T> {
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

impl KvStore for SidecarStore {
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
        let batch = wire::native_ranges(self.engine, self, batch)?;
        self.with(Op::Write, |c| {
            c.begin(op::WRITE);
            wire::encode_batch(self.engine, &self.path, &batch, &mut c.req)?;
            c.call(Op::Write).map(|_| ())
        })
    }

    fn scan(&self, start: &[u8], visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        let mut from = start.to_vec();
        let mut limit = FIRST_PAGE;
        loop {
            // One page per request; the next starts just after its last key.
            let more = self.with(Op::Iterate, |c| {
                c.begin(op::SCAN);
                put_u32(&mut c.req, limit as usize);
                c.req.extend_from_slice(&from);
                c.call(Op::Iterate)?;
                let (&more, page) = c
                    .reply
                    .split_first()
                    .ok_or_else(|| self.garbled(Op::Iterate))?;
                match wire::visit_page(page, visit, || self.garbled(Op::Iterate))? {
                    Some(Some(k)) if more == 1 => {
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
            limit = wire::next_page(limit);
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
        wire::capabilities(self.engine)
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

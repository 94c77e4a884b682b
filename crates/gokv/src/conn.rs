//! The pipe to one sidecar process: length-prefixed frames, one request and
//! its reply at a time, the child's stderr kept for error messages.

use std::collections::VecDeque;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};

use ledgerbench_core::{Error, Op, Result};

/// Request ops, as the sidecar numbers them.
pub(crate) mod op {
    pub const WRITE: u8 = 1;
    pub const GET: u8 = 2;
    pub const SCAN: u8 = 3;
    pub const FLUSH: u8 = 4;
    pub const COMPACT: u8 = 5;
    pub const STATS: u8 = 6;
    pub const CLOSE: u8 = 7;
    pub const PING: u8 = 8;
}

/// Reply statuses.
pub(crate) const OK: u8 = 0;
pub(crate) const NOT_FOUND: u8 = 1;
const ERROR: u8 = 2;

/// Free bytes below which a store's filesystem counts as full.
const FULL_BELOW: u64 = 1 << 20;
/// Seconds an engine may wait on a full disk before it is stopped.
const STUCK_SECS: u64 = 5;

/// Free bytes of the filesystem holding `path` (or its nearest existing
/// parent), for unprivileged writers.
fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let dir = path.ancestors().find(|p| p.exists())?;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs is plain data; all zeros is a valid value.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a statvfs to fill.
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    Some(s.f_bavail as u64 * s.f_frsize as u64)
}

/// How much of the child's stderr is kept for messages.
const STDERR_TAIL: usize = 4096;

/// One sidecar process and its pipes.
pub(crate) struct Conn {
    child: Child,
    /// `None` once closed, which ends the sidecar's input.
    input: Option<BufWriter<ChildStdin>>,
    output: BufReader<ChildStdout>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    /// The request being built.
    pub(crate) req: Vec<u8>,
    /// The last reply's payload (after its status byte).
    pub(crate) reply: Vec<u8>,
    engine: &'static str,
    path: PathBuf,
}

impl Conn {
    /// Starts `binary ENGINE DIR CONFIG` and waits for its open reply.
    pub(crate) fn spawn(
        binary: &Path,
        engine: &'static str,
        dir: &Path,
        config: &str,
    ) -> Result<Conn> {
        let mut cmd = Command::new(binary);
        cmd.arg(engine)
            .arg(dir)
            .arg(config)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: the closure runs in the forked child before exec and
        // only makes an async-signal-safe system call.
        unsafe {
            use std::os::unix::process::CommandExt;
            // The sidecar dies with the thread that started it, as an
            // engine linked into the process would: a kill -9 of ledgerbench
            // is a kill -9 of the engine.
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(|e| {
            Error::engine(
                engine,
                Op::Open,
                dir,
                format!("starting the sidecar {}: {e}", binary.display()),
            )
        })?;
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(mut err) = child.stderr.take() {
            let tail = stderr.clone();
            // Drained on its own thread, so a chatty engine never blocks on
            // a full pipe; only the tail is kept.
            std::thread::spawn(move || {
                let mut buf = [0u8; 1024];
                while let Ok(n) = err.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
                    t.extend(&buf[..n]);
                    while t.len() > STDERR_TAIL {
                        t.pop_front();
                    }
                }
            });
        }
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            unreachable!("both pipes were requested");
        };
        let mut c = Conn {
            child,
            input: Some(BufWriter::with_capacity(1 << 20, input)),
            output: BufReader::with_capacity(1 << 20, output),
            stderr,
            req: Vec::new(),
            reply: Vec::new(),
            engine,
            path: dir.to_path_buf(),
        };
        c.read_reply(Op::Open)?;
        Ok(c)
    }

    fn err(&self, op: Op, message: String) -> Error {
        Error::engine(self.engine, op, &self.path, message)
    }

    /// The child's exit and the end of its stderr, for a broken pipe.
    fn gone(&mut self, op: Op, io: std::io::Error) -> Error {
        // Give the child a moment to finish dying, so its status is known.
        let status = (0..50).find_map(|_| match self.child.try_wait() {
            Ok(Some(s)) => Some(s.to_string()),
            _ => {
                std::thread::sleep(std::time::Duration::from_millis(10));
                None
            }
        });
        // SIGKILL nobody in ledgerbench sends: under a memory limit it is the
        // kernel's OOM killer, as for an engine linked into ledgerbench.
        let oom = if status.as_deref().is_some_and(|s| s.contains("SIGKILL")) {
            " (SIGKILL: under --memory-limit, the OOM killer; the engine needs more memory than the limit)"
        } else {
            ""
        };
        let tail = {
            let t = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
            String::from_utf8_lossy(&t.iter().copied().collect::<Vec<u8>>())
                .trim()
                .to_string()
        };
        self.err(
            op,
            format!(
                "the sidecar {}{oom} ({io}); its stderr: {}",
                status.map_or("stopped answering".to_string(), |s| format!("exited, {s}")),
                if tail.is_empty() { "(empty)" } else { &tail }
            ),
        )
    }

    /// Starts a request of `kind`; the caller appends its body to `req`.
    pub(crate) fn begin(&mut self, kind: u8) {
        self.req.clear();
        self.req.push(kind);
    }

    /// Sends the request in `req` and reads the reply into `reply`; returns
    /// its status (`OK` or `NOT_FOUND`), or the sidecar's error.
    pub(crate) fn call(&mut self, op: Op) -> Result<u8> {
        let len = u32::try_from(self.req.len()).map_err(|_| {
            self.err(
                op,
                format!("a request of {} bytes is over 4 GiB", self.req.len()),
            )
        })?;
        let Some(input) = self.input.as_mut() else {
            return Err(self.err(op, "the store is closed".into()));
        };
        let sent = input
            .write_all(&len.to_le_bytes())
            .and_then(|_| input.write_all(&self.req))
            .and_then(|_| input.flush());
        if let Err(e) = sent {
            return Err(self.gone(op, e));
        }
        self.read_reply(op)
    }

    /// Waits until the reply starts arriving. An engine that blocks on a
    /// full disk (Pebble retries its WAL forever) would hang the harness:
    /// while waiting, the store's filesystem is checked every second, and
    /// after `STUCK_SECS` with no free space the sidecar is killed and the
    /// operation fails as a full disk.
    fn wait_readable(&mut self, op: Op) -> Result<()> {
        use std::os::fd::AsRawFd;
        if !self.output.buffer().is_empty() {
            return Ok(());
        }
        let fd = self.output.get_ref().as_raw_fd();
        let mut full_since: Option<std::time::Instant> = None;
        loop {
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd for the duration of the call.
            let r = unsafe { libc::poll(&mut p, 1, 1000) };
            if r != 0 {
                // Readable, closed, or interrupted: the read says which.
                return Ok(());
            }
            match (free_bytes(&self.path), full_since) {
                (Some(f), _) if f >= FULL_BELOW => full_since = None,
                (Some(_), None) => full_since = Some(std::time::Instant::now()),
                (Some(_), Some(t)) if t.elapsed().as_secs() >= STUCK_SECS => {
                    let _ = self.child.kill();
                    return Err(Error::Full {
                        engine: self.engine,
                        op,
                        path: self.path.clone(),
                        setting: "the filesystem's free space",
                        message: format!(
                            "the disk is full and {} has not answered for {STUCK_SECS} s (it retries instead of failing); its sidecar was stopped",
                            self.engine
                        ),
                    });
                }
                _ => {}
            }
        }
    }

    fn read_reply(&mut self, op: Op) -> Result<u8> {
        self.wait_readable(op)?;
        // Length and status first, then the payload straight into `reply`:
        // no shifting a large value or scan page out from behind the status.
        let mut head = [0u8; 5];
        if let Err(e) = self.output.read_exact(&mut head) {
            return Err(self.gone(op, e));
        }
        let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let Some(payload) = len.checked_sub(1) else {
            return Err(self.err(op, "the sidecar sent an empty reply".into()));
        };
        let status = head[4];
        self.reply.resize(payload, 0);
        if let Err(e) = self.output.read_exact(&mut self.reply) {
            return Err(self.gone(op, e));
        }
        match status {
            OK | NOT_FOUND => Ok(status),
            ERROR => Err(self.err(op, String::from_utf8_lossy(&self.reply).into_owned())),
            s => Err(self.err(op, format!("the sidecar sent status {s}"))),
        }
    }

    /// Asks the sidecar to close the store and waits for it to exit.
    pub(crate) fn close(mut self) -> Result<()> {
        self.begin(op::CLOSE);
        let r = self.call(Op::Close);
        self.input = None;
        let _ = self.child.wait();
        r.map(|_| ())
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        // Without a close: the end of its input makes the sidecar close the
        // store; waiting for it frees the store's lock for a reopen.
        self.input = None;
        let _ = self.child.wait();
    }
}

//! One sidecar process and its connections. The process says on its
//! standard output whether the store opened, then serves requests on a
//! Unix socket: each connection carries one request and its reply at a
//! time, and the sidecar serves connections concurrently, so a store has
//! as many requests in flight as threads using it. Its standard input is
//! held open for its whole life: the end of it (ledgerbench gone) makes the
//! sidecar exit without closing the store, as a crash would.

use std::collections::VecDeque;
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
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
    pub const GET_MANY: u8 = 9;
}

/// Reply statuses.
pub(crate) const OK: u8 = 0;
pub(crate) const NOT_FOUND: u8 = 1;
const ERROR: u8 = 2;

/// Free bytes below which a store's filesystem counts as full.
const FULL_BELOW: u64 = 1 << 20;
/// Seconds an engine may wait on a full disk before it is stopped.
const STUCK_SECS: u64 = 5;
/// How much of the child's stderr is kept for messages.
const STDERR_TAIL: usize = 4096;
/// Buffer per connection and direction: large frames bypass it, so it only
/// gathers small ones, and eight clients do not cost the store megabytes.
const CONN_BUF: usize = 64 << 10;

/// Free bytes of the filesystem holding `path`, or its nearest existing
/// parent (the store's directory may not be made yet, or be gone).
fn free_bytes(path: &Path) -> Option<u64> {
    let dir = path.ancestors().find(|p| p.exists())?;
    ledgerbench_core::fsutil::free_bytes(dir).ok()
}

/// A name in the abstract socket namespace, unique to this process and
/// store: it leaves no file behind and vanishes with the sidecar.
fn socket_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "ledgerbench-sidecar-{}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// One running sidecar.
pub(crate) struct Process {
    child: Mutex<Child>,
    /// `None` once closed; see the module's note.
    stdin: Mutex<Option<ChildStdin>>,
    /// Read for the open reply, then held so the sidecar never writes to a
    /// closed pipe (a write to a broken stdout kills a Go program).
    stdout: Mutex<BufReader<ChildStdout>>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    socket: String,
    engine: &'static str,
    path: PathBuf,
}

impl Process {
    /// Starts `binary ENGINE DIR CONFIG SOCKET` and waits for its open reply.
    pub(crate) fn spawn(
        binary: &Path,
        engine: &'static str,
        dir: &Path,
        config: &str,
    ) -> Result<Arc<Process>> {
        let socket = socket_name();
        let mut cmd = Command::new(binary);
        cmd.arg(engine)
            .arg(dir)
            .arg(config)
            .arg(&socket)
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
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            unreachable!("both pipes were requested");
        };
        let p = Process {
            child: Mutex::new(child),
            stdin: Mutex::new(Some(stdin)),
            stdout: Mutex::new(BufReader::with_capacity(CONN_BUF, stdout)),
            stderr,
            socket,
            engine,
            path: dir.to_path_buf(),
        };
        let mut reply = Vec::new();
        let status = {
            let mut out = p.stdout.lock().unwrap_or_else(|e| e.into_inner());
            read_frame(&p, &mut out, &mut reply, Op::Open)?
        };
        p.status(status, &reply, Op::Open)?;
        Ok(Arc::new(p))
    }

    /// A new connection to the sidecar's socket.
    pub(crate) fn connect(self: &Arc<Self>, op: Op) -> Result<Conn> {
        use std::os::linux::net::SocketAddrExt;
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(self.socket.as_bytes())
            .map_err(|e| self.err(op, format!("the sidecar's socket name: {e}")))?;
        let stream = UnixStream::connect_addr(&addr).map_err(|e| self.gone(op, e))?;
        let write = stream.try_clone().map_err(|e| self.gone(op, e))?;
        Ok(Conn {
            proc: self.clone(),
            input: BufWriter::with_capacity(CONN_BUF, write),
            output: BufReader::with_capacity(CONN_BUF, stream),
            req: Vec::new(),
            reply: Vec::new(),
            broken: false,
        })
    }

    fn err(&self, op: Op, message: String) -> Error {
        Error::engine(self.engine, op, &self.path, message)
    }

    /// The child's exit and the end of its stderr, for a broken connection.
    fn gone(&self, op: Op, io: std::io::Error) -> Error {
        // Give the child a moment to finish dying, so its status is known.
        let status = (0..50).find_map(|_| {
            let r = self
                .child
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .try_wait();
            match r {
                Ok(Some(s)) => Some(s.to_string()),
                _ => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    None
                }
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

    /// Waits until `fd` has a reply arriving. An engine that blocks on a
    /// full disk (Pebble retries its WAL forever) would hang the harness:
    /// while waiting, the store's filesystem is checked every second, and
    /// after `STUCK_SECS` with no free space the sidecar is killed and the
    /// operation fails as a full disk.
    fn wait_readable(&self, fd: i32, op: Op) -> Result<()> {
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
                    let _ = self.child.lock().unwrap_or_else(|e| e.into_inner()).kill();
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

    /// A reply's status as a result: `OK` or `NOT_FOUND`, or the error the
    /// sidecar sent.
    fn status(&self, status: u8, reply: &[u8], op: Op) -> Result<u8> {
        match status {
            OK | NOT_FOUND => Ok(status),
            ERROR => Err(self.err(op, String::from_utf8_lossy(reply).into_owned())),
            s => Err(self.err(op, format!("the sidecar sent status {s}"))),
        }
    }

    /// Ends the sidecar's input and waits for it to exit.
    fn end(&self) {
        self.stdin.lock().unwrap_or_else(|e| e.into_inner()).take();
        let _ = self.child.lock().unwrap_or_else(|e| e.into_inner()).wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // Without a close: the end of its input makes the sidecar exit
        // without closing the store; waiting for it frees the store's lock
        // for a reopen.
        self.end();
    }
}

/// Reads one reply frame from `r` into `reply` and returns its status byte;
/// an error here leaves `r` mid-frame.
fn read_frame<R: Read + AsRawFd>(
    p: &Process,
    r: &mut BufReader<R>,
    reply: &mut Vec<u8>,
    op: Op,
) -> Result<u8> {
    if r.buffer().is_empty() {
        p.wait_readable(r.get_ref().as_raw_fd(), op)?;
    }
    // Length and status first, then the payload straight into `reply`:
    // no shifting a large value or scan page out from behind the status.
    let mut head = [0u8; 5];
    r.read_exact(&mut head).map_err(|e| p.gone(op, e))?;
    let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
    let Some(payload) = len.checked_sub(1) else {
        return Err(p.err(op, "the sidecar sent an empty reply".into()));
    };
    let status = head[4];
    reply.resize(payload, 0);
    r.read_exact(reply).map_err(|e| p.gone(op, e))?;
    Ok(status)
}

/// One connection to a sidecar: one request and its reply at a time.
pub(crate) struct Conn {
    proc: Arc<Process>,
    input: BufWriter<UnixStream>,
    output: BufReader<UnixStream>,
    /// The request being built.
    pub(crate) req: Vec<u8>,
    /// The last reply's payload (after its status byte).
    pub(crate) reply: Vec<u8>,
    /// Set when the connection failed mid-frame: it is not used again.
    pub(crate) broken: bool,
}

impl Conn {
    /// Starts a request of `kind`; the caller appends its body to `req`.
    pub(crate) fn begin(&mut self, kind: u8) {
        self.req.clear();
        self.req.push(kind);
    }

    /// Sends the request in `req` and reads the reply into `reply`; returns
    /// its status (`OK` or `NOT_FOUND`), or the sidecar's error.
    pub(crate) fn call(&mut self, op: Op) -> Result<u8> {
        let len = u32::try_from(self.req.len()).map_err(|_| {
            self.proc.err(
                op,
                format!("a request of {} bytes is over 4 GiB", self.req.len()),
            )
        })?;
        let sent = self
            .input
            .write_all(&len.to_le_bytes())
            .and_then(|_| self.input.write_all(&self.req))
            .and_then(|_| self.input.flush());
        if let Err(e) = sent {
            self.broken = true;
            return Err(self.proc.gone(op, e));
        }
        match read_frame(&self.proc, &mut self.output, &mut self.reply, op) {
            // An error the sidecar sent leaves the connection at a frame
            // boundary, ready for the next request.
            Ok(status) => self.proc.status(status, &self.reply, op),
            Err(e) => {
                self.broken = true;
                Err(e)
            }
        }
    }

    /// Asks the sidecar to close the store and waits for it to exit.
    pub(crate) fn close(mut self) -> Result<()> {
        self.begin(op::CLOSE);
        let r = self.call(Op::Close);
        self.proc.end();
        r.map(|_| ())
    }
}

//! The worker processes of a crash cell: started inside the cell's memory
//! cgroup before they run a line of their own, killed and reaped whatever
//! happens, and the checker's two-step answer (first read, then verdict).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use anyhow::Context;
use ledgerbench_meter::cgroup::MemoryLimit;

use super::reboot::{Boot, after_reboot};
use super::worker::{Checked, Job, OPENED, PRIVATE_NS_ENV};

/// A worker process, leader of a process group of its own (with the Go
/// sidecar it may start), killed and reaped on drop whatever happened.
pub(super) struct Worker(pub(super) Child);

impl Worker {
    /// SIGKILL to the worker and every process of its group, at once.
    pub(super) fn kill_group(&self) {
        // SAFETY: kill has no memory preconditions; the group is our
        // unreaped child's own.
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
    }

    /// Kills the group, reaps the worker and waits (up to 10 s) until no
    /// process of the group runs: a killed sidecar, reparented away from
    /// us, still holds its files until it has exited.
    pub(super) fn reap_group(&mut self) {
        self.kill_group();
        let _ = self.0.wait();
        let t = std::time::Instant::now();
        while group_running(self.0.id()) && t.elapsed() < std::time::Duration::from_secs(10) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.reap_group();
    }
}

/// Whether a process of group `pgid` runs (exited ones, zombies, do not
/// count: they hold no files).
fn group_running(pgid: u32) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    dir.flatten().any(|e| {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            return false;
        };
        // After the command name (in parentheses): state, ppid, pgrp.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            return false;
        };
        let mut f = rest.split_whitespace();
        let state = f.next();
        let pgrp = f.nth(1).and_then(|g| g.parse::<u32>().ok());
        pgrp == Some(pgid) && !matches!(state, Some("Z" | "X"))
    })
}

/// Makes the child join `limit` between fork and exec: the engine's every
/// allocation, recovery included, is charged to the limit.
fn join_before_exec(cmd: &mut Command, limit: &MemoryLimit) -> anyhow::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::process::CommandExt;
    let procs = std::ffi::CString::new(limit.procs_file().as_os_str().as_bytes())?;
    // SAFETY: the closure runs between fork and exec and makes only raw
    // system calls on a C string prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let n = libc::write(fd, c"0".as_ptr().cast(), 1);
            let err = std::io::Error::last_os_error();
            libc::close(fd);
            if n != 1 {
                return Err(err);
            }
            Ok(())
        });
    }
    Ok(())
}

/// Starts `ledgerbench crash-worker MODE JOB`, in `limit` from its first
/// instruction and, after a simulated reboot, with the new boot id.
pub(super) fn spawn(
    exe: &Path,
    mode: &str,
    job: &Job,
    log: &Path,
    limit: Option<&MemoryLimit>,
    boot: Option<&Boot>,
) -> anyhow::Result<Worker> {
    let err = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .with_context(|| format!("opening {}", log.display()))?;
    let mut cmd = Command::new(exe);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd.args(["crash-worker", mode, &serde_json::to_string(job)?])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(err);
    if let Some(l) = limit {
        join_before_exec(&mut cmd, l)?;
    }
    if let Some(b) = boot {
        after_reboot(&mut cmd, b)?;
        cmd.env(PRIVATE_NS_ENV, "1");
    }
    let child = cmd.spawn().context("starting a crash worker");
    // The worker runs (or failed to): the tmpfs its boot id came from is
    // detached in its namespace, and the empty mount point is ours to go.
    if let Some(b) = boot {
        let _ = std::fs::remove_dir(&b.scratch);
    }
    Ok(Worker(child?))
}

/// Runs the checker: calls `at_first_read` when it says its first read
/// returned (the checker waits for that call to end), then reads its verdict.
pub(super) fn check(
    mut w: Worker,
    log: &Path,
    at_first_read: &mut dyn FnMut(),
) -> anyhow::Result<Checked> {
    let mut stdin = w.0.stdin.take();
    let mut out = BufReader::new(w.0.stdout.take().context("checker stdout")?);
    let mut last = String::new();
    let mut line = String::new();
    while out.read_line(&mut line).context("reading the checker")? > 0 {
        if line.trim_end() == OPENED {
            at_first_read();
            if let Some(mut i) = stdin.take() {
                // The checker may have gone already; its status says why.
                let _ = writeln!(i, "go");
            }
        } else if !line.trim().is_empty() {
            last = line.trim_end().to_string();
        }
        line.clear();
    }
    drop(stdin);
    let status = w.0.wait()?;
    if status.success() && !last.is_empty() {
        return serde_json::from_str(&last).context("the checker's answer");
    }
    // A checker that died (SIGBUS on a torn map, an abort) is the store
    // failing to come back, not the harness failing.
    Ok(Checked {
        open_secs: None,
        first_read_secs: None,
        open_error: Some(format!("the checker died ({status}): {}", log_tail(log))),
        stores: Vec::new(),
    })
}

/// The last lines a worker wrote to its log, for an error message.
pub(super) fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().rev().take(3).collect();
    if lines.is_empty() {
        format!("(nothing in {})", log.display())
    } else {
        lines.into_iter().rev().collect::<Vec<_>>().join(" / ")
    }
}

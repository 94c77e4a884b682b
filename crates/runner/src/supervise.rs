//! Runs a benchmark command in a worker process and cleans up after it.
//!
//! A run that places stores on loop devices or in a memory cgroup makes
//! things the kernel keeps after the process is gone. A worker killed by
//! its memory limit (the OOM killer sends SIGKILL), by Ctrl-C or by `kill`
//! runs no destructor, so the command re-runs itself as a worker and this
//! supervisor, which holds no engine and no data, waits for it. Whatever
//! ends the worker, the supervisor then removes the worker's loop devices,
//! mounts and cgroups (found by the markers naming its pid), says clearly
//! what happened (the memory limit and peak usage on an OOM kill), and
//! records the interrupted run in the results with the batches it finished.

use std::path::Path;
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use ledgerbench_driver::results::RunResult;
use ledgerbench_driver::rundir::RunDir;
use ledgerbench_meter::clean::{self, Leftover};

use crate::watchdog::{StallTimeout, Watch};

/// Set in the worker's environment: run the command itself.
pub const WORKER_ENV: &str = "LEDGERBENCH_WORKER";
/// Set in a worker started again after its predecessor was killed by the
/// memory limit: keep the runs already in the results and go on with the
/// rest (one engine's OOM kill is its result, not the end of the others).
pub const RESUME_ENV: &str = "LEDGERBENCH_RESUME";
/// The file in the output directory that names the run in progress.
pub const CURRENT_RUN: &str = ".ledgerbench-current-run";

static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNAL.store(sig, Ordering::SeqCst);
}

/// True in the worker process.
pub fn is_worker() -> bool {
    std::env::var_os(WORKER_ENV).is_some()
}

/// What becomes of a run's stores when its worker dies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Removed.
    No,
    /// Kept (`--keep-stores`).
    Stores,
    /// Kept for `--resume`, unless the run ended for good (its memory
    /// limit or the watchdog).
    Checkpoint,
}

impl From<bool> for Keep {
    fn from(keep_stores: bool) -> Self {
        if keep_stores { Keep::Stores } else { Keep::No }
    }
}

/// Notes (in the output directory) which run is in progress, so that if
/// the worker dies the supervisor can name it, keep its batches and
/// remove its stores (or keep them: `keep`).
pub fn note_current_run(
    out: &Path,
    label: &str,
    repeat: u32,
    memory_limit: Option<u64>,
    keep: Keep,
) {
    let limit = memory_limit.map_or(String::new(), |b| b.to_string());
    let keep = keep as u8;
    let _ = std::fs::write(
        out.join(CURRENT_RUN),
        format!("{repeat}\n{label}\n{limit}\n{keep}\n"),
    );
}

/// The run is over: no note.
pub fn clear_current_run(out: &Path) {
    let _ = std::fs::remove_file(out.join(CURRENT_RUN));
}

/// Claims the run directory, runs the current command line again as a
/// worker writing there, waits for it, then cleans up and reports.
pub fn run(workload: &str, output: &crate::flags::OutputArgs) -> anyhow::Result<ExitCode> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Dropped last: a run that kept nothing (refused flags, say) leaves
    // nothing behind.
    let rundir = RunDir::claim(output.out.as_deref(), workload, output.force)?;
    supervise(workload, &rundir, &args, (false, output.stall_timeout))
}

/// `run stellar --resume DIR`: removes what the stopped run's processes
/// left (its images stay), then goes on with its own command line.
pub fn resume(dir: &Path) -> anyhow::Result<ExitCode> {
    let args = crate::stellar_cmd::resume::command_of(dir)?;
    let rundir = RunDir::reopen(dir)?;
    let dir = std::path::absolute(dir)?;
    wait_for_owners(&dir)?;
    let found = clean::find();
    let pids: Vec<u32> = found
        .iter()
        .filter(|l| matches!(l, Leftover::Loop { image, .. } if image.starts_with(&dir)))
        .map(owner)
        .collect();
    // In find's order (cgroups, then devices): the dead run's only.
    let left = found.into_iter().filter(|l| match l {
        Leftover::Loop { image, .. } => image.starts_with(&dir),
        Leftover::Cgroup { .. } => pids.contains(&owner(l)),
        Leftover::CrashMount { .. } | Leftover::Scratch { .. } => false,
    });
    for l in left {
        clean::remove(&l).map_err(|e| anyhow::anyhow!("--resume: removing {l}: {e}"))?;
    }
    remove_empty_device_dirs(&dir);
    ledgerbench_core::note!("ledgerbench: resuming the run in {}", dir.display());
    // The stall timeout is the run's own, as given when it started.
    let stall = crate::flags::stall_timeout_of(&args)?;
    supervise("stellar", &rundir, &args, (true, stall))
}

/// Waits (up to a minute) for the processes that made the images under
/// `dir` to be gone: one killed in the middle of a sync dies only when the
/// sync returns.
fn wait_for_owners(dir: &Path) -> anyhow::Result<()> {
    let markers = std::fs::read_dir(dir.join("devices"))
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|run| {
            std::fs::read_dir(run.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .filter(|f| {
            f.file_name()
                .to_string_lossy()
                .ends_with(".ledgerbench-owner")
        });
    let pids: Vec<u32> = markers
        .filter_map(|m| std::fs::read_to_string(m.path()).ok())
        .filter_map(|t| t.trim().strip_prefix("ledgerbench pid=")?.parse().ok())
        .collect();
    let t = std::time::Instant::now();
    while let Some(pid) = pids.iter().find(|p| clean::alive(**p)) {
        if t.elapsed() > Duration::from_secs(60) {
            anyhow::bail!(
                "--resume {}: process {pid} still uses its stores; stop it first",
                dir.display()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// Runs workers for `args` in `rundir` until one finishes or cannot go on;
/// the first is a resumed one when `resume`.
fn supervise(
    workload: &str,
    rundir: &RunDir,
    args: &[String],
    (mut resume, stall): (bool, StallTimeout),
) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe()?;
    let out = rundir.path();
    // SAFETY: the handler only stores into an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
    // Runs that skip what their results hold when started again go on after
    // a worker ended by its memory limit or the watchdog: one backend's end
    // (a capacity search's failed rate) is its result, the others still
    // run. Point reads, fan-out, trie and micro stop.
    let capacity = workload == "capacity";
    let resumable = capacity
        || [
            "stellar", "replay", "ycsb", "solana", "blobs", "accounts", "soak",
        ]
        .contains(&workload);
    let recorded = || {
        if capacity {
            return crate::capacity_cmd::progress(out);
        }
        std::fs::read(out.join("results.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<RunResult>(&b).ok())
            .map_or(0, |r| r.runs.len())
    };
    loop {
        let before = recorded();
        match one_worker(&exe, args, out, resume, stall)? {
            Outcome::Done(c) => return Ok(c),
            // Each new worker skips what is recorded; one that recorded
            // nothing new would only be killed again.
            Outcome::Ended if resumable && recorded() > before => {
                ledgerbench_core::note!(
                    "ledgerbench: going on with the remaining {} in a new worker",
                    if capacity { "probes" } else { "runs" }
                );
                resume = true;
            }
            Outcome::Ended => return Ok(ExitCode::from(2)),
        }
    }
}

/// How a worker ended.
enum Outcome {
    /// Its exit code (or 2 after a signal other than the OOM killer's).
    Done(ExitCode),
    /// Killed by the memory limit or ended by the watchdog; its run was
    /// recorded as failed.
    Ended,
}

/// Long because start, wait (with the watchdog) and clean up one worker in one place, so that whatever ends it, what it made is removed.
fn one_worker(
    exe: &Path,
    args: &[String],
    out: &Path,
    resume: bool,
    stall: StallTimeout,
) -> anyhow::Result<Outcome> {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env(WORKER_ENV, "1")
        .env(ledgerbench_driver::rundir::RUN_DIR_ENV, out);
    if resume {
        cmd.env(RESUME_ENV, "1");
    }
    let mut watch = Watch::new(stall, out);
    let mut child = cmd.spawn()?;
    let pid = child.id();
    let mut forwarded = false;
    let mut stalled = None;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if stalled.is_none()
            && let Some(s) = watch.poll(std::time::Instant::now())
        {
            ledgerbench_core::note!("ledgerbench: {s}");
            // SIGKILL: a worker stuck in an engine call runs no handler.
            // Its sidecar and probes die with it (PR_SET_PDEATHSIG).
            // SAFETY: kill has no memory preconditions; `pid` is our child.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            stalled = Some(s);
        }
        let sig = SIGNAL.load(Ordering::SeqCst);
        // Ctrl-C reaches the worker too (same process group); a `kill` of
        // the supervisor alone is passed on so the worker does not outlive it.
        if sig != 0 && !forwarded {
            // The signal received, not another: the worker and the message
            // below then name what the user sent.
            // SAFETY: kill has no memory preconditions; `pid` is our child.
            unsafe { libc::kill(pid as i32, sig) };
            forwarded = true;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // What the worker left: its devices and cgroups, named by its pid.
    let left: Vec<Leftover> = clean::find()
        .into_iter()
        .filter(|l| owner(l) == pid)
        .collect(); // in removal order
    let cgroups: Vec<_> = left
        .iter()
        .filter_map(|l| match l {
            Leftover::Cgroup { dir, .. } => Some(ledgerbench_meter::cgroup::snapshot(dir)),
            _ => None,
        })
        .collect();
    use std::os::unix::process::ExitStatusExt;
    let oom = cgroups.iter().find(|c| c.oom_kills.unwrap_or(0) > 0);
    let ended = status.signal() == Some(libc::SIGKILL) && (oom.is_some() || stalled.is_some());
    if ended {
        // Ended for good: a checkpointed run's stores are not kept.
        crate::stellar_cmd::resume::end(out);
    }
    for l in &left {
        if let Err(e) = clean::remove(l) {
            ledgerbench_core::note!(
                "ledgerbench: could not remove {l}: {e}; run `ledgerbench clean`"
            );
        }
    }
    if !left.is_empty() {
        ledgerbench_core::note!(
            "ledgerbench: removed {} device(s) and cgroup(s) the worker left",
            left.len()
        );
    }
    remove_empty_device_dirs(out);
    watch.finish();
    let Some(sig) = status.signal() else {
        clear_current_run(out);
        return Ok(Outcome::Done(ExitCode::from(
            status.code().unwrap_or(2).clamp(0, 255) as u8,
        )));
    };
    // A signal the supervisor received is what stopped the run, whatever
    // the worker died of.
    let sig = match SIGNAL.load(Ordering::SeqCst) {
        0 => sig,
        received => received,
    };
    let why = match (sig, oom) {
        _ if stalled.is_some() && SIGNAL.load(Ordering::SeqCst) == 0 => stalled
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default(),
        (libc::SIGKILL, Some(c)) => format!(
            "the run was killed by its memory limit: cgroup limit {} (--memory-limit plus ledgerbench's harness budget), peak {}, {} OOM kill(s); the engine needed more than its limit: raise --memory-limit or give the engine less (--engine-memory)",
            mib(c.limit),
            mib(c.peak),
            c.oom_kills.unwrap_or(0)
        ),
        (libc::SIGINT, _) => "the run was interrupted by SIGINT (Ctrl-C)".to_string(),
        (libc::SIGTERM, _) => "the run was stopped by SIGTERM".to_string(),
        (s, _) => format!("the run was killed by signal {s}"),
    };
    let kept = keep_interrupted_run(out, &why, ended);
    ledgerbench_core::note!("error: {why}; {kept}");
    if crate::stellar_cmd::resume::in_progress(out).is_some() {
        ledgerbench_core::note!(
            "ledgerbench: go on from the last complete batch with `ledgerbench run stellar --resume {}`",
            out.display()
        );
    }
    Ok(if ended {
        Outcome::Ended
    } else {
        Outcome::Done(ExitCode::from(2))
    })
}

/// A killed worker's device directories (`devices/<run>`), empty once its
/// devices are removed; one that still holds anything is kept.
fn remove_empty_device_dirs(out: &Path) {
    for d in std::fs::read_dir(out.join("devices"))
        .into_iter()
        .flatten()
        .flatten()
    {
        // remove_dir removes only an empty directory.
        let _ = std::fs::remove_dir(d.path());
    }
}

/// True in a worker that goes on after a killed predecessor.
pub fn is_resume() -> bool {
    is_worker() && std::env::var_os(RESUME_ENV).is_some()
}

/// In a worker going on after a predecessor ended by its memory limit or
/// the watchdog: the results already in `out` (the ended run among them,
/// with its error), whose runs it keeps and does not run again, and whose
/// start it keeps.
pub fn resumed(out: &Path) -> Option<RunResult> {
    if !is_resume() {
        return None;
    }
    let prev = std::fs::read(out.join("results.json")).ok()?;
    serde_json::from_slice::<RunResult>(&prev).ok()
}

fn owner(l: &Leftover) -> u32 {
    match l {
        Leftover::Loop { pid, .. }
        | Leftover::CrashMount { pid, .. }
        | Leftover::Cgroup { pid, .. }
        | Leftover::Scratch { pid, .. } => *pid,
    }
}

fn mib(b: Option<u64>) -> String {
    b.map_or("unknown".into(), |b| format!("{} MiB", b >> 20))
}

/// Adds the run that was in progress, with its finished batches and the
/// error, to the results file; says what was kept (a checkpointed run's
/// stores, unless it `ended` for good).
fn keep_interrupted_run(out: &Path, why: &str, ended: bool) -> String {
    let results = out.join("results.json");
    let Ok(note) = std::fs::read_to_string(out.join(CURRENT_RUN)) else {
        // No run noted (point reads note none; none keeps its stores).
        let stores = remove_stores(out, false);
        return format!("what finished is in {}{stores}", out.display());
    };
    let mut lines = note.lines();
    let repeat: u32 = lines.next().and_then(|r| r.parse().ok()).unwrap_or(0);
    let label = lines.next().unwrap_or("").to_string();
    let limit: Option<u64> = lines.next().and_then(|l| l.parse().ok());
    let keep_stores = match lines.next() {
        Some("1") => true,
        Some("2") => !ended,
        _ => false,
    };
    let stores = remove_stores(out, keep_stores);
    let Some(mut result) = std::fs::read(&results)
        .ok()
        .and_then(|b| serde_json::from_slice::<RunResult>(&b).ok())
    else {
        return format!("what finished is in {}", out.display());
    };
    let mut run = crate::harness::new_run(&label, limit);
    run.repeat = repeat;
    run.error = Some(why.to_string());
    let tag = if repeat == 0 {
        label.clone()
    } else {
        format!("{label}#{}", repeat + 1)
    };
    let jsonl = std::fs::read_to_string(out.join("batches.jsonl")).unwrap_or_default();
    run.batches = jsonl
        .lines()
        .filter_map(|l| serde_json::from_str::<ledgerbench_driver::results::BatchRecord>(l).ok())
        .filter(|b| b.label == tag)
        .collect();
    let segments: Vec<_> = std::fs::read_to_string(out.join("segments.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<crate::observe::SegmentLine>(l).ok())
        .filter(|s| s.label == tag)
        .map(|s| s.segment)
        .collect();
    if !segments.is_empty() {
        run.replay = Some(ledgerbench_driver::results::ReplayResult {
            segments,
            summary: None,
            // A killed run's label names its threads (`@8t`); the count
            // itself is only known to the worker that died.
            threads: None,
            split: None,
            segments_file: None,
            initial_state: None,
        });
    }
    if let Some(p) = crate::stellar_cmd::resume::in_progress(out) {
        run.resumes = p.resumes;
    }
    let n = run.batches.len() + run.replay.as_ref().map_or(0, |r| r.segments.len());
    // A resumed run's earlier record gives way to this one, which holds
    // all its batches.
    result
        .runs
        .retain(|r| !(r.label == run.label && r.repeat == run.repeat));
    result.runs.push(run);
    clear_current_run(out);
    match crate::output::write_json(&results, &result) {
        Ok(()) => format!(
            "the {n} batch(es) or segment(s) `{label}` finished are kept in {} with the error{stores}",
            results.display()
        ),
        Err(e) => format!("could not update {}: {e:#}", results.display()),
    }
}

/// After a killed worker: the stores it left in the run directory (those
/// of finished runs were removed as each ended) are removed unless the run
/// keeps stores; says which it did, with their size.
fn remove_stores(out: &Path, keep: bool) -> String {
    let stores = out.join("stores");
    let Ok(usage) = ledgerbench_core::fsutil::dir_usage(&stores) else {
        return String::new();
    };
    let mib = usage.allocated_bytes >> 20;
    if keep {
        return format!(
            "; its stores ({mib} MiB) are kept in {} (--keep-stores)",
            stores.display()
        );
    }
    match std::fs::remove_dir_all(&stores) {
        Ok(()) => format!("; its unfinished stores ({mib} MiB) were removed"),
        Err(e) => format!("; could not remove its stores in {}: {e}", stores.display()),
    }
}

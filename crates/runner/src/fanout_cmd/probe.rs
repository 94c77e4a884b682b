//! The process that measures one checkpoint of `ledgerbench run fan-out`:
//! started by the run, put in the memory cgroup before it opens the store,
//! it reopens the store, reads it and prints the checkpoint as one JSON
//! line. Fresh, its resident memory before the open is ledgerbench's alone, so
//! what the open adds is the store's.

use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use anyhow::Context;
use ledgerbench_driver::fanout::{self, Checkpoint, FanOutConfig, Held, PassKind, Passes};
use ledgerbench_meter::blockdev::BlockStat;
use ledgerbench_meter::cgroup::MemoryLimit;
use ledgerbench_meter::memory::Resident;
use serde::{Deserialize, Serialize};

use crate::registry::BackendSpec;

/// What the probe is told (as one JSON argument).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    /// The engine config.
    pub spec: BackendSpec,
    /// The profile.
    pub cfg: FanOutConfig,
    /// The store's directory.
    pub dir: PathBuf,
    /// The store's private device (`/dev/loopN`), when it has one.
    pub device: Option<String>,
    /// Batches the store holds.
    pub batches: u32,
}

/// `ledgerbench fan-out-probe JOB_JSON`.
#[derive(clap::Args)]
pub struct Args {
    /// The job, as JSON.
    job: String,
}

/// Runs the probe: waits for the word to go (the run puts it in the
/// memory cgroup first), measures, prints the checkpoint.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    crate::crash::worker::die_with_parent();
    let job: Job = serde_json::from_str(&args.job).context("fan-out-probe job")?;
    let mut go = String::new();
    std::io::stdin().lock().read_line(&mut go)?;
    let c = measure(&job)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", serde_json::to_string(&c)?)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn measure(job: &Job) -> anyhow::Result<Checkpoint> {
    let resident = || Resident::now().map(|r| r.anon);
    let fds = fanout::open_fds;
    let (anon_before_open, fds_before_open) = (resident(), fds());
    let t = Instant::now();
    let store = job.spec.open(&job.dir)?;
    let open_secs = t.elapsed().as_secs_f64();
    let (anon_after_open, fds_after_open) = (resident(), fds());
    let stat = job
        .device
        .as_ref()
        .map(|d| format!("/sys/block/{}/stat", d.trim_start_matches("/dev/")));
    let device = || stat.as_deref().and_then(|p| BlockStat::read(p).ok());
    let loaded = u64::from(job.batches) * job.cfg.keys_per_batch;
    let pass = |found, round| {
        fanout::pass(
            &job.cfg,
            loaded,
            &*store,
            &device,
            PassKind { found, round },
        )
    };
    let passes = Passes {
        cold_found: pass(true, 0)?,
        cold_missing: pass(false, 0)?,
        steady_found: pass(true, 1)?,
        steady_missing: pass(false, 1)?,
    };
    let anon_after_reads = resident();
    let engine = store.stats()?;
    let disk_allocated_bytes = store.disk_usage()?.allocated_bytes;
    store.close()?;
    Ok(Checkpoint {
        batches: job.batches,
        keys: loaded,
        // The run fills these in: it waited and dropped the cache.
        settle_secs: 0.0,
        unsettled_bytes: None,
        page_cache_dropped: false,
        open_secs,
        held: Held {
            anon_before_open,
            anon_after_open,
            anon_after_reads,
            fds_before_open,
            fds_after_open,
            cgroup_peak_bytes: None,
        },
        disk_allocated_bytes,
        passes,
        engine,
    })
}

/// Runs a probe for `job` inside a memory cgroup of `limit` bytes (when
/// given); returns its checkpoint and the cgroup's peak charge. A probe the
/// limit killed is an error that says so.
pub fn spawn(job: &Job, limit: Option<u64>) -> anyhow::Result<(Checkpoint, Option<u64>)> {
    let exe = std::env::current_exe().context("finding the ledgerbench binary")?;
    let group = limit
        .map(|b| MemoryLimit::create(b, &format!("fanout-{}", job.batches)))
        .transpose()?;
    let mut child = Command::new(exe)
        .arg("fan-out-probe")
        .arg(serde_json::to_string(job)?)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting the checkpoint's probe process")?;
    let started = (|| -> anyhow::Result<()> {
        if let Some(g) = &group {
            g.add(child.id())?;
        }
        let mut stdin = child.stdin.take().context("probe stdin")?;
        writeln!(stdin, "go")?;
        Ok(())
    })();
    if let Err(e) = started {
        let _ = child.kill();
        let _ = child.wait();
        return Err(e);
    }
    // Stderr on a thread of its own, so neither pipe can fill and stall
    // the probe while the other is read.
    let stderr = child.stderr.take().map(|mut e| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = e.read_to_string(&mut s);
            s
        })
    });
    let mut out = String::new();
    if let Some(mut o) = child.stdout.take() {
        o.read_to_string(&mut out)?;
    }
    let status = child.wait()?;
    let err = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
    let peak = group.as_ref().and_then(|g| g.max_usage().ok());
    let killed = group.as_ref().and_then(MemoryLimit::oom_kills).unwrap_or(0);
    if !status.success() {
        use std::os::unix::process::ExitStatusExt;
        let why = err
            .trim()
            .lines()
            .last()
            .unwrap_or("no message")
            .to_string();
        if killed > 0 {
            anyhow::bail!(
                "at {} batches the store did not fit its memory limit of {} MiB: the probe reading it was killed by the kernel's OOM killer ({} kill(s) in its cgroup, peak {} MiB)",
                job.batches,
                limit.unwrap_or(0) >> 20,
                killed,
                peak.unwrap_or(0) >> 20
            );
        }
        match status.signal() {
            Some(sig) => anyhow::bail!(
                "the probe at {} batches died by signal {sig}: {why}",
                job.batches
            ),
            None => anyhow::bail!("the probe at {} batches failed: {why}", job.batches),
        }
    }
    let line = out.lines().last().unwrap_or_default();
    let c = serde_json::from_str(line)
        .with_context(|| format!("reading the probe's checkpoint from {line:?}"))?;
    Ok((c, peak))
}

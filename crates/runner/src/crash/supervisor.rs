//! The supervisor's crash cycles on one private device: start a writer,
//! crash it, have a checker reopen the stores, keep count.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};
use ledgerbench_core::{CrashKind, Durability};
use ledgerbench_driver::crash::{CrashRun, CrashShape, CrashSummary, Cycle};
use ledgerbench_driver::results::StoreSetup;
use ledgerbench_driver::rundir::{RunDir, sanitize};
use ledgerbench_meter::cgroup::MemoryLimit;
use ledgerbench_meter::loopdev::LoopFs;
use ledgerbench_rng::Rng;

use super::reboot::{after_reboot, new_boot_id};
use super::worker::{ACK, Checked, Job, PRIVATE_NS_ENV};
use super::{SAMPLES, WINDOW};
use crate::registry::BackendSpec;

pub(super) struct Supervisor<'a> {
    pub(super) bar: &'a indicatif::ProgressBar,
    pub(super) exe: &'a Path,
    pub(super) shape: &'a CrashShape,
    pub(super) seed: u64,
    pub(super) cycles: u32,
    pub(super) batches: u64,
    pub(super) memory_limit: Option<u64>,
    pub(super) device_size: u64,
}

/// A worker process, killed and reaped on drop whatever happened.
struct Worker(Child);

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One cell of the crash matrix: a backend at a durability level under a
/// crash kind, with the seed of its cycles.
pub(super) struct Cell<'a> {
    pub(super) spec: &'a BackendSpec,
    pub(super) level: Durability,
    pub(super) kind: CrashKind,
    pub(super) seed: u64,
}

/// A cell's private device and what its cycles carry from one to the next.
/// Fields drop in order: the device before its cgroup, both after every
/// worker (each is reaped inside a cycle).
struct Device {
    fs: LoopFs,
    limit: Option<MemoryLimit>,
    /// The stores' directory on the device (absolute: a worker in its own
    /// mount namespace keeps only the loop mount holding this path).
    dir: PathBuf,
    /// The workers' log.
    log: PathBuf,
    /// Per store, batches acknowledged and batches present after the last check.
    acked: Vec<u64>,
    present: Vec<u64>,
    /// The boot id file once a power cut "rebooted" the machine.
    boot: Option<PathBuf>,
    rng: Rng,
}

impl Supervisor<'_> {
    pub(super) fn run(&self, rundir: &RunDir, tag: &str, cell: Cell<'_>) -> CrashRun {
        let mut run = CrashRun {
            backend: cell.spec.name.clone(),
            durability: cell.level,
            kind: cell.kind,
            stores: Vec::new(),
            memory_limit_bytes: self.memory_limit,
            cycles: Vec::new(),
            summary: CrashSummary::default(),
            error: None,
        };
        if let Err(e) = self.cycles_on_device(rundir, tag, &cell, &mut run) {
            run.error = Some(format!("{e:#}"));
        }
        run.summary = CrashSummary::of(&run.cycles, cell.level, cell.kind);
        run
    }

    /// Makes the cell's private device and cgroup under the run directory.
    fn device(&self, rundir: &RunDir, tag: &str, seed: u64) -> anyhow::Result<Device> {
        let root = rundir.path().join("devices");
        std::fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
        let name = sanitize(tag);
        let limit = self
            .memory_limit
            .map(|b| MemoryLimit::create(b, &name))
            .transpose()?;
        let fs = LoopFs::create(
            &root.join(format!("{name}.img")),
            &root.join(&name),
            self.device_size,
            None,
        )?;
        let dir = std::path::absolute(fs.path().join("stores")).context("store path")?;
        Ok(Device {
            fs,
            limit,
            dir,
            log: rundir.path().join(format!("{name}.worker.log")),
            acked: vec![0; self.shape.stores.len()],
            present: vec![0; self.shape.stores.len()],
            boot: None,
            rng: Rng::new(seed),
        })
    }

    fn cycles_on_device(
        &self,
        rundir: &RunDir,
        tag: &str,
        cell: &Cell<'_>,
        run: &mut CrashRun,
    ) -> anyhow::Result<()> {
        let mut dev = self.device(rundir, tag, cell.seed)?;
        for cycle in 0..self.cycles {
            let from = dev.present.iter().copied().min().unwrap_or(0);
            let mut job = Job {
                spec: cell.spec.clone(),
                shape: self.shape.clone(),
                seed: self.seed,
                dir: dev.dir.clone(),
                from,
                batches: self.batches,
                window: Vec::new(),
                upto: Vec::new(),
                samples: SAMPLES,
            };
            let target = 1 + dev.rng.below(self.batches * self.shape.stores.len() as u64);
            let jitter = Duration::from_millis(dev.rng.below(20));
            let (new_acks, compacting) =
                self.write_until_crash(&job, &mut dev, (target, jitter), cell.kind)?;
            if cycle == 0 {
                run.stores = self.setups(cell.spec, &dev.dir);
            }
            let last = cycle + 1 == self.cycles;
            for i in 0..dev.acked.len() {
                let upto = dev.acked[i].max(dev.present[i]) + 2;
                job.upto.push(upto);
                // Dense from below where this cycle's writer started: a
                // batch it rewrote may be the one missing.
                let dense = from.min(dev.acked[i]).saturating_sub(WINDOW);
                job.window.push(if last { 0 } else { dense });
            }
            if last {
                job.samples = u64::MAX;
            }
            let checked = self.check(&job, &dev.log, dev.limit.as_ref(), dev.boot.as_deref())?;
            let c = Cycle {
                cycle,
                acked: dev.acked.clone(),
                new_acks,
                during_compaction: compacting,
                recovery_secs: checked.open_secs,
                open_error: checked.open_error.clone(),
                stores: checked.stores.clone(),
                lost: 0,
                lost_promised: 0,
                reset: false,
            };
            let c = self.judge(c, &checked, cell, &mut dev)?;
            self.bar.set_message(format!(
                "{} acked, {} lost ({} promised)",
                run.cycles.iter().map(|c| c.new_acks).sum::<u64>() + c.new_acks,
                run.cycles.iter().map(|c| c.lost).sum::<u64>() + c.lost,
                run.cycles.iter().map(|c| c.lost_promised).sum::<u64>() + c.lost_promised,
            ));
            self.bar.inc(1);
            run.cycles.push(c);
        }
        Ok(())
    }

    /// Counts what a cycle lost (and what of that the level promised), and
    /// carries the device's state on: a damaged store starts afresh, an
    /// intact one goes on from what was recovered.
    fn judge(
        &self,
        mut c: Cycle,
        checked: &Checked,
        cell: &Cell<'_>,
        dev: &mut Device,
    ) -> anyhow::Result<Cycle> {
        c.lost = c.lost_batches();
        if !cell.level.may_lose(cell.kind) {
            c.lost_promised = c.lost;
        }
        let damaged = c.open_error.is_some()
            || c.stores
                .iter()
                .any(|r| r.torn + r.corrupt + r.out_of_order > 0);
        if damaged {
            // Nothing sound to go on from: start the store afresh.
            remove_stores(&dev.dir, &self.shape.stores)?;
            dev.acked.iter_mut().for_each(|a| *a = 0);
            dev.present.iter_mut().for_each(|p| *p = 0);
            c.reset = true;
        } else {
            for (i, r) in checked.stores.iter().enumerate() {
                dev.present[i] = r.recovered;
                // Lost batches are written again and acknowledged anew.
                dev.acked[i] = dev.acked[i].min(r.recovered);
            }
        }
        Ok(c)
    }

    /// Starts a writer, reads its acknowledgements until the `target`-th,
    /// waits `jitter`, crashes it, and reaps it. Returns the acknowledgements
    /// seen and whether a compaction ran at the last one.
    fn write_until_crash(
        &self,
        job: &Job,
        dev: &mut Device,
        (target, jitter): (u64, Duration),
        kind: CrashKind,
    ) -> anyhow::Result<(u64, Option<bool>)> {
        let (log, limit) = (&dev.log, dev.limit.as_ref());
        let mut w = self.spawn("write", job, log, limit, dev.boot.as_deref())?;
        let stdin = w.0.stdin.take();
        if let Some(mut i) = stdin {
            writeln!(i, "go").context("starting the writer")?;
        }
        let stdout = w.0.stdout.take().context("writer stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let (mut seen, mut compacting) = (0u64, None);
        let acked = &mut dev.acked;
        let mut note = |line: &str, seen: &mut u64, compacting: &mut Option<bool>| {
            let Some(rest) = line.strip_prefix(ACK) else {
                return;
            };
            let mut f = rest.split(' ');
            let (Some(i), Some(b), c) = (f.next(), f.next(), f.next()) else {
                return;
            };
            if let (Ok(i), Ok(b)) = (i.parse::<usize>(), b.parse::<u64>())
                && i < acked.len()
            {
                acked[i] = acked[i].max(b + 1);
                *seen += 1;
                *compacting = match c {
                    Some("1") => Some(true),
                    Some("0") => Some(false),
                    _ => None,
                };
            }
        };
        while seen < target {
            match lines.next() {
                Some(Ok(l)) => note(&l, &mut seen, &mut compacting),
                _ => {
                    // The writer ended by itself: an error, or the memory limit.
                    let status = w.0.wait()?;
                    let oom = limit.and_then(MemoryLimit::oom_kills).filter(|&n| n > 0);
                    let tail = log_tail(log);
                    if let (Some(n), Some(l)) = (oom, limit) {
                        bail!(
                            "the writer was killed by the memory limit of {} MiB ({n} OOM kills, peak {} MiB); raise --memory-limit. {tail}",
                            l.limit() >> 20,
                            l.max_usage().unwrap_or(0) >> 20
                        );
                    }
                    bail!("the writer stopped before its crash ({status}): {tail}");
                }
            }
        }
        std::thread::sleep(jitter);
        // The writer dies first, then the filesystem loses what it had not
        // made stable. The other order (cut, then kill) lets a commit whose
        // fsync was in flight at the cut return success to a process that a
        // real power loss would have stopped: an acknowledgement no real
        // crash can produce, seen as RocksDB "losing" its last synced batch.
        let pid = w.0.id();
        // SAFETY: kill has no memory preconditions; the pid is our unreaped child.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        // Acknowledgements already in the pipe happened before the crash.
        for l in lines.map_while(Result::ok) {
            note(&l, &mut seen, &mut compacting);
        }
        drop(w);
        if kind == CrashKind::PowerCut {
            dev.fs.power_cut()?;
            dev.fs.remount()?;
            // The machine "boots" again: every later worker sees a new boot id.
            let path = dev.log.with_extension("boot_id");
            new_boot_id(&path, &mut dev.rng)?;
            dev.boot = Some(path);
        }
        Ok((seen, compacting))
    }

    /// Reopens the stores in a checker process and reads its verdict.
    fn check(
        &self,
        job: &Job,
        log: &Path,
        limit: Option<&MemoryLimit>,
        boot: Option<&Path>,
    ) -> anyhow::Result<Checked> {
        let mut w = self.spawn("check", job, log, limit, boot)?;
        drop(w.0.stdin.take());
        let mut text = String::new();
        if let Some(mut o) = w.0.stdout.take() {
            std::io::Read::read_to_string(&mut o, &mut text).context("reading the checker")?;
        }
        let status = w.0.wait()?;
        if let Some(line) = text.lines().last().filter(|_| status.success()) {
            return serde_json::from_str(line).context("the checker's answer");
        }
        // A checker that died (SIGBUS on a torn map, an abort) is the
        // store failing to come back, not the harness failing.
        Ok(Checked {
            open_secs: None,
            open_error: Some(format!("the checker died ({status}): {}", log_tail(log))),
            stores: Vec::new(),
        })
    }

    fn spawn(
        &self,
        mode: &str,
        job: &Job,
        log: &Path,
        limit: Option<&MemoryLimit>,
        boot_id: Option<&Path>,
    ) -> anyhow::Result<Worker> {
        let err = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .with_context(|| format!("opening {}", log.display()))?;
        let mut cmd = Command::new(self.exe);
        cmd.args(["crash-worker", mode, &serde_json::to_string(job)?])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(err);
        if let Some(b) = boot_id {
            after_reboot(&mut cmd, b)?;
            cmd.env(PRIVATE_NS_ENV, "1");
        }
        let child = cmd.spawn().context("starting a crash worker")?;
        let w = Worker(child);
        if let Some(l) = limit {
            l.add(w.0.id())?;
        }
        Ok(w)
    }

    fn setups(&self, spec: &BackendSpec, dir: &Path) -> Vec<StoreSetup> {
        self.shape
            .stores
            .iter()
            .map(|s| {
                let version = spec.engine_version(&dir.join(&s.name));
                crate::harness::store_setup(spec, &s.name, version)
            })
            .collect()
    }
}

/// The last lines a worker wrote to its log, for an error message.
fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().rev().take(3).collect();
    if lines.is_empty() {
        format!("(nothing in {})", log.display())
    } else {
        lines.into_iter().rev().collect::<Vec<_>>().join(" / ")
    }
}

/// Removes the stores a test made (and only those: each has ledgerbench's marker).
fn remove_stores(
    dir: &Path,
    stores: &[ledgerbench_driver::crash::StoreShape],
) -> anyhow::Result<()> {
    for s in stores {
        let d = dir.join(&s.name);
        if d.join(ledgerbench_core::fsutil::STORE_MARKER).exists() {
            std::fs::remove_dir_all(&d).with_context(|| format!("removing {}", d.display()))?;
        }
    }
    Ok(())
}

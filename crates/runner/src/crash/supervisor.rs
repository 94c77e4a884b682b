//! The supervisor's crash cycles on one private device: start a writer,
//! crash it, have a checker reopen the stores, keep count.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use ledgerbench_core::{CrashKind, Durability};
use ledgerbench_driver::crash::{CrashRun, CrashShape, CrashSummary, Cycle};
use ledgerbench_driver::results::StoreSetup;
use ledgerbench_driver::rundir::RunDir;
use ledgerbench_meter::cgroup::MemoryLimit;
use ledgerbench_results::crash::{FsCrash, SAMPLES, WINDOW};
use ledgerbench_rng::{Rng, stream};

use super::device::Device;
use super::procs::{self, log_tail};
use super::worker::{ACK, Checked, DONE, Job};
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

/// One cell of the crash matrix: a backend at a durability level under a
/// crash kind, with the seed of its cycles.
pub(super) struct Cell<'a> {
    pub(super) spec: &'a BackendSpec,
    pub(super) level: Durability,
    pub(super) kind: CrashKind,
    pub(super) seed: u64,
}

/// What a writer did before its crash.
struct Written {
    /// Acknowledgements seen.
    acks: u64,
    /// Whether a compaction ran at the last one (engines that report it).
    compacting: Option<bool>,
    /// What the crash filesystem kept (its kinds).
    fs_crash: Option<FsCrash>,
    /// Commits per second from the first acknowledgement to the target.
    commits_per_sec: Option<f64>,
}

/// Stops the run between steps once Ctrl-C or SIGTERM arrived.
fn check_interrupt() -> anyhow::Result<()> {
    match ledgerbench_driver::interrupt::requested() {
        Some(sig) => bail!("interrupted by {sig}"),
        None => Ok(()),
    }
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

    fn cycles_on_device(
        &self,
        rundir: &RunDir,
        tag: &str,
        cell: &Cell<'_>,
        run: &mut CrashRun,
    ) -> anyhow::Result<()> {
        let stores = self.shape.stores.len();
        let mut dev = Device::create(
            rundir,
            tag,
            cell.kind,
            stores,
            self.memory_limit,
            self.device_size,
        )?;
        for cycle in 0..self.cycles {
            check_interrupt()?;
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
                present: dev.present.clone(),
            };
            // Each cycle's choices from streams of its own, so a cell run
            // alone replays the same schedule whatever earlier crashes
            // drew; the crash filesystem's (once per unsynced write) from
            // a second, as the published runs drew them.
            let mut rng = Rng::new(stream(cell.seed, u64::from(cycle), 0));
            let play = Rng::new(stream(cell.seed, u64::from(cycle), 1));
            // The commits the writer will make: a store's batches below
            // what it holds are skipped.
            let planned: u64 = dev
                .present
                .iter()
                .map(|&p| (from + self.batches).saturating_sub(p.max(from)))
                .sum();
            let target = 1 + rng.below(planned.max(1));
            let jitter = Duration::from_millis(rng.below(20));
            let w = self.write_until_crash(
                &job,
                &mut dev,
                (target, jitter),
                cell.kind,
                (&mut rng, play),
            )?;
            check_interrupt()?;
            if cycle == 0 {
                run.stores = self.setups(cell.spec, dev.files());
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
            let (checked, read_bytes) = self.check(&job, &mut dev)?;
            // A checker stopped by the signal's arrival proves nothing.
            check_interrupt()?;
            let c = cycle_of(cycle, w, &checked, read_bytes, dev.acked.clone());
            let c = self.judge(c, &checked, cell, &mut dev)?;
            self.show(run, &c);
            run.cycles.push(c);
        }
        Ok(())
    }

    /// The progress line after cycle `c`: the cell's acknowledgements and
    /// losses so far.
    fn show(&self, run: &CrashRun, c: &Cycle) {
        let sum = |f: fn(&Cycle) -> u64| run.cycles.iter().map(f).sum::<u64>() + f(c);
        self.bar.set_message(format!(
            "{} acked, {} lost ({} promised)",
            sum(|c| c.new_acks),
            sum(|c| c.lost),
            sum(|c| c.lost_promised),
        ));
        self.bar.inc(1);
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
        if c.damaged() {
            // Nothing sound to go on from: start the store afresh.
            super::device::remove_stores(dev.files(), &self.shape.stores)?;
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
    /// waits `jitter` (or cuts the crash filesystem a few changes on),
    /// crashes it, and reaps it.
    fn write_until_crash(
        &self,
        job: &Job,
        dev: &mut Device,
        (target, jitter): (u64, Duration),
        kind: CrashKind,
        (rng, mut play): (&mut Rng, Rng),
    ) -> anyhow::Result<Written> {
        dev.mount()?;
        let (log, limit) = (&dev.log, dev.limit.as_ref());
        let mut w = procs::spawn(self.exe, "write", job, log, limit, dev.boot.as_ref())?;
        let stdin = w.0.stdin.take();
        if let Some(mut i) = stdin {
            writeln!(i, "go").context("starting the writer")?;
        }
        let stdout = w.0.stdout.take().context("writer stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let (mut seen, mut compacting) = (0u64, None);
        let mut first_ack = None;
        while seen < target {
            match lines.next() {
                // Every batch written: crash it idle.
                Some(Ok(l)) if l == DONE => break,
                Some(Ok(l)) => {
                    note_ack(&l, &mut dev.acked, &mut seen, &mut compacting);
                    first_ack = first_ack.or((seen > 0).then(std::time::Instant::now));
                }
                // The writer ended by itself: an error, or the memory limit.
                _ => return Err(writer_stopped(&mut w.0, log, limit)),
            }
        }
        let commits_per_sec = first_ack
            .filter(|_| seen > 1)
            .map(|t| (seen - 1) as f64 / t.elapsed().as_secs_f64());
        match dev.crash_fs.as_ref().and_then(|c| c.mounted.as_ref()) {
            Some(m) => cut_at_a_change(m, seen, rng),
            None => std::thread::sleep(jitter),
        }
        // The writer dies first, then the filesystem loses what it had not
        // made stable. The other order (cut, then kill) lets a commit whose
        // fsync was in flight at the cut return success to a process that a
        // real power loss would have stopped: an acknowledgement no real
        // crash can produce, seen as RocksDB "losing" its last synced batch.
        w.kill_group();
        if let Some(m) = dev.crash_fs.as_ref().and_then(|c| c.mounted.as_ref()) {
            m.release();
        }
        // Acknowledgements already in the pipe happened before the crash.
        for l in lines.map_while(Result::ok) {
            note_ack(&l, &mut dev.acked, &mut seen, &mut compacting);
        }
        // Its children too (a Go sidecar) must be gone before a power cut
        // remounts: their open files keep the filesystem busy.
        w.reap_group();
        let mut fs_crash = None;
        if kind == CrashKind::PowerCut {
            dev.fs.power_cut()?;
            dev.fs.remount()?;
            dev.reboot(rng);
        }
        if let Some(c) = &mut dev.crash_fs
            && let Some(m) = c.mounted.take()
        {
            let fault = c.fault;
            fs_crash = Some(m.crash(fault, &mut play).context("playing the crash")?);
            dev.reboot(rng);
        }
        Ok(Written {
            acks: seen,
            compacting,
            fs_crash,
            commits_per_sec,
        })
    }

    /// Reopens the stores in a checker process (from a cold page cache) and
    /// reads its verdict, with the device bytes read until its first read.
    fn check(&self, job: &Job, dev: &mut Device) -> anyhow::Result<(Checked, Option<u64>)> {
        // After the crash filesystem played its crash, its backing
        // directory holds what survived: the checker opens it there, so
        // recovery is the engine's on the device, not through FUSE.
        let job = &Job {
            dir: dev.files().to_path_buf(),
            ..job.clone()
        };
        // Recovery reads what it needs from the device, not from what the
        // writer left cached: the figure is the engine's, whatever the kind.
        // A remount writes back and empties this device's page cache alone
        // (the loop device does direct I/O: the host keeps no copy), where
        // dropping every cache would also evict the binaries the next
        // worker starts from and the data of a run beside this one.
        dev.fs
            .remount()
            .context("remounting the device for a cold recovery")?;
        let before = dev.fs.stat().ok();
        let w = procs::spawn(
            self.exe,
            "check",
            job,
            &dev.log,
            dev.limit.as_ref(),
            dev.boot.as_ref(),
        )?;
        let mut read = None;
        let fs = &dev.fs;
        let checked = procs::check(w, &dev.log, &mut || {
            read = before
                .as_ref()
                .zip(fs.stat().ok())
                .map(|(b, a)| a.since(b).read_bytes());
        })?;
        Ok((checked, read))
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

/// Cycle `cycle` as written and checked, before it is judged.
fn cycle_of(
    cycle: u32,
    w: Written,
    checked: &Checked,
    read_bytes: Option<u64>,
    acked: Vec<u64>,
) -> Cycle {
    Cycle {
        cycle,
        acked,
        new_acks: w.acks,
        during_compaction: w.compacting,
        recovery_secs: checked.open_secs,
        open_error: checked.open_error.clone(),
        stores: checked.stores.clone(),
        lost: 0,
        lost_promised: 0,
        reset: false,
        first_read_secs: checked.first_read_secs,
        recovery_read_bytes: read_bytes,
        fs_crash: w.fs_crash,
        commits_per_sec: w.commits_per_sec,
    }
}

/// Reads a writer's acknowledgement line (`ACK store batch compacting`)
/// into `acked`, counting it in `seen`; other lines are ignored.
fn note_ack(line: &str, acked: &mut [u64], seen: &mut u64, compacting: &mut Option<bool>) {
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
}

/// Why a writer ended before its crash: the memory limit (its OOM kills
/// and peak), or its own exit, with its log's last lines.
fn writer_stopped(
    child: &mut std::process::Child,
    log: &std::path::Path,
    limit: Option<&MemoryLimit>,
) -> anyhow::Error {
    let status = match child.wait() {
        Ok(s) => s.to_string(),
        Err(e) => return e.into(),
    };
    let oom = limit.and_then(MemoryLimit::oom_kills).filter(|&n| n > 0);
    let tail = log_tail(log);
    if let (Some(n), Some(l)) = (oom, limit) {
        return anyhow::anyhow!(
            "the writer was killed by the memory limit of {} MiB ({n} OOM kills, peak {} MiB); raise --memory-limit. {tail}",
            l.limit() >> 20,
            l.max_usage().unwrap_or(0) >> 20
        );
    }
    anyhow::anyhow!("the writer stopped before its crash ({status}): {tail}")
}

/// On the crash filesystem the cut comes at a change, not at a time: a
/// few changes past the target acknowledgement (`seen` of them made), so
/// it lands anywhere in a commit's writes and syncs alike. Waits until the
/// cut, or until the writer stops changing anything (it finished its
/// batches and idles).
fn cut_at_a_change(m: &ledgerbench_crashfs::Mounted, seen: u64, rng: &mut Rng) {
    let per_ack = m.ops().div_ceil(seen.max(1));
    m.cut_after(rng.below(2 * per_ack + 1));
    let (mut last, mut since) = (m.ops(), std::time::Instant::now());
    while !m.frozen() && since.elapsed() < Duration::from_millis(100) {
        std::thread::sleep(Duration::from_millis(1));
        if m.ops() != last {
            (last, since) = (m.ops(), std::time::Instant::now());
        }
    }
}

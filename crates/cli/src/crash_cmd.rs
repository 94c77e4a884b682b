//! `kvbench run crash`: the supervisor. For each backend x durability level
//! x crash kind it makes a private ext4 loop device, starts writer
//! processes that commit batches and acknowledge them, ends each at a
//! random acknowledgement (kill -9, or a power cut: the filesystem shut
//! down without flushing its journal, then remounted), and has a checker
//! process reopen the stores and say what survived. It owns every device,
//! mount and cgroup, and removes them whatever happens to its workers.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};
use kvbench_core::{CrashKind, Durability};
use kvbench_driver::crash::{CrashResults, CrashRun, CrashShape, CrashSummary, Cycle};
use kvbench_driver::results::StoreSetup;
use kvbench_driver::rundir::{RunDir, sanitize};
use kvbench_driver::timefmt;
use kvbench_meter::cgroup::MemoryLimit;
use kvbench_meter::loopdev::LoopFs;
use kvbench_workload::rng::{Rng, stream};

use crate::crash_worker::{ACK, Checked, Job};
use crate::registry::{BackendSpec, EngineConfig};
use crate::{registry, size, stellar_cmd};

/// Options of `kvbench run crash`.
#[derive(clap::Args)]
pub struct Args {
    /// Backends, comma-separated.
    #[arg(long, default_value = "rocksdb-leveled,rocksdb-fifo,lmdb,mdbx")]
    backends: String,
    /// Durability levels to test, comma-separated: none, process, power.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "none,process,power",
        value_delimiter = ','
    )]
    durability: Vec<Durability>,
    /// Crash kinds, comma-separated: kill (kill -9), power-cut.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "kill,power-cut",
        value_delimiter = ','
    )]
    kinds: Vec<String>,
    /// Crash cycles per backend, level and kind.
    #[arg(long, default_value_t = 50)]
    cycles: u32,
    /// What each batch writes: generic (200 random 32-byte keys x 1,000 B)
    /// or stellar (the ledgers, txdata and txindex stores).
    #[arg(long, default_value = "generic")]
    shape: String,
    /// Most batches a writer commits before it is crashed; the crash comes
    /// after a random number of acknowledgements up to this.
    #[arg(long, default_value_t = 100)]
    batches_per_cycle: u64,
    /// Seed of the batches and the crash points.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Memory cgroup limit of the writer and the checker (page cache
    /// included), so crashes also hit a store larger than memory.
    #[arg(long, value_name = "SIZE")]
    memory_limit: Option<String>,
    /// Memory budget of each engine (memtables, block cache). Small, so
    /// RocksDB flushes and compacts often and crashes land in compactions.
    #[arg(long, value_name = "SIZE", default_value = "16MiB")]
    engine_memory: String,
    /// Engine setting, BACKEND.KEY=VALUE (TOML value); repeatable.
    #[arg(long = "set", value_name = "BACKEND.KEY=VALUE")]
    sets: Vec<String>,
    /// Size of each private device (sparse).
    #[arg(long, value_name = "SIZE", default_value = "8GiB")]
    device_size: String,
    /// Output directory (must not exist, or be empty).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Write into an existing non-empty --out directory.
    #[arg(long)]
    force: bool,
    /// Run even from a debug build.
    #[arg(long)]
    allow_debug: bool,
}

/// Batches below the last acknowledged ones checked at random every cycle
/// (all of them at the last cycle).
const SAMPLES: u64 = 32;
/// Batches below the cycle's first write checked in full every cycle (all
/// from there up are).
const WINDOW: u64 = 64;

fn parse_kind(s: &str) -> anyhow::Result<CrashKind> {
    match s.trim() {
        "kill" => Ok(CrashKind::Kill),
        "power-cut" => Ok(CrashKind::PowerCut),
        other => bail!("unknown crash kind `{other}`; accepted: kill, power-cut"),
    }
}

/// The specs under test at `level`, with the crash test's engine settings.
fn spec(
    name: &str,
    level: Durability,
    memory: u64,
    sets: &[String],
) -> anyhow::Result<BackendSpec> {
    let mut specs = registry::parse_list(name, level)?;
    for s in &mut specs {
        s.scale_memory(memory);
        if let EngineConfig::Rocksdb(c) = &mut s.config {
            // Compactions early and often, so crashes land in them; FIFO's
            // cap above anything a test writes, so eviction is not loss.
            c.level0_file_num_compaction_trigger = 4;
            if let kvbench_rocksdb::Compaction::Fifo {
                max_table_files_size,
            } = &mut c.compaction
            {
                *max_table_files_size = 16 << 30;
            }
        }
    }
    let sets: Vec<String> = sets
        .iter()
        .filter(|l| l.starts_with(&format!("{name}.")))
        .cloned()
        .collect();
    registry::apply_sets(&mut specs, &sets)?;
    let s = specs.remove(0);
    s.check_durability(level)?;
    Ok(s)
}

/// Runs `kvbench run crash`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    stellar_cmd::check_build(cfg!(debug_assertions), args.allow_debug)?;
    LoopFs::available().map_err(|e| {
        anyhow::anyhow!("kvbench run crash needs root and loop devices (a power cut is simulated on a private ext4 filesystem): {e}")
    })?;
    let shape = CrashShape::by_name(&args.shape).map_err(anyhow::Error::msg)?;
    let kinds: Vec<CrashKind> = args
        .kinds
        .iter()
        .map(|k| parse_kind(k))
        .collect::<anyhow::Result<_>>()?;
    if args.cycles == 0 || args.batches_per_cycle == 0 {
        bail!("--cycles and --batches-per-cycle must be at least 1");
    }
    let memory = size::parse(&args.engine_memory).map_err(anyhow::Error::msg)?;
    let device_size = size::parse(&args.device_size).map_err(anyhow::Error::msg)?;
    let memory_limit = args
        .memory_limit
        .as_deref()
        .map(crate::harness::memory_limit)
        .transpose()?;
    // Every spec is checked before anything is created.
    let names: Vec<String> = registry::parse_list(&args.backends, Durability::None)?
        .into_iter()
        .map(|s| s.name)
        .collect();
    let mut plan = Vec::new();
    for name in &names {
        for &level in &args.durability {
            let s = spec(name, level, memory, &args.sets)?;
            for &kind in &kinds {
                plan.push((s.clone(), level, kind));
            }
        }
    }
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from("kvbench-runs").join(format!("crash-{}", timefmt::now_stamp()))
    });
    let rundir = RunDir::create(&out, args.force)?;
    let mut results = CrashResults {
        schema_version: kvbench_driver::results::SCHEMA_VERSION,
        kvbench_version: env!("CARGO_PKG_VERSION").to_string(),
        workload: "crash".into(),
        seed: args.seed,
        started_at: timefmt::now_rfc3339(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        env: kvbench_driver::env::EnvInfo::capture(&out),
        shape: shape.clone(),
        batches_per_cycle: args.batches_per_cycle,
        runs: Vec::new(),
    };
    let exe = std::env::current_exe().context("finding the kvbench binary")?;
    for (n, (spec, level, kind)) in plan.into_iter().enumerate() {
        let tag = format!(
            "{}-{}-{}",
            spec.name,
            level,
            kvbench_report::crash::kind_name(kind)
        );
        eprintln!("[{tag}] {} cycles...", args.cycles);
        let sup = Supervisor {
            exe: &exe,
            shape: &shape,
            seed: args.seed,
            cycles: args.cycles,
            batches: args.batches_per_cycle,
            memory_limit,
            device_size,
        };
        let run = sup.run(
            &rundir,
            &tag,
            spec,
            level,
            kind,
            stream(args.seed, n as u64, 0),
        );
        eprintln!(
            "[{tag}] {}",
            kvbench_report::crash::one_line(&run.summary, run.error.as_deref())
        );
        results.runs.push(run);
        stellar_cmd::write_json(&out.join("results.json"), &results)?;
    }
    let table = kvbench_report::crash::crash_table(&results);
    std::fs::write(out.join("summary.md"), &table)
        .with_context(|| format!("writing {}", out.join("summary.md").display()))?;
    println!("{table}");
    eprintln!("results: {}", out.join("results.json").display());
    Ok(ExitCode::SUCCESS)
}

struct Supervisor<'a> {
    exe: &'a Path,
    shape: &'a CrashShape,
    seed: u64,
    cycles: u32,
    batches: u64,
    memory_limit: Option<u64>,
    device_size: u64,
}

/// A worker process, killed and reaped on drop whatever happened.
struct Worker(Child);

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Supervisor<'_> {
    fn run(
        &self,
        rundir: &RunDir,
        tag: &str,
        spec: BackendSpec,
        level: Durability,
        kind: CrashKind,
        seed: u64,
    ) -> CrashRun {
        let mut run = CrashRun {
            backend: spec.name.clone(),
            durability: level,
            kind,
            stores: Vec::new(),
            memory_limit_bytes: self.memory_limit,
            cycles: Vec::new(),
            summary: CrashSummary::default(),
            error: None,
        };
        if let Err(e) = self.cycles_on_device(rundir, tag, &spec, level, kind, seed, &mut run) {
            run.error = Some(format!("{e:#}"));
        }
        run.summary = CrashSummary::of(&run.cycles, level, kind);
        run
    }

    #[allow(clippy::too_many_arguments)]
    fn cycles_on_device(
        &self,
        rundir: &RunDir,
        tag: &str,
        spec: &BackendSpec,
        level: Durability,
        kind: CrashKind,
        seed: u64,
        run: &mut CrashRun,
    ) -> anyhow::Result<()> {
        let root = rundir.path().join("devices");
        std::fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
        let name = sanitize(tag);
        // Dropped in reverse order: the cgroup after the device, both after
        // every worker (each is reaped inside `cycle`).
        let limit = self
            .memory_limit
            .map(|b| MemoryLimit::create(b, &name))
            .transpose()?;
        let mut fs = LoopFs::create(
            &root.join(format!("{name}.img")),
            &root.join(&name),
            self.device_size,
            128,
        )?;
        // Absolute: a worker in its own mount namespace keeps only the loop
        // mount holding this path.
        let dir = std::path::absolute(fs.path().join("stores")).context("store path")?;
        let log = rundir.path().join(format!("{name}.worker.log"));
        let mut acked = vec![0u64; self.shape.stores.len()];
        let mut present = vec![0u64; self.shape.stores.len()];
        let mut rng = Rng::new(seed);
        let mut boot: Option<PathBuf> = None;
        for cycle in 0..self.cycles {
            let from = present.iter().copied().min().unwrap_or(0);
            let mut job = Job {
                spec: spec.clone(),
                shape: self.shape.clone(),
                seed: self.seed,
                dir: dir.clone(),
                from,
                batches: self.batches,
                window: Vec::new(),
                upto: Vec::new(),
                samples: SAMPLES,
            };
            let target = 1 + rng.below(self.batches * self.shape.stores.len() as u64);
            let jitter = Duration::from_millis(rng.below(20));
            let (new_acks, compacting) = self.write_until_crash(
                &job,
                &log,
                limit.as_ref(),
                target,
                jitter,
                kind,
                &mut fs,
                &mut acked,
                &mut boot,
                &mut rng,
            )?;
            if cycle == 0 {
                run.stores = self.setups(spec, &dir);
            }
            let last = cycle + 1 == self.cycles;
            for i in 0..acked.len() {
                let upto = acked[i].max(present[i]) + 2;
                job.upto.push(upto);
                // Dense from below where this cycle's writer started: a
                // batch it rewrote may be the one missing.
                let dense = from.min(acked[i]).saturating_sub(WINDOW);
                job.window.push(if last { 0 } else { dense });
            }
            if last {
                job.samples = u64::MAX;
            }
            let checked = self.check(&job, &log, limit.as_ref(), boot.as_deref())?;
            let mut c = Cycle {
                cycle,
                acked: acked.clone(),
                new_acks,
                during_compaction: compacting,
                recovery_secs: checked.open_secs,
                open_error: checked.open_error.clone(),
                stores: checked.stores.clone(),
                lost: 0,
                lost_promised: 0,
                reset: false,
            };
            for (i, r) in checked.stores.iter().enumerate() {
                let lost = acked[i].saturating_sub(r.recovered);
                c.lost += lost;
                if !level.may_lose(kind) {
                    c.lost_promised += lost;
                }
            }
            let damaged = c.open_error.is_some()
                || c.stores
                    .iter()
                    .any(|r| r.torn + r.corrupt + r.out_of_order > 0);
            if damaged {
                // Nothing sound to go on from: start the store afresh.
                remove_stores(&dir, &self.shape.stores)?;
                acked.iter_mut().for_each(|a| *a = 0);
                present.iter_mut().for_each(|p| *p = 0);
                c.reset = true;
            } else {
                for (i, r) in checked.stores.iter().enumerate() {
                    present[i] = r.recovered;
                    // Lost batches are written again and acknowledged anew.
                    acked[i] = acked[i].min(r.recovered);
                }
            }
            run.cycles.push(c);
        }
        drop(fs);
        drop(limit);
        Ok(())
    }

    /// Starts a writer, reads its acknowledgements until the `target`-th,
    /// waits `jitter`, crashes it, and reaps it. Returns the acknowledgements
    /// seen and whether a compaction ran at the last one.
    #[allow(clippy::too_many_arguments)]
    fn write_until_crash(
        &self,
        job: &Job,
        log: &Path,
        limit: Option<&MemoryLimit>,
        target: u64,
        jitter: Duration,
        kind: CrashKind,
        fs: &mut LoopFs,
        acked: &mut [u64],
        boot: &mut Option<PathBuf>,
        rng: &mut Rng,
    ) -> anyhow::Result<(u64, Option<bool>)> {
        let mut w = self.spawn("write", job, log, limit, boot.as_deref())?;
        let stdin = w.0.stdin.take();
        if let Some(mut i) = stdin {
            writeln!(i, "go").context("starting the writer")?;
        }
        let stdout = w.0.stdout.take().context("writer stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let (mut seen, mut compacting) = (0u64, None);
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
        if kind == CrashKind::PowerCut {
            fs.power_cut()?;
        }
        let pid = w.0.id();
        // SAFETY: kill has no memory preconditions; the pid is our unreaped child.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        // Acknowledgements already in the pipe happened before the crash.
        for l in lines.map_while(Result::ok) {
            note(&l, &mut seen, &mut compacting);
        }
        drop(w);
        if kind == CrashKind::PowerCut {
            fs.remount()?;
            // The machine "boots" again: every later worker sees a new boot id.
            let path = log.with_extension("boot_id");
            new_boot_id(&path, rng)?;
            *boot = Some(path);
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
            cmd.env(crate::crash_worker::PRIVATE_NS_ENV, "1");
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
            .map(|s| StoreSetup {
                store: s.name.clone(),
                backend: spec.name.clone(),
                engine_version: spec.engine_version(&dir.join(&s.name)),
                config: serde_json::to_value(&spec.config).unwrap_or_default(),
                durability: Some(spec.durability()),
            })
            .collect()
    }
}

/// Makes the worker see `boot_id` as the machine's boot id, in a mount
/// namespace of its own. A real power cut is also a reboot, and MDBX tells
/// a process crash (page cache intact: recent unsynced commits may be kept)
/// from a system crash (roll back to the last synced commit) by comparing
/// the boot id in its meta pages with the machine's. A simulated cut keeps
/// the machine running, so without this MDBX would trust pages the cut threw
/// away. It must happen before exec: MDBX reads the boot id at load time.
fn after_reboot(cmd: &mut Command, boot_id: &Path) -> anyhow::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::process::CommandExt;
    let src = std::ffi::CString::new(boot_id.as_os_str().as_bytes())?;
    let dst = c"/proc/sys/kernel/random/boot_id";
    let root = c"/";
    // SAFETY: the closure runs between fork and exec and makes only raw
    // system calls on C strings prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let none = std::ptr::null();
            if libc::unshare(libc::CLONE_NEWNS) != 0
                || libc::mount(
                    none,
                    root.as_ptr(),
                    none,
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ) != 0
                || libc::mount(
                    src.as_ptr(),
                    dst.as_ptr(),
                    none,
                    libc::MS_BIND,
                    std::ptr::null(),
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(())
}

/// Writes a fresh boot id (a random UUID, as the kernel prints one) to `path`.
fn new_boot_id(path: &Path, rng: &mut Rng) -> anyhow::Result<()> {
    let (a, b) = (rng.next_u64(), rng.next_u64());
    let hex = format!("{a:016x}{b:016x}");
    let id = format!(
        "{}-{}-{}-{}-{}\n",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    );
    std::fs::write(path, id).with_context(|| format!("writing {}", path.display()))
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

/// Removes the stores a test made (and only those: each has kvbench's marker).
fn remove_stores(dir: &Path, stores: &[kvbench_driver::crash::StoreShape]) -> anyhow::Result<()> {
    for s in stores {
        let d = dir.join(&s.name);
        if d.join(kvbench_core::fsutil::STORE_MARKER).exists() {
            std::fs::remove_dir_all(&d).with_context(|| format!("removing {}", d.display()))?;
        }
    }
    Ok(())
}

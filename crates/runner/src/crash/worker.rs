//! The processes `ledgerbench run crash` starts: a writer that commits numbered
//! batches and acknowledges each on stdout until it is killed, and a
//! checker that reopens the stores after the crash and prints what they
//! hold as one JSON line. Both run the engine; the supervisor never does,
//! so a crashing engine (SIGBUS, abort) cannot take the supervisor down.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use ledgerbench_core::{Batch, KvStore};
use ledgerbench_driver::crash::{self, CrashShape, Recovered};
use serde::{Deserialize, Serialize};

use crate::registry::BackendSpec;

/// What a worker is told (as one JSON argument).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    /// The engine config.
    pub spec: BackendSpec,
    /// What each batch writes.
    pub shape: CrashShape,
    /// Seed of keys and values.
    pub seed: u64,
    /// Directory holding one subdirectory per store.
    pub dir: PathBuf,
    /// Writer: first batch number.
    pub from: u64,
    /// Writer: batches to commit before idling.
    pub batches: u64,
    /// Checker: per store, the batch from which every batch is checked.
    pub window: Vec<u64>,
    /// Checker: per store, the batch past the last one to check.
    pub upto: Vec<u64>,
    /// Checker: random batches checked below the window.
    pub samples: u64,
    /// Writer: per store, batches already there (recovered by the last
    /// check): not written again, since a batch that overwrites and deletes
    /// earlier keys cannot be replayed over later ones.
    #[serde(default)]
    pub present: Vec<u64>,
}

/// The checker's answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Checked {
    /// Time to open every store, seconds.
    pub open_secs: Option<f64>,
    /// Time from the start of the open to the first read's answer, seconds.
    #[serde(default)]
    pub first_read_secs: Option<f64>,
    /// Why a store did not open.
    pub open_error: Option<String>,
    /// Per store, what it held.
    pub stores: Vec<Recovered>,
}

/// Acknowledgement line prefix: `ack STORE BATCH COMPACTING`.
pub const ACK: &str = "ack ";

/// The writer's line once it has committed every batch of its job (it then
/// idles with the stores open until the crash).
pub const DONE: &str = "done";

/// The checker's line once its first read returned; it then waits for a
/// line on stdin (the supervisor reads the device's counters meanwhile).
pub const OPENED: &str = "opened";

/// `ledgerbench crash-worker write|check JOB_JSON`.
#[derive(clap::Args)]
pub struct Args {
    /// `write` or `check`.
    mode: String,
    /// The job, as JSON.
    job: String,
}

/// Set when the worker runs in a mount namespace of its own (see the
/// supervisor's simulated reboot).
pub const PRIVATE_NS_ENV: &str = "LEDGERBENCH_PRIVATE_MOUNT_NS";

/// Detaches, in this process's private mount namespace, every loop-device
/// mount but the one holding `dir`: the namespace copied them all, and a
/// copy would keep another run's filesystem alive across its remount.
fn drop_foreign_loop_mounts(dir: &std::path::Path) {
    // Relative, it would match no mount point: its own mount would go, and
    // the engine would write beneath it.
    let Ok(dir) = std::path::absolute(dir) else {
        return;
    };
    for m in ledgerbench_meter::mounts::table() {
        if m.source.starts_with("/dev/loop")
            && !dir.starts_with(&m.mount_point)
            && let Ok(c) = std::ffi::CString::new(m.mount_point)
        {
            // SAFETY: a valid C string; MNT_DETACH only unhooks the mount here.
            unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
        }
    }
}

/// Asks the kernel to kill this process when its parent dies, so a
/// supervisor killed by -9 leaves no writer running (`ledgerbench clean` then
/// removes its device and cgroup).
pub fn die_with_parent() {
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number and no pointers.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
}

fn open_all(job: &Job) -> anyhow::Result<Vec<Box<dyn KvStore>>> {
    job.shape
        .stores
        .iter()
        .map(|s| {
            let dir = job.dir.join(&s.name);
            job.spec
                .open(&dir)
                .with_context(|| format!("opening store `{}` in {}", s.name, dir.display()))
        })
        .collect()
}

/// Runs a worker.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    die_with_parent();
    // Ctrl-C reaches the whole process group; the supervisor alone decides
    // how the run ends (a checker dying of it would read as a failed open).
    // SAFETY: setting a signal's disposition to ignore has no preconditions.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    let job: Job = serde_json::from_str(&args.job).context("crash-worker job")?;
    if std::env::var_os(PRIVATE_NS_ENV).is_some() {
        drop_foreign_loop_mounts(&job.dir);
    }
    match args.mode.as_str() {
        "write" => write(&job),
        "check" => check(&job),
        other => anyhow::bail!("crash-worker mode `{other}`: expected write or check"),
    }
}

fn write(job: &Job) -> anyhow::Result<ExitCode> {
    // Start when the supervisor is reading acknowledgements.
    let mut go = String::new();
    std::io::stdin().lock().read_line(&mut go)?;
    let stores = open_all(job)?;
    let mut out = std::io::stdout().lock();
    let mut b = Batch::new();
    for n in job.from..job.from + job.batches {
        for (i, (shape, st)) in job.shape.stores.iter().zip(&stores).enumerate() {
            if job.present.get(i).is_some_and(|&p| n < p) {
                continue;
            }
            crash::shape::batch(job.seed, shape, i, n, &mut b);
            st.write(&b)
                .with_context(|| format!("store `{}`, batch {n}", shape.name))?;
            let compacting = match st.stats().ok().and_then(|s| s.running_compactions) {
                Some(c) => u8::from(c > 0).to_string(),
                None => "-".into(),
            };
            writeln!(out, "{ACK}{i} {n} {compacting}")?;
            out.flush()?;
        }
    }
    writeln!(out, "{DONE}")?;
    out.flush()?;
    // Idle with the stores open until the crash comes.
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// Reads the first batch's first key of the first store (found or not, an
/// answer), says so, and waits for the supervisor's go.
fn first_read(job: &Job, stores: &[Box<dyn KvStore>], t: Instant) -> anyhow::Result<Option<f64>> {
    let (Some(shape), Some(st)) = (job.shape.stores.first(), stores.first()) else {
        return Ok(None);
    };
    let (mut k, mut v) = (Vec::new(), Vec::new());
    crash::shape::key(job.seed, shape, 0, 0, 0, &mut k);
    let secs = st
        .get_into(&k, &mut v)
        .ok()
        .map(|_| t.elapsed().as_secs_f64());
    let mut out = std::io::stdout().lock();
    writeln!(out, "{OPENED}")?;
    out.flush()?;
    let mut go = String::new();
    std::io::stdin().lock().read_line(&mut go)?;
    Ok(secs)
}

/// Reads every file under `dir` once, sequentially, into the page cache.
/// Errors are ignored: a file an engine removes meanwhile only stays cold.
fn warm(dir: &std::path::Path) {
    let mut buf = vec![0u8; 1 << 20];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(listing) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in listing.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => {
                    if let Ok(f) = std::fs::File::open(e.path()) {
                        let _ = warm_file(&f, &mut buf);
                    }
                }
                _ => {}
            }
        }
    }
}

/// Reads a file's data extents only (returns the bytes read): engines
/// preallocate large sparse files (Badger's value log), whose holes need
/// no reading.
fn warm_file(f: &std::fs::File, buf: &mut [u8]) -> u64 {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::FileExt;
    let fd = f.as_raw_fd();
    let (mut pos, mut read): (libc::off_t, u64) = (0, 0);
    loop {
        // SAFETY: lseek on an open descriptor only moves its offset.
        let data = unsafe { libc::lseek(fd, pos, libc::SEEK_DATA) };
        if data < 0 {
            return read;
        }
        // SAFETY: as above.
        let hole = unsafe { libc::lseek(fd, data, libc::SEEK_HOLE) };
        if hole <= data {
            return read;
        }
        let mut at = data as u64;
        while at < hole as u64 {
            let want = buf.len().min((hole as u64 - at) as usize);
            match f.read_at(&mut buf[..want], at) {
                Ok(n) if n > 0 => (at, read) = (at + n as u64, read + n as u64),
                _ => return read,
            }
        }
        pos = hole;
    }
}

fn check(job: &Job) -> anyhow::Result<ExitCode> {
    let t = Instant::now();
    let result = match open_all(job) {
        Err(e) => Checked {
            open_secs: None,
            first_read_secs: None,
            open_error: Some(format!("{e:#}")),
            stores: Vec::new(),
        },
        Ok(stores) => {
            let open_secs = Some(t.elapsed().as_secs_f64());
            let first_read_secs = first_read(job, &stores, t)?;
            // Recovery is measured: the rest of the check reads at memory
            // speed, not one device read per key (a 50-cycle cell's checks
            // took minutes cold).
            warm(&job.dir);
            let recovered = job
                .shape
                .stores
                .iter()
                .zip(&stores)
                .enumerate()
                .map(|(i, (shape, st))| {
                    crash::verify(
                        job.seed,
                        shape,
                        i,
                        &**st,
                        job.window[i],
                        job.upto[i],
                        job.samples,
                    )
                })
                .collect();
            for st in stores {
                st.close()?;
            }
            Checked {
                open_secs,
                first_read_secs,
                open_error: None,
                stores: recovered,
            }
        }
    };
    println!("{}", serde_json::to_string(&result)?);
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use std::io::{Seek, SeekFrom, Write};

    #[test]
    fn warming_reads_a_sparse_files_data_and_not_its_holes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut f = std::fs::File::create_new(dir.path().join("sparse")).expect("create");
        // 8 KiB of data at the start and 4 KiB at 48 MiB, in a 64 MiB file.
        f.write_all(&[1u8; 8192]).expect("write");
        f.seek(SeekFrom::Start(48 << 20)).expect("seek");
        f.write_all(&[2u8; 4096]).expect("write");
        f.set_len(64 << 20).expect("size");
        let f = std::fs::File::open(dir.path().join("sparse")).expect("open");
        let read = super::warm_file(&f, &mut vec![0u8; 1 << 20]);
        // A filesystem may report data in whole blocks or extents, never
        // the 64 MiB of holes.
        assert!((12_288..=4 << 20).contains(&read), "{read} bytes read");
    }
}

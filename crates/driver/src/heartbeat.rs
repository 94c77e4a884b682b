//! A supervised worker's heartbeat: the supervisor's watchdog
//! (`ledgerbench_runner::watchdog`) ends a worker whose heartbeat stops.
//! Progress displays beat on every event and hot loops every few thousand
//! operations; stamps are written at most every [`BEAT_EVERY`], so a hot
//! loop pays a lock and a clock read per beat, nothing per operation.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The heartbeat file in the run directory (removed by the supervisor
/// after each worker): its time is the last progress, its text the phase.
pub const HEARTBEAT: &str = ".ledgerbench-heartbeat";
/// Least time between two stamps of the heartbeat.
pub const BEAT_EVERY: Duration = Duration::from_millis(500);

/// When and in what phase the worker last stamped its heartbeat.
struct Beat {
    last: Option<Instant>,
    phase: String,
}

static BEAT: Mutex<Beat> = Mutex::new(Beat {
    last: None,
    phase: String::new(),
});

/// The heartbeat file, in a supervised worker (only it is given its run
/// directory); read once, so a process that is none pays nothing per call.
fn file() -> Option<&'static Path> {
    static FILE: OnceLock<Option<PathBuf>> = OnceLock::new();
    FILE.get_or_init(|| {
        std::env::var_os(crate::rundir::RUN_DIR_ENV).map(|d| Path::new(&d).join(HEARTBEAT))
    })
    .as_deref()
}

/// Notes progress in `phase` (the current one when `None`): stamps the
/// heartbeat when this process is a supervised worker, at most every
/// [`BEAT_EVERY`] unless the phase changed.
pub fn beat(phase: Option<&str>) {
    let Some(path) = file() else { return };
    let Ok(mut b) = BEAT.lock() else { return };
    let changed = phase.is_some_and(|p| p != b.phase);
    if let Some(p) = phase {
        p.clone_into(&mut b.phase);
    }
    if !changed && b.last.is_some_and(|t| t.elapsed() < BEAT_EVERY) {
        return;
    }
    b.last = Some(Instant::now());
    // Rewritten whole: its time is the beat, its text the phase. A failed
    // write only weakens the watchdog; the run itself goes on.
    let _ = std::fs::write(path, b.phase.as_bytes());
}

//! Checkpointed Stellar runs: what a run directory keeps so that
//! `ledgerbench run stellar --resume DIR` can go on from the last complete
//! batch after a kill, an OOM or a reboot.
//!
//! Three things make a checkpoint: the stores themselves (kept on their
//! images, or in the run directory, and synced after every batch), the
//! batch records in `batches.jsonl` (a batch is recorded only once synced,
//! so a record means the stores hold it), and two small files: the
//! command that started the run and the run in progress with its stops.

use std::path::Path;

use anyhow::{Context, bail};
use ledgerbench_driver::results::{BackendRun, BatchRecord, Resume};
use ledgerbench_meter::clean::CHECKPOINT;
use serde::{Deserialize, Serialize};

/// The file that keeps the command line of a checkpointed run.
pub const COMMAND: &str = ".ledgerbench-command";

/// What started a checkpointed run.
#[derive(Serialize, Deserialize)]
struct Command {
    /// The arguments after `ledgerbench`.
    argv: Vec<String>,
    /// The build that ran it.
    commit: String,
}

/// The run in progress of a checkpointed run directory ([`CHECKPOINT`]).
#[derive(Serialize, Deserialize)]
pub struct InProgress {
    /// Its label.
    pub label: String,
    /// Its repeat number.
    pub repeat: u32,
    /// Its stops and resumes so far.
    pub resumes: Vec<Resume>,
}

/// Keeps the command line of a new checkpointed run in `out`.
pub fn record_command(out: &Path) -> anyhow::Result<()> {
    let c = Command {
        argv: std::env::args().skip(1).collect(),
        commit: ledgerbench_driver::env::GIT_COMMIT.to_string(),
    };
    crate::output::write_json(&out.join(COMMAND), &c)
}

/// The arguments (after `ledgerbench`) that resume the run in `dir`, after
/// checking that it is a checkpointed run this build ran and that nothing
/// runs it now.
pub fn command_of(dir: &Path) -> anyhow::Result<Vec<String>> {
    let marker = dir.join(ledgerbench_driver::rundir::RUN_MARKER);
    if !marker.is_file() {
        bail!(
            "--resume {}: not a ledgerbench run directory (no {} file)",
            dir.display(),
            ledgerbench_driver::rundir::RUN_MARKER
        );
    }
    let text = std::fs::read(dir.join(COMMAND)).map_err(|_| {
        anyhow::anyhow!(
            "--resume {}: this run was not checkpointed, so it cannot go on; only `run stellar --checkpoint` (and `--preset month`) runs can",
            dir.display()
        )
    })?;
    let c: Command = serde_json::from_slice(&text)
        .with_context(|| format!("--resume: reading {}", dir.join(COMMAND).display()))?;
    let this = ledgerbench_driver::env::GIT_COMMIT;
    if c.commit != this {
        bail!(
            "--resume {}: the run was made by build {}, this is {this}; one run's batches come from one build: resume it with that build",
            dir.display(),
            c.commit
        );
    }
    if let Some(pid) = running(&marker) {
        bail!(
            "--resume {}: the run is still going (process {pid}); stop it first, or wait",
            dir.display()
        );
    }
    Ok(c.argv)
}

/// The supervisor named in a run marker, when it still runs ledgerbench.
fn running(marker: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(marker).ok()?;
    let pid: u32 = text
        .lines()
        .find_map(|l| l.strip_prefix("pid="))?
        .parse()
        .ok()?;
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    let ours = std::env::current_exe().ok()?;
    (pid != std::process::id() && exe == ours).then_some(pid)
}

/// Notes that the checkpointed run (`label`, `repeat`) is in progress, with
/// its stops so far.
pub fn start(out: &Path, run: &InProgress) -> anyhow::Result<()> {
    crate::output::write_json(&out.join(CHECKPOINT), run)
}

/// The checkpointed run is over (finished, or ended for good): its stores
/// are no longer kept for a resume.
pub fn end(out: &Path) {
    let _ = std::fs::remove_file(out.join(CHECKPOINT));
}

/// The checkpointed run that was in progress in `out`, if any.
pub fn in_progress(out: &Path) -> Option<InProgress> {
    let text = std::fs::read(out.join(CHECKPOINT)).ok()?;
    serde_json::from_slice(&text).ok()
}

/// Going on with the run in progress: takes its record (if the supervisor
/// wrote one) out of `runs`, and returns the batches it completed, in
/// order, and its stops with this one added.
pub fn resume(
    out: &Path,
    p: &InProgress,
    tag: &str,
    runs: &mut Vec<BackendRun>,
) -> anyhow::Result<(Vec<BatchRecord>, Vec<Resume>)> {
    let recorded = runs
        .iter()
        .position(|r| r.label == p.label && r.repeat == p.repeat)
        .map(|i| runs.remove(i));
    let why = recorded.and_then(|r| r.error).unwrap_or_else(|| {
        "its processes ended without a word (killed together, or the machine stopped)".into()
    });
    let done = done_batches(&out.join("batches.jsonl"), tag)?;
    let mut resumes = p.resumes.clone();
    resumes.push(Resume {
        after_batch: done.len() as u32,
        why,
        at: ledgerbench_driver::timefmt::now_rfc3339(),
        commit: ledgerbench_driver::env::GIT_COMMIT.to_string(),
    });
    Ok((done, resumes))
}

/// The batches `tag` completed: its records in `path` from batch 1 on,
/// without a gap. A line cut short by the kill is removed, so the next
/// record starts on a line of its own.
pub fn done_batches(path: &Path, tag: &str) -> anyhow::Result<Vec<BatchRecord>> {
    let text = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let whole = text.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    if whole < text.len() {
        let f = std::fs::OpenOptions::new().write(true).open(path)?;
        f.set_len(whole as u64)?;
    }
    let mut done: Vec<BatchRecord> = Vec::new();
    for line in String::from_utf8_lossy(&text[..whole]).lines() {
        let Ok(b) = serde_json::from_str::<BatchRecord>(line) else {
            continue;
        };
        if b.label == tag && b.batch as usize == done.len() + 1 {
            done.push(b);
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(label: &str, batch: u32) -> String {
        let r = serde_json::json!({
            "label": label, "batch": batch, "first_ledger": 1, "ledgers": 1, "txs": 1,
            "generate_secs": 0.0, "compress_secs": 0.0, "writer_wait_secs": 0.0,
            "total_secs": 0.0, "stores": []
        });
        format!("{r}\n")
    }

    #[test]
    fn the_batches_done_are_the_runs_own_from_one_without_gaps_and_a_cut_line_goes() {
        let t = tempfile::tempdir().expect("tempdir");
        let p = t.path().join("batches.jsonl");
        let text = [rec("a", 1), rec("b", 1), rec("a", 2), rec("a", 4)].concat();
        std::fs::write(&p, format!("{text}{{\"label\":\"a\",\"bat")).expect("write");
        let done = done_batches(&p, "a").expect("read");
        assert_eq!(done.iter().map(|b| b.batch).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(std::fs::read_to_string(&p).expect("read"), text);
        assert!(
            done_batches(&t.path().join("none"), "a")
                .expect("absent")
                .is_empty()
        );
    }
}

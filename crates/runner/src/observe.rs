//! The two observers of every long run: [`JsonlSink`] saves each finished
//! batch or segment as a line the moment it finishes (so a killed run keeps
//! what it did), and [`ProgressView`] shows progress: a bar with rate and
//! ETA on a terminal, a line every tenth of the run elsewhere (CI logs).

use std::fs::{self, File};
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use ledgerbench_driver::observe::Observer;
use ledgerbench_driver::results::{BatchRecord, SegmentRecord};

/// One line of `segments.jsonl`: a segment and the run it belongs to.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct SegmentLine {
    /// The run's label.
    pub label: String,
    /// The segment.
    #[serde(flatten)]
    pub segment: SegmentRecord,
}

/// Appends records to a JSONL file, flushed per line.
pub struct JsonlSink {
    label: String,
    path: PathBuf,
    w: Option<BufWriter<File>>,
    error: Option<String>,
}

impl JsonlSink {
    /// Appends to `path` (created when missing); segment lines carry `label`.
    pub fn append(path: &Path, label: &str) -> Self {
        let (w, error) = match fs::OpenOptions::new().create(true).append(true).open(path) {
            Ok(f) => (Some(BufWriter::new(f)), None),
            Err(e) => (None, Some(format!("opening {}: {e}", path.display()))),
        };
        Self {
            label: label.to_string(),
            path: path.to_path_buf(),
            w,
            error,
        }
    }

    /// The first open or write error, if any (the run records it).
    pub fn take_error(&mut self) -> Option<String> {
        self.error.take()
    }

    /// Appends one record as a line, flushed.
    pub fn line<T: serde::Serialize>(&mut self, value: &T) {
        let Some(w) = &mut self.w else { return };
        let written = serde_json::to_writer(&mut *w, value)
            .map_err(std::io::Error::from)
            .and_then(|()| w.write_all(b"\n"))
            .and_then(|()| w.flush());
        if let Err(e) = written {
            self.error
                .get_or_insert(format!("writing {}: {e}", self.path.display()));
        }
    }
}

impl Observer for JsonlSink {
    fn batch_done(&mut self, rec: &BatchRecord, _total: u32) {
        self.line(rec);
    }
    fn segment_done(&mut self, rec: &SegmentRecord, _progress: Option<(u64, u64)>) {
        let line = SegmentLine {
            label: self.label.clone(),
            segment: rec.clone(),
        };
        self.line(&line);
    }
}

/// Shows a run's progress.
pub struct ProgressView {
    bar: ProgressBar,
    label: String,
    tty: bool,
    started: Instant,
    /// Units of the current phase last reported to a log (not a terminal).
    logged_tenth: u64,
    ledgers: u64,
    phase: String,
}

// No `{per_sec}`: the unit is batches or operations, whose raw rate
// ("8.4001/s") beside the ledgers/s of the message says nothing.
const BAR: &str = "{prefix:>18} [{bar:30}] {pos}/{len} {msg} (ETA {eta})";
const SPINNER: &str = "{prefix:>18} {spinner} {msg} ({elapsed})";

impl ProgressView {
    /// A display for the run labelled `label`, drawn on stderr when it is
    /// a terminal.
    pub fn new(label: &str) -> Self {
        let tty = std::io::stderr().is_terminal();
        let bar = if tty {
            ProgressBar::new_spinner()
        } else {
            ProgressBar::hidden()
        };
        bar.set_prefix(label.to_string());
        let view = Self {
            bar,
            label: label.to_string(),
            tty,
            started: Instant::now(),
            logged_tenth: 0,
            ledgers: 0,
            phase: String::new(),
        };
        view.style(false);
        crate::watchdog::beat(Some(&format!(
            "[{label}] before its first progress report (opening its stores, its first batch or segment)"
        )));
        view
    }

    fn style(&self, bounded: bool) {
        let style = if bounded {
            ProgressStyle::with_template(BAR)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ")
        } else {
            ProgressStyle::with_template(SPINNER)
                .unwrap_or_else(|_| ProgressStyle::default_spinner())
        };
        self.bar.set_style(style);
    }

    /// Moves the bar to `done` of `total` (a spinner when `total` is
    /// unknown); off a terminal, prints `msg` at each tenth of the way.
    fn update(&mut self, done: u64, total: Option<u64>, unit: &str, msg: String) {
        match total {
            Some(t) if self.bar.length() != Some(t) => {
                self.bar.set_length(t);
                self.style(true);
            }
            _ => {}
        }
        self.bar.set_position(done);
        self.bar.set_message(format!("{unit} {msg}"));
        if !self.tty {
            let tenth = total.map_or(done / 10, |t| done * 10 / t.max(1));
            if tenth > self.logged_tenth || done == total.unwrap_or(u64::MAX) {
                self.logged_tenth = tenth;
                let of = total.map_or(String::new(), |t| format!("/{t}"));
                ledgerbench_core::note!("[{}] {unit} {done}{of}: {msg}", self.label);
            }
        }
    }

    /// Clears the bar at the end of the run.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Observer for ProgressView {
    fn batch_done(&mut self, rec: &BatchRecord, total: u32) {
        crate::watchdog::beat(Some(&format!("[{}] after batch {}", self.label, rec.batch)));
        self.ledgers += u64::from(rec.ledgers);
        let rate = self.ledgers as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
        let compact = rec
            .stores
            .get(1)
            .and_then(|s| s.compact_secs)
            .map_or("-".to_string(), |s| format!("{s:.2}s"));
        let msg = format!(
            "{rate:.1} ledgers/s, batch {:.2}s, txdata compact {compact}",
            rec.total_secs
        );
        self.update(u64::from(rec.batch), Some(u64::from(total)), "batches", msg);
    }

    fn segment_done(&mut self, rec: &SegmentRecord, progress: Option<(u64, u64)>) {
        crate::watchdog::beat(Some(&format!(
            "[{}] after segment {} ({})",
            self.label, rec.segment, rec.mark
        )));
        let msg = format!("({}) {} ops in {:.2} s", rec.mark, rec.ops, rec.total_secs);
        match progress {
            // The source's own units (operations, slots): a bar with ETA.
            Some((done, total)) => self.update(done, Some(total), "work", msg),
            None => self.update(u64::from(rec.segment), None, "segments", msg),
        }
    }

    fn phase(&mut self, name: &str) {
        self.logged_tenth = 0;
        self.phase = name.to_string();
        crate::watchdog::beat(Some(&format!("[{}] {name}", self.label)));
        // A new phase has no length or ETA until it reports one: a spinner,
        // not the last phase's bar reset to 0/N with ETA 0s.
        self.bar.reset();
        self.bar.unset_length();
        self.style(false);
        self.bar.set_message(format!("{name}..."));
        if !self.tty {
            ledgerbench_core::note!("[{}] {name}...", self.label);
        }
    }

    fn advanced(&mut self, done: u64, total: u64) {
        crate::watchdog::beat(None);
        let unit = self.phase.clone();
        self.update(done, Some(total), &unit, String::new());
    }
}

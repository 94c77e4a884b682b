//! What every run command writes and how it ends: atomic results files, the
//! summary, the exit code, and the refusal to measure a debug build.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, bail};

/// Saves the summary and prints it, or prints the results file when
/// `json`; exit 2 when a run failed.
pub fn finish(out: &Path, summary: &str, failed: bool, json: bool) -> anyhow::Result<ExitCode> {
    write_atomic(&out.join("summary.md"), summary.as_bytes())?;
    if json {
        let path = out.join("results.json");
        let text =
            fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        say(text.trim_end());
    } else {
        say(summary);
    }
    ledgerbench_core::note!("results: {}", out.join("results.json").display());
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// Refuses to benchmark from a debug build unless allowed.
pub fn check_build(debug: bool, allow_debug: bool) -> anyhow::Result<()> {
    if debug && !allow_debug {
        bail!(
            "this ledgerbench is a debug build: engines and generators run many times slower unoptimised, so its \
             figures would mislead. Build with `cargo build --release --workspace`, or pass --allow-debug to test the harness"
        );
    }
    Ok(())
}

/// Writes results atomically (aside, then renamed); on failure (a full
/// disk, say) the file aside is removed and `path` keeps what it had.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    write_atomic(path, &serde_json::to_vec_pretty(value)?)
}

/// Writes `bytes` to `path` through a temporary file beside it, renamed
/// into place, so a reader never sees half a file and a failure leaves no
/// partial file behind.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    let written = fs::write(&tmp, bytes).and_then(|()| fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("writing {}", path.display()));
    }
    Ok(())
}

/// Writes a new file the user named (`--out`, `--json`): an existing file
/// is refused unless `force`, since ledgerbench never replaces what it did not
/// create; the file appears whole or not at all.
pub fn write_new(path: &Path, bytes: &[u8], force: bool, flag: &str) -> anyhow::Result<()> {
    if !force && fs::symlink_metadata(path).is_ok() {
        bail!(
            "{flag} {}: the file exists and ledgerbench does not overwrite files it did not create; \
             give another path, or pass --overwrite to replace it",
            path.display()
        );
    }
    write_atomic(path, bytes)
}

/// An error and its causes on one line, each cause said once: many errors
/// name their OS error in their own message and carry it as their source
/// too, which `{:#}` would print twice ("... (os error 30): ... (os error 30)").
pub fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let c = cause.to_string();
        if text.contains(&c) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&c);
    }
    text
}

/// Set once standard output is a closed pipe (`ledgerbench ... | head -1`).
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Prints `text` and a newline on standard output. A closed pipe (the
/// reader, `head` say, has what it wanted) ends printing quietly, as Unix
/// tools do, instead of a panic; the command still finishes its work (files
/// it writes, its exit code).
pub fn say(text: impl std::fmt::Display) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{text}").and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
        } else {
            ledgerbench_core::note!("warning: could not print to standard output: {e}");
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
        }
    }
}

/// Empties closed stores' page cache so the next reads come from the
/// device: each private device (`devices`, when every store has one) is
/// remounted ([`LoopFs::evict_cache`]); stores in the run directory
/// (`--device none`) have their own files' cache emptied
/// ([`crate::evict::files`]). Neither touches another process's cache
/// (`why` names what needs it).
///
/// [`LoopFs::evict_cache`]: ledgerbench_meter::loopdev::LoopFs::evict_cache
pub fn evict(
    devices: Option<&[ledgerbench_meter::loopdev::LoopFs]>,
    dirs: &[std::path::PathBuf],
    why: &str,
) -> anyhow::Result<()> {
    let Some(devices) = devices else {
        crate::evict::files(dirs, why)?;
        return Ok(());
    };
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        ledgerbench_core::note!(
            "ledgerbench: remounting the stores' private devices to empty their page cache ({why}); no other cache is touched"
        );
    });
    for d in devices {
        d.evict_cache()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    #[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
    fn a_failed_atomic_write_leaves_no_file_aside() {
        // A full disk: a 64 KiB tmpfs (root only; skipped elsewhere).
        if !ledgerbench_testkit::can_run(ledgerbench_testkit::root()) {
            return;
        }
        let t = tempfile::tempdir().expect("tempdir");
        let dir = t.path().to_str().expect("utf-8");
        let ok = std::process::Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                "size=64k",
                "ledgerbench-output-test",
                dir,
            ])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "mounting a 64 KiB tmpfs as root");
        let path = t.path().join("results.json");
        std::fs::write(&path, b"{\"runs\": []}").expect("first results");
        let e = super::write_atomic(&path, &vec![b'x'; 1 << 20]).expect_err("disk full");
        let names: Vec<_> = std::fs::read_dir(t.path())
            .expect("ls")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        let _ = std::process::Command::new("umount").arg(dir).status();
        assert!(e.to_string().contains("results.json"), "{e}");
        assert_eq!(
            names,
            vec![std::ffi::OsString::from("results.json")],
            "no .tmp left"
        );
    }

    #[test]
    fn an_os_error_is_said_once() {
        // As the thiserror errors of the other crates are shaped.
        #[derive(Debug)]
        struct Io {
            path: String,
            source: std::io::Error,
        }
        impl std::fmt::Display for Io {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "creating {}: {}", self.path, self.source)
            }
        }
        impl std::error::Error for Io {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.source)
            }
        }
        let io = std::io::Error::from_raw_os_error(30);
        let e = anyhow::Error::new(Io {
            path: "/ro/run".into(),
            source: io,
        })
        .context("run directory");
        let text = super::error_text(&e);
        assert_eq!(text.matches("os error 30").count(), 1, "{text}");
        assert!(
            text.starts_with("run directory: creating /ro/run"),
            "{text}"
        );
    }

    #[test]
    fn debug_builds_refuse_unless_allowed() {
        let e = super::check_build(true, false)
            .expect_err("refused")
            .to_string();
        assert!(
            e.contains("debug build") && e.contains("--allow-debug"),
            "{e}"
        );
        assert!(super::check_build(true, true).is_ok());
        assert!(super::check_build(false, false).is_ok());
    }
}

//! What every run command writes and how it ends: atomic results files, the
//! summary, the exit code, and the refusal to measure a debug build.

use std::fs;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};

/// Saves the summary and prints it, or prints the results file when
/// `json`; exit 2 when a run failed.
pub fn finish(out: &Path, summary: &str, failed: bool, json: bool) -> anyhow::Result<ExitCode> {
    fs::write(out.join("summary.md"), summary)
        .with_context(|| format!("writing {}", out.join("summary.md").display()))?;
    if json {
        let path = out.join("results.json");
        let text =
            fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        println!("{}", text.trim_end());
    } else {
        println!("{summary}");
    }
    eprintln!("results: {}", out.join("results.json").display());
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
            "this kvbench is a debug build: engines and generators run many times slower unoptimised, so its \
             figures would mislead. Build with `cargo build --release --workspace`, or pass --allow-debug to test the harness"
        );
    }
    Ok(())
}

/// Writes results atomically (aside, then renamed).
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let tmp = path.with_extension("json.tmp");
    fs::write(&tmp, serde_json::to_vec_pretty(value)?)
        .with_context(|| format!("writing {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
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

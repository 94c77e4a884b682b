//! The device's own random-read rate, measured with fio: the physical anchor
//! an engine's GET rate is put beside at the same queue depth.
//!
//! One synchronous reader per thread (`psync`, `--numjobs`), 4 KiB random
//! reads with O_DIRECT, so the page cache is out of the way and each
//! thread keeps one request in flight, as an engine's GET thread does.

use std::path::Path;
use std::process::Command;

/// What fio measured at one depth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reads {
    /// Read requests per second, all threads together.
    pub iops: f64,
    /// Median completion latency, microseconds.
    pub p50_us: Option<f64>,
    /// 99th-percentile completion latency, microseconds.
    pub p99_us: Option<f64>,
}

/// Why fio gave no figure.
#[derive(Debug, thiserror::Error)]
pub enum FioError {
    /// fio is not installed.
    #[error("fio is not installed (Debian: apt install fio; scripts/setup.sh installs it)")]
    Missing,
    /// fio ran and failed, or printed what this parser does not read.
    #[error("fio: {0}")]
    Failed(String),
}

/// Whether fio can be run here.
pub fn available() -> bool {
    Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Random 4 KiB reads of `file` (laid out by fio at `file_bytes` when it
/// does not exist yet) by `threads` readers for `secs` seconds.
pub fn random_reads(
    file: &Path,
    file_bytes: u64,
    threads: u64,
    secs: u64,
) -> Result<Reads, FioError> {
    let out = Command::new("fio")
        .args([
            "--name=anchor",
            "--rw=randread",
            "--bs=4k",
            "--direct=1",
            "--ioengine=psync",
            "--group_reporting",
            "--time_based",
            "--output-format=json",
        ])
        .arg(format!("--filename={}", file.display()))
        .arg(format!("--size={file_bytes}"))
        .arg(format!("--numjobs={threads}"))
        .arg(format!("--runtime={secs}"))
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => FioError::Missing,
            _ => FioError::Failed(e.to_string()),
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(FioError::Failed(err.trim().chars().take(400).collect()));
    }
    parse(&String::from_utf8_lossy(&out.stdout))
}

/// Reads fio's JSON report (`--group_reporting`: one job).
pub fn parse(json: &str) -> Result<Reads, FioError> {
    // fio may print notes before the JSON object.
    let start = json
        .find('{')
        .ok_or_else(|| FioError::Failed("no JSON in its output".into()))?;
    let v: serde_json::Value = serde_json::from_str(&json[start..])
        .map_err(|e| FioError::Failed(format!("its JSON: {e}")))?;
    let read = &v["jobs"][0]["read"];
    let iops = read["iops"]
        .as_f64()
        .ok_or_else(|| FioError::Failed("no read IOPS in its report".into()))?;
    let pct = |p: &str| {
        read["clat_ns"]["percentile"][p]
            .as_f64()
            .map(|ns| ns / 1000.0)
    };
    Ok(Reads {
        iops,
        p50_us: pct("50.000000"),
        p99_us: pct("99.000000"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_iops_and_percentiles_and_refuses_what_is_not_a_report() {
        let json = r#"note: something
{"jobs":[{"read":{"iops":1234.5,"clat_ns":{"percentile":{"50.000000":80000,"99.000000":250000}}}}]}"#;
        let r = parse(json).expect("parsed");
        assert_eq!(r.iops, 1234.5);
        assert_eq!(r.p50_us, Some(80.0));
        assert_eq!(r.p99_us, Some(250.0));
        assert!(parse("fio: no").is_err());
        assert!(parse(r#"{"jobs":[]}"#).is_err());
    }

    #[test]
    fn measures_a_file_when_fio_is_installed() {
        let here = if available() {
            Ok(())
        } else {
            Err(FioError::Missing)
        };
        if !ledgerbench_testkit::can_run(here) {
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        // O_DIRECT needs a filesystem that has it (tmpfs does not).
        let file = dir.path().join("f");
        match random_reads(&file, 8 << 20, 2, 1) {
            Ok(r) => assert!(r.iops > 0.0),
            Err(FioError::Failed(e)) => {
                assert!(e.contains("direct") || e.contains("Invalid"), "{e}")
            }
            Err(e) => panic!("{e}"),
        }
    }
}

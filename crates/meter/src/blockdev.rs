//! Block-device request counters from `/sys/block/<dev>/stat`.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{MeterError, Result, read};

/// Counters of one block device. Sectors are 512 bytes whatever the device.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockStat {
    /// Read requests completed.
    pub read_ios: u64,
    /// Sectors read.
    pub read_sectors: u64,
    /// Write requests completed.
    pub write_ios: u64,
    /// Sectors written.
    pub write_sectors: u64,
    /// Flush requests completed; absent on kernels before 5.5.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flush_ios: Option<u64>,
}

impl BlockStat {
    /// Reads a `stat` file.
    pub fn read(stat_path: &str) -> Result<Self> {
        Self::parse(&read(stat_path)?, stat_path)
    }

    /// Parses the text of a `stat` file read from `stat_path`.
    fn parse(text: &str, stat_path: &str) -> Result<Self> {
        let f: Vec<u64> = text
            .split_whitespace()
            .map(|v| v.parse::<u64>())
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| MeterError::Parse {
                path: stat_path.into(),
                why: e.to_string(),
            })?;
        if f.len() < 11 {
            return Err(MeterError::Parse {
                path: stat_path.into(),
                why: format!("{} fields, expected at least 11", f.len()),
            });
        }
        Ok(Self {
            read_ios: f[0],
            read_sectors: f[2],
            write_ios: f[4],
            write_sectors: f[6],
            flush_ios: f.get(15).copied(),
        })
    }

    /// The counters of the device holding `path` (a partition's own counters
    /// when it is on one).
    pub fn of_path(path: &Path) -> Result<Self> {
        let md = std::fs::metadata(path).map_err(|source| MeterError::Io {
            what: "stat",
            path: path.display().to_string(),
            source,
        })?;
        let dev = md.dev();
        let (major, minor) = (libc::major(dev), libc::minor(dev));
        Self::read(&format!("/sys/dev/block/{major}:{minor}/stat"))
    }

    /// Bytes read.
    pub fn read_bytes(&self) -> u64 {
        self.read_sectors * 512
    }

    /// Bytes written.
    pub fn write_bytes(&self) -> u64 {
        self.write_sectors * 512
    }

    /// Counter growth since `earlier`.
    pub fn since(&self, earlier: &BlockStat) -> BlockStat {
        BlockStat {
            read_ios: self.read_ios.saturating_sub(earlier.read_ios),
            read_sectors: self.read_sectors.saturating_sub(earlier.read_sectors),
            write_ios: self.write_ios.saturating_sub(earlier.write_ios),
            write_sectors: self.write_sectors.saturating_sub(earlier.write_sectors),
            flush_ios: self
                .flush_ios
                .zip(earlier.flush_ios)
                .map(|(a, b)| a.saturating_sub(b)),
        }
    }
}

/// A `stat` file kept open and read again in place (`pread` at 0, which
/// sysfs answers with fresh counters), for meters read around every GET:
/// about a tenth of what opening the file each time costs.
#[derive(Debug)]
pub struct StatFile {
    file: std::fs::File,
    path: String,
}

impl StatFile {
    /// Opens `stat_path`.
    pub fn open(stat_path: &str) -> Result<Self> {
        let file = std::fs::File::open(stat_path).map_err(|source| MeterError::Io {
            what: "opening",
            path: stat_path.into(),
            source,
        })?;
        Ok(StatFile {
            file,
            path: stat_path.into(),
        })
    }

    /// The counters now.
    pub fn read(&self) -> Result<BlockStat> {
        use std::os::unix::fs::FileExt;
        let mut buf = [0u8; 512];
        let n = self
            .file
            .read_at(&mut buf, 0)
            .map_err(|source| MeterError::Io {
                what: "reading",
                path: self.path.clone(),
                source,
            })?;
        let text = std::str::from_utf8(&buf[..n]).map_err(|e| MeterError::Parse {
            path: self.path.clone(),
            why: e.to_string(),
        })?;
        BlockStat::parse(text, &self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_stat_file_reads_fresh_counters_each_time() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("stat");
        let path = p.to_str().expect("utf8");
        std::fs::write(&p, "5 0 80 0 1 0 8 0 0 0 0\n").expect("write");
        let f = StatFile::open(path).expect("open");
        assert_eq!(
            f.read().expect("read"),
            BlockStat::read(path).expect("read")
        );
        // Rewritten in place (as sysfs regenerates it): the open file sees it.
        std::fs::write(&p, "6 0 88 0 2 0 16 0 0 0 0\n").expect("write");
        let s = f.read().expect("read again");
        assert_eq!((s.read_ios, s.write_ios, s.flush_ios), (6, 2, None));
        std::fs::write(&p, "6 0 88\n").expect("write");
        assert!(f.read().is_err(), "3 fields is not a stat line");
        let e = StatFile::open("/nonexistent/ledgerbench/stat").expect_err("missing");
        assert!(
            e.to_string().contains("/nonexistent/ledgerbench/stat"),
            "{e}"
        );
    }

    #[test]
    fn parses_a_kernel_stat_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("stat");
        std::fs::write(&p, "     100 2 8000 5 40 1 320 9 0 12 14 0 0 0 0 7 3\n").expect("write");
        let s = BlockStat::read(p.to_str().expect("utf8")).expect("parse");
        assert_eq!(
            (
                s.read_ios,
                s.read_bytes(),
                s.write_ios,
                s.write_bytes(),
                s.flush_ios
            ),
            (100, 8000 * 512, 40, 320 * 512, Some(7))
        );
        std::fs::write(&p, "1 2 3 4 5 6 7 8 9 10 11\n").expect("write");
        assert_eq!(
            BlockStat::read(p.to_str().expect("utf8"))
                .expect("old kernel")
                .flush_ios,
            None
        );
        std::fs::write(&p, "1 2 3\n").expect("write");
        assert!(BlockStat::read(p.to_str().expect("utf8")).is_err());
    }

    #[test]
    fn finds_the_device_of_a_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let dev = std::fs::metadata(dir.path()).expect("stat").dev();
        match BlockStat::of_path(dir.path()) {
            Ok(s) => assert!(s.read_ios + s.write_ios > 0),
            // Only a virtual filesystem (tmpfs, overlay: major 0) has no block device.
            Err(e) => {
                assert_eq!(
                    libc::major(dev),
                    0,
                    "a block-backed path must have counters: {e}"
                );
                eprintln!("not run: {e}");
            }
        }
    }
}

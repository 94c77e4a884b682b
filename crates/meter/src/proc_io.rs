//! `/proc/self/io`: bytes this process caused to be read from and written to storage.

use serde::{Deserialize, Serialize};

use crate::{MeterError, Result, read};

/// Counters of `/proc/self/io`, bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcIo {
    /// Bytes passed to read-like syscalls (cache hits included).
    pub rchar: u64,
    /// Bytes passed to write-like syscalls.
    pub wchar: u64,
    /// Bytes this process caused to be fetched from storage.
    pub read_bytes: u64,
    /// Bytes this process caused to be sent to storage (not mmap writeback
    /// done by the kernel on its behalf later).
    pub write_bytes: u64,
    /// Bytes of page cache this process truncated before writeback.
    pub cancelled_write_bytes: u64,
}

impl ProcIo {
    /// Reads the current process's counters.
    pub fn now() -> Result<Self> {
        Self::parse(&read("/proc/self/io")?)
    }

    fn parse(text: &str) -> Result<Self> {
        let mut io = ProcIo::default();
        for line in text.lines() {
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let v: u64 = v.trim().parse().map_err(|_| MeterError::Parse {
                path: "/proc/self/io".into(),
                why: format!("bad value in `{line}`"),
            })?;
            match k.trim() {
                "rchar" => io.rchar = v,
                "wchar" => io.wchar = v,
                "read_bytes" => io.read_bytes = v,
                "write_bytes" => io.write_bytes = v,
                "cancelled_write_bytes" => io.cancelled_write_bytes = v,
                _ => {}
            }
        }
        Ok(io)
    }

    /// Counter growth since `earlier`.
    pub fn since(&self, earlier: &ProcIo) -> ProcIo {
        ProcIo {
            rchar: self.rchar.saturating_sub(earlier.rchar),
            wchar: self.wchar.saturating_sub(earlier.wchar),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
            cancelled_write_bytes: self
                .cancelled_write_bytes
                .saturating_sub(earlier.cancelled_write_bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn counts_a_synced_file_write() {
        let before = ProcIo::now().expect("proc io");
        let dir = tempfile::tempdir().expect("tempdir");
        let mut f = std::fs::File::create(dir.path().join("x")).expect("create");
        f.write_all(&vec![7u8; 4 << 20]).expect("write");
        f.sync_all().expect("sync");
        let d = ProcIo::now().expect("proc io").since(&before);
        assert!(d.wchar >= 4 << 20, "{d:?}");
        // tmpfs (device major 0) has no backing store; a disk-backed temp
        // dir must show the synced bytes.
        let major = libc::major(std::os::unix::fs::MetadataExt::dev(
            &std::fs::metadata(dir.path()).expect("stat"),
        ));
        if major != 0 {
            assert!(d.write_bytes >= 4 << 20, "{d:?}");
        }
    }
}

//! A crash filesystem: a FUSE layer over a backing directory that passes
//! every request through but logs each write (with the bytes it replaced)
//! until its file is fsynced, and each create, remove and rename until its
//! directory is fsynced. On a simulated crash the layer is unmounted and
//! the backing directory is left as a device could have left it:
//!
//! - [`Fault::Lose`]: every unsynced change is lost (a power cut that
//!   loses all the page cache held);
//! - [`Fault::Reorder`]: a random subset of the unsynced writes reached
//!   the device, each whole and with every earlier unsynced write to one
//!   of its 4 KiB pages (a page is written back whole), and a prefix of the
//!   unsynced directory changes;
//! - [`Fault::Torn`]: as `Reorder`, and one kept write is cut at a 512 B or
//!   4 KiB boundary (one kept write spanning a boundary, chosen at random).
//!
//! Directory changes follow their directory's fsync, which is stricter than
//! ext4's default (there an fsync of a new file usually commits its name
//! too): what POSIX promises, not what one filesystem happens to do.
//!
//! The kernel's page cache sits above the layer, so writes through a
//! shared memory map reach it when the kernel writes them back (at
//! `msync`, or at the unmount that follows a kill); the crash then treats
//! them like any write not yet synced.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ledgerbench_results::crash::FsCrash;
use ledgerbench_rng::Rng;

mod apply;
mod fs;
mod log;
mod names;
mod state;

#[cfg(test)]
mod tests;

/// What a crash does with the changes not yet synced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// All of them are lost.
    Lose,
    /// A random subset of the writes survives (each whole), and a prefix of
    /// the directory changes.
    Reorder,
    /// As `Reorder`, with one surviving write cut at a sector boundary.
    Torn,
}

/// The filesystem name a crash mount carries in the mount table, followed
/// by `:PID` of the process serving it (how `ledgerbench clean` finds the
/// mounts of a process that was killed).
pub use ledgerbench_meter::clean::CRASH_FS_NAME as FS_NAME;

/// A mounted crash filesystem. Dropping it unmounts it as a clean shutdown
/// (everything written stays); [`Mounted::crash`] unmounts it as a crash.
pub struct Mounted {
    session: Option<fuser::BackgroundSession>,
    state: Arc<Mutex<state::State>>,
    mountpoint: PathBuf,
    backing: PathBuf,
    scratch: PathBuf,
}

/// Why this process cannot mount the crash filesystem.
#[derive(Debug)]
pub enum Unavailable {
    /// Mounting FUSE here needs root.
    NotRoot,
    /// `/dev/fuse` did not open.
    NoFuse(io::Error),
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unavailable::NotRoot => write!(f, "mounting the crash filesystem needs root"),
            Unavailable::NoFuse(e) => {
                write!(f, "/dev/fuse: {e} (install fuse3, or load the fuse module)")
            }
        }
    }
}

impl std::error::Error for Unavailable {}

/// Whether this process can mount FUSE filesystems (`/dev/fuse` opens and
/// we are root); the reason when it cannot.
pub fn available() -> Result<(), Unavailable> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(Unavailable::NotRoot);
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")
        .map(drop)
        .map_err(Unavailable::NoFuse)
}

impl Mounted {
    /// Mounts `backing` at `mountpoint`. `scratch` (made if missing, and
    /// emptied of this layer's own files) holds the log and removed files.
    pub fn mount(backing: &Path, mountpoint: &Path, scratch: &Path) -> io::Result<Mounted> {
        let backing = std::path::absolute(backing)?;
        let grave = scratch.join("grave");
        if grave.exists() {
            std::fs::remove_dir_all(&grave)?;
        }
        std::fs::create_dir_all(&grave)?;
        let payload = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(scratch.join("payload"))?;
        let st = state::State::new(backing.clone(), grave, log::OpLog::new(payload)?);
        let state = Arc::new(Mutex::new(st));
        let mut config = fuser::Config::default();
        config.mount_options = vec![
            fuser::MountOption::FSName(format!("{FS_NAME}:{}", std::process::id())),
            fuser::MountOption::Subtype("ledgerbench".into()),
            fuser::MountOption::RW,
        ];
        let session = fuser::spawn_mount(fs::CrashFs(state.clone()), mountpoint, &config)?;
        Ok(Mounted {
            session: Some(session),
            state,
            mountpoint: std::path::absolute(mountpoint)?,
            backing,
            scratch: scratch.to_path_buf(),
        })
    }

    fn locked(&self) -> std::sync::MutexGuard<'_, state::State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Changes (writes, size changes, directory changes, syncs) served so far.
    pub fn ops(&self) -> u64 {
        self.locked().ops
    }

    /// Arms the cut: `n` more changes are served, then none; their callers
    /// block (a power loss: nothing after it is acknowledged).
    pub fn cut_after(&self, n: u64) {
        self.locked().cut = Some(n);
    }

    /// Whether the cut has come (a change arrived past it).
    pub fn frozen(&self) -> bool {
        self.locked().frozen
    }

    /// After the writer is killed: answers the held changes, and refuses
    /// later ones, with EIO, unblocking the dying threads (the kernel waits
    /// for an answer to a request this layer has already read, even for a
    /// killed caller; the caller cannot run again to see it).
    pub fn release(&self) {
        let mut st = self.locked();
        st.frozen = true;
        st.refusing = true;
        // A reply dropped unanswered answers EIO.
        st.held.clear();
    }

    fn unmount_session(&mut self) -> io::Result<()> {
        let Some(s) = self.session.take() else {
            return Ok(());
        };
        // A killed writer's children (a Go sidecar) may still be closing
        // their files: wait for the mount to be free, up to 10 s.
        use std::os::unix::ffi::OsStrExt;
        let mp = std::ffi::CString::new(self.mountpoint.as_os_str().as_bytes())?;
        for _ in 0..1000 {
            // SAFETY: a valid C string; flags 0 is a plain unmount.
            if unsafe { libc::umount2(mp.as_ptr(), 0) } == 0 {
                // Unmounted: the session's loop ends on its own (its own
                // unmount attempt on drop fails quietly). A request in
                // flight as the kernel tore the connection down ends the
                // loop with ECONNABORTED: the unmount asked for that.
                return match s.join() {
                    Err(e) if e.raw_os_error() == Some(libc::ECONNABORTED) => Ok(()),
                    r => r,
                };
            }
            if io::Error::last_os_error().raw_os_error() != Some(libc::EBUSY) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        s.umount_and_join()
    }

    /// Unmounts (the kernel first writes back what its page cache holds),
    /// then plays `fault` on the backing directory with choices from `rng`.
    pub fn crash(mut self, fault: Fault, rng: &mut Rng) -> io::Result<FsCrash> {
        self.unmount_session()?;
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let report = apply::play(&mut st, &self.backing, fault, rng)?;
        let grave = st.grave.clone();
        drop(st);
        std::fs::remove_dir_all(&grave)?;
        Ok(report)
    }

    /// Unmounts cleanly: every change stays.
    pub fn unmount(mut self) -> io::Result<()> {
        self.unmount_session()?;
        let _ = std::fs::remove_dir_all(self.scratch.join("grave"));
        Ok(())
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = self.unmount_session();
    }
}

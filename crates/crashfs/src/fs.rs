//! The FUSE side: every request passes through to the backing directory,
//! and every change is logged (with the bytes it replaced) before it is
//! answered, so a crash can later be played on the backing directory.

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use fuser::{
    Errno, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner, OpenFlags,
    RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry,
    ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};

use crate::log::Rec;
use crate::names::open_options;
use crate::state::{Gate, State, attr};

/// Lets a change through, or holds its reply past the cut (the caller
/// blocks, as on a machine that lost power), or refuses it once the
/// writer is dead.
macro_rules! gate {
    ($s:expr, $reply:expr) => {
        match $s.gate() {
            Gate::Go => {}
            Gate::Hold => {
                $s.held.push(Box::new($reply));
                return;
            }
            Gate::Refuse => {
                $reply.error(Errno::EIO);
                return;
            }
        }
    };
}

/// How long the kernel may cache names and attributes: every change goes
/// through this layer, so its cache cannot go stale within a mount.
const TTL: Duration = Duration::from_secs(1);

/// The filesystem the session serves; the mount keeps the other handle
/// on the state to play the crash once the session has ended.
pub(crate) struct CrashFs(pub(crate) Arc<Mutex<State>>);

fn err(e: io::Error) -> Errno {
    Errno::from(e)
}

impl CrashFs {
    fn state(&self) -> MutexGuard<'_, State> {
        // A panic under the lock leaves the state as consistent as the
        // backing directory is: go on serving.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn entry(&self, s: &mut State, path: &std::path::Path, reply: ReplyEntry) {
        match std::fs::symlink_metadata(path) {
            Ok(m) => {
                let ino = s.ino_of(path);
                reply.entry(&TTL, &attr(ino, &m), Generation(0));
            }
            Err(e) => reply.error(err(e)),
        }
    }
}

impl Filesystem for CrashFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let mut s = self.state();
        match s.child(parent.0, name) {
            Ok(p) => self.entry(&mut s, &p, reply),
            Err(e) => reply.error(err(e)),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        let s = self.state();
        let m = match fh.map(|h| s.handle(h.0).and_then(File::metadata)) {
            Some(Ok(m)) => Ok(m),
            _ => s.path(ino.0).and_then(std::fs::symlink_metadata),
        };
        match m {
            Ok(m) => reply.attr(&TTL, &attr(ino.0, &m)),
            Err(e) => reply.error(err(e)),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<std::time::SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<std::time::SystemTime>,
        _chgtime: Option<std::time::SystemTime>,
        _bkuptime: Option<std::time::SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let mut s = self.state();
        if size.is_some() {
            gate!(s, reply);
        }
        let r = (|| -> io::Result<std::fs::Metadata> {
            let path = s.path(ino.0)?;
            if let Some(m) = mode {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(m & 0o7777))?;
            }
            if let Some(size) = size {
                let f = match fh.and_then(|h| s.handle(h.0).ok()) {
                    Some(f) => f.try_clone()?,
                    None => OpenOptions::new().read(true).write(true).open(&path)?,
                };
                s.set_size(ino.0, &f, size)?;
            }
            std::fs::symlink_metadata(&path)
        })();
        match r {
            Ok(m) => reply.attr(&TTL, &attr(ino.0, &m)),
            Err(e) => reply.error(err(e)),
        }
    }

    fn mkdir(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        let mut s = self.state();
        gate!(s, reply);
        let r = s.mkdir(parent.0, name, mode & !umask);
        match r {
            Ok(p) => self.entry(&mut s, &p, reply),
            Err(e) => reply.error(err(e)),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let mut s = self.state();
        gate!(s, reply);
        match s.remove(parent.0, name, false) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(err(e)),
        }
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let mut s = self.state();
        gate!(s, reply);
        match s.remove(parent.0, name, true) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(err(e)),
        }
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let mut s = self.state();
        gate!(s, reply);
        match s.rename((parent.0, name), (newparent.0, newname), flags) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(err(e)),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let mut s = self.state();
        let r = s
            .path(ino.0)
            .and_then(|p| open_options(flags.0).open(p))
            .map(|f| s.open_handle(f));
        match r {
            Ok(fh) => reply.opened(FileHandle(fh), FopenFlags::empty()),
            Err(e) => reply.error(err(e)),
        }
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let mut s = self.state();
        gate!(s, reply);
        let r = s
            .create(parent.0, name, mode & !umask, flags)
            .and_then(|(ino, f)| {
                let m = f.metadata()?;
                Ok((ino, s.open_handle(f), m))
            });
        match r {
            Ok((ino, fh, m)) => reply.created(
                &TTL,
                &attr(ino, &m),
                Generation(0),
                FileHandle(fh),
                FopenFlags::empty(),
            ),
            Err(e) => reply.error(err(e)),
        }
    }

    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let s = self.state();
        let r = s.handle(fh.0).and_then(|f| {
            let mut buf = vec![0u8; size as usize];
            let mut got = 0;
            while got < buf.len() {
                match f.read_at(&mut buf[got..], offset + got as u64) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            buf.truncate(got);
            Ok(buf)
        });
        match r {
            Ok(b) => reply.data(&b),
            Err(e) => reply.error(err(e)),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let mut s = self.state();
        gate!(s, reply);
        let r = s
            .handle(fh.0)
            .and_then(File::try_clone)
            .and_then(|f| s.write(ino.0, &f, offset, data));
        match r {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(err(e)),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.state().close_handle(fh.0);
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        // The backing directory stands for the device: nothing to flush
        // there. The sync is what makes this file's writes so far durable.
        let mut s = self.state();
        gate!(s, reply);
        s.log.recs.push(Rec::SyncFile { ino: ino.0 });
        reply.ok();
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        let mut s = self.state();
        gate!(s, reply);
        s.log.recs.push(Rec::SyncDir { ino: ino.0 });
        reply.ok();
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let mut s = self.state();
        let r = (|| -> io::Result<Vec<(u64, FileType, std::ffi::OsString)>> {
            let dir = s.path(ino.0)?;
            let mut v = vec![
                (ino.0, FileType::Directory, ".".into()),
                (ino.0, FileType::Directory, "..".into()),
            ];
            let mut names: Vec<_> = std::fs::read_dir(&dir)?.collect::<io::Result<_>>()?;
            names.sort_by_key(|e| e.file_name());
            for e in names {
                let kind = if e.file_type()?.is_dir() {
                    FileType::Directory
                } else {
                    FileType::RegularFile
                };
                let i = s.ino_of(&e.path());
                v.push((i, kind, e.file_name()));
            }
            Ok(v)
        })();
        match r {
            Ok(v) => {
                for (n, (i, kind, name)) in v.into_iter().enumerate().skip(offset as usize) {
                    if reply.add(INodeNo(i), n as u64 + 1, kind, name) {
                        break;
                    }
                }
                reply.ok();
            }
            Err(e) => reply.error(err(e)),
        }
    }

    fn statfs(&self, _req: &Request, ino: INodeNo, reply: ReplyStatfs) {
        let s = self.state();
        let r = s.path(ino.0).and_then(|p| {
            let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(p.as_os_str()))
                .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
            let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
            // SAFETY: a valid C string and a struct of the size statvfs writes.
            if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(st)
        });
        match r {
            Ok(st) => reply.statfs(
                st.f_blocks,
                st.f_bfree,
                st.f_bavail,
                st.f_files,
                st.f_ffree,
                st.f_bsize as u32,
                st.f_namemax as u32,
                st.f_frsize as u32,
            ),
            Err(e) => reply.error(err(e)),
        }
    }

    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let mut s = self.state();
        gate!(s, reply);
        let r = (|| -> io::Result<()> {
            let f = s.handle(fh.0)?.try_clone()?;
            match mode {
                // Space only: the contents and size do not change.
                libc::FALLOC_FL_KEEP_SIZE => {}
                0 => {
                    let end = offset + length;
                    if end > f.metadata()?.len() {
                        s.set_size(ino.0, &f, end)?;
                    }
                }
                _ => return Err(io::Error::from_raw_os_error(libc::EOPNOTSUPP)),
            }
            Ok(())
        })();
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(err(e)),
        }
    }
}

//! The filesystem's state: which backing path each inode is, the open
//! files, and the log. Every operation takes it under one lock; the FUSE
//! session serves requests one at a time anyway, and a crash test measures
//! the engine's recovery, not this layer's throughput (whose cost the
//! results report separately).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use fuser::{FileAttr, FileType, INodeNo};

use crate::log::{OpLog, Rec};

/// The root directory's inode (FUSE's fixed root id).
pub(crate) const ROOT: u64 = 1;

/// Inodes, open files and the log of one mount.
pub(crate) struct State {
    /// Inode -> where it lives now (under the backing directory, or in the
    /// grave once removed while open).
    pub(crate) paths: HashMap<u64, PathBuf>,
    by_path: HashMap<PathBuf, u64>,
    next_ino: u64,
    handles: HashMap<u64, File>,
    next_fh: u64,
    /// Where removed files wait, so a removal can be undone.
    pub(crate) grave: PathBuf,
    graves: u64,
    /// Everything done since the mount.
    pub(crate) log: OpLog,
    /// Changes served since the mount.
    pub(crate) ops: u64,
    /// Changes still served before the cut, once armed.
    pub(crate) cut: Option<u64>,
    /// Past the cut: no change is served any more.
    pub(crate) frozen: bool,
    /// Past the cut and the writer killed: changes are refused at once.
    pub(crate) refusing: bool,
    /// Replies to changes that arrived after the cut, never answered while
    /// the writer lives: it blocks there, as a machine that lost power.
    pub(crate) held: Vec<Box<dyn Send>>,
}

/// What to do with a change request.
pub(crate) enum Gate {
    /// Serve it.
    Go,
    /// Hold its reply: the cut has come.
    Hold,
    /// Answer EIO: the cut has come and its writer is dead.
    Refuse,
}

impl State {
    pub(crate) fn new(root: PathBuf, grave: PathBuf, log: OpLog) -> State {
        let mut s = State {
            paths: HashMap::new(),
            by_path: HashMap::new(),
            next_ino: ROOT + 1,
            handles: HashMap::new(),
            next_fh: 1,
            grave,
            graves: 0,
            log,
            ops: 0,
            cut: None,
            frozen: false,
            refusing: false,
            held: Vec::new(),
        };
        s.paths.insert(ROOT, root.clone());
        s.by_path.insert(root, ROOT);
        s
    }

    /// Counts a change request and says whether to serve it.
    pub(crate) fn gate(&mut self) -> Gate {
        if !self.frozen {
            match self.cut {
                Some(0) => self.frozen = true,
                Some(n) => self.cut = Some(n - 1),
                None => {}
            }
        }
        if !self.frozen {
            self.ops += 1;
            Gate::Go
        } else if self.refusing {
            Gate::Refuse
        } else {
            Gate::Hold
        }
    }

    /// The path of `ino`.
    pub(crate) fn path(&self, ino: u64) -> io::Result<PathBuf> {
        self.paths
            .get(&ino)
            .cloned()
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOENT))
    }

    /// `name` under directory `parent`.
    pub(crate) fn child(&self, parent: u64, name: &OsStr) -> io::Result<PathBuf> {
        Ok(self.path(parent)?.join(name))
    }

    /// The inode of `path`, given one the first time it is seen.
    pub(crate) fn ino_of(&mut self, path: &Path) -> u64 {
        if let Some(&i) = self.by_path.get(path) {
            return i;
        }
        let i = self.next_ino;
        self.next_ino += 1;
        self.paths.insert(i, path.to_path_buf());
        self.by_path.insert(path.to_path_buf(), i);
        i
    }

    /// Moves `ino` (and, for a directory, everything under it) to `to`.
    pub(crate) fn moved(&mut self, ino: u64, to: &Path) {
        let Some(from) = self.paths.get(&ino).cloned() else {
            return;
        };
        let under: Vec<(u64, PathBuf)> = self
            .paths
            .iter()
            .filter(|(_, p)| p.starts_with(&from))
            .map(|(&i, p)| (i, p.clone()))
            .collect();
        for (i, p) in under {
            let rest = p.strip_prefix(&from).unwrap_or(Path::new(""));
            let new = if rest.as_os_str().is_empty() {
                to.to_path_buf()
            } else {
                to.join(rest)
            };
            self.by_path.remove(&p);
            self.by_path.insert(new.clone(), i);
            self.paths.insert(i, new);
        }
    }

    /// Forgets `ino` and, for a directory, everything under it (its
    /// directory entry is gone and it is not kept).
    pub(crate) fn forget(&mut self, ino: u64) {
        let Some(p) = self.paths.remove(&ino) else {
            return;
        };
        self.by_path.remove(&p);
        let under: Vec<u64> = self
            .paths
            .iter()
            .filter(|(_, q)| q.starts_with(&p))
            .map(|(&i, _)| i)
            .collect();
        for i in under {
            if let Some(q) = self.paths.remove(&i) {
                self.by_path.remove(&q);
            }
        }
    }

    /// Puts `ino` at `path` (a crash replaying its creation).
    pub(crate) fn place(&mut self, ino: u64, path: PathBuf) {
        self.forget(ino);
        self.by_path.insert(path.clone(), ino);
        self.paths.insert(ino, path);
    }

    /// A fresh place in the grave.
    pub(crate) fn grave_slot(&mut self) -> PathBuf {
        self.graves += 1;
        self.grave.join(self.graves.to_string())
    }

    /// Keeps an open file and returns its handle.
    pub(crate) fn open_handle(&mut self, f: File) -> u64 {
        let fh = self.next_fh;
        self.next_fh += 1;
        self.handles.insert(fh, f);
        fh
    }

    pub(crate) fn handle(&self, fh: u64) -> io::Result<&File> {
        self.handles
            .get(&fh)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EBADF))
    }

    pub(crate) fn close_handle(&mut self, fh: u64) {
        self.handles.remove(&fh);
    }

    /// Writes `data` at `off` of `ino` through `f`, logging what it replaced.
    pub(crate) fn write(&mut self, ino: u64, f: &File, off: u64, data: &[u8]) -> io::Result<()> {
        let old_size = f.metadata()?.len();
        let keep = old_size.saturating_sub(off).min(data.len() as u64) as usize;
        let mut old = vec![0u8; keep];
        f.read_exact_at(&mut old, off)?;
        let undo = self.log.keep(&old)?;
        let redo = self.log.keep(data)?;
        f.write_all_at(data, off)?;
        self.log.recs.push(Rec::Write {
            ino,
            off,
            old_size,
            undo,
            redo,
        });
        Ok(())
    }

    /// Sets `ino`'s size through `f`, logging what a shrink cuts off.
    pub(crate) fn set_size(&mut self, ino: u64, f: &File, size: u64) -> io::Result<()> {
        let old_size = f.metadata()?.len();
        if old_size == size {
            return Ok(());
        }
        let mut cut = vec![0u8; old_size.saturating_sub(size) as usize];
        f.read_exact_at(&mut cut, size)?;
        let undo = self.log.keep(&cut)?;
        f.set_len(size)?;
        self.log.recs.push(Rec::SetSize {
            ino,
            old_size,
            new_size: size,
            undo,
        });
        Ok(())
    }
}

/// What FUSE reports for `ino` with metadata `m`.
pub(crate) fn attr(ino: u64, m: &Metadata) -> FileAttr {
    let t = |s: i64, ns: i64| UNIX_EPOCH + Duration::new(s.max(0) as u64, ns.max(0) as u32);
    let kind = if m.is_dir() {
        FileType::Directory
    } else if m.file_type().is_symlink() {
        FileType::Symlink
    } else {
        FileType::RegularFile
    };
    FileAttr {
        ino: INodeNo(ino),
        size: m.len(),
        blocks: m.blocks(),
        atime: t(m.atime(), m.atime_nsec()),
        mtime: t(m.mtime(), m.mtime_nsec()),
        ctime: t(m.ctime(), m.ctime_nsec()),
        crtime: t(m.ctime(), m.ctime_nsec()),
        kind,
        perm: (m.mode() & 0o7777) as u16,
        nlink: m.nlink() as u32,
        uid: m.uid(),
        gid: m.gid(),
        rdev: m.rdev() as u32,
        blksize: 4096,
        flags: 0,
    }
}

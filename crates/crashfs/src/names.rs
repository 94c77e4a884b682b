//! Directory changes (create, mkdir, remove, rename), each done on the
//! backing directory and logged so a crash can undo it: a removed or
//! replaced file waits in the grave instead of being deleted.

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;

use fuser::RenameFlags;

use crate::log::Rec;
use crate::state::State;

/// Options opening a backing file for an access mode (always readable:
/// a write must read the bytes it replaces).
pub(crate) fn open_options(flags: i32) -> OpenOptions {
    let mut o = OpenOptions::new();
    o.read(true);
    if flags & libc::O_ACCMODE != libc::O_RDONLY {
        o.write(true);
    }
    o
}

impl State {
    /// Makes directory `parent/name`.
    pub(crate) fn mkdir(&mut self, parent: u64, name: &OsStr, mode: u32) -> io::Result<PathBuf> {
        let p = self.child(parent, name)?;
        std::fs::DirBuilder::new().mode(mode & 0o7777).create(&p)?;
        let ino = self.ino_of(&p);
        self.log.recs.push(Rec::Create {
            parent,
            name: name.to_os_string(),
            ino,
            dir: true,
        });
        Ok(p)
    }

    /// Creates (or, without `O_EXCL`, opens) file `parent/name`.
    pub(crate) fn create(
        &mut self,
        parent: u64,
        name: &OsStr,
        mode: u32,
        flags: i32,
    ) -> io::Result<(u64, File)> {
        let p = self.child(parent, name)?;
        let existed = std::fs::symlink_metadata(&p).is_ok();
        if existed && flags & libc::O_EXCL != 0 {
            return Err(io::Error::from_raw_os_error(libc::EEXIST));
        }
        let f = open_options(flags)
            .create(true)
            .mode(mode & 0o7777)
            .open(&p)?;
        let ino = self.ino_of(&p);
        if !existed {
            self.log.recs.push(Rec::Create {
                parent,
                name: name.to_os_string(),
                ino,
                dir: false,
            });
        }
        Ok((ino, f))
    }

    /// Removes file `parent/name` (to the grave) or empty directory.
    pub(crate) fn remove(&mut self, parent: u64, name: &OsStr, dir: bool) -> io::Result<()> {
        let p = self.child(parent, name)?;
        std::fs::symlink_metadata(&p)?;
        let ino = self.ino_of(&p);
        let grave = if dir {
            std::fs::remove_dir(&p)?;
            self.forget(ino);
            None
        } else {
            let g = self.grave_slot();
            std::fs::rename(&p, &g)?;
            self.moved(ino, &g);
            Some(g)
        };
        self.log.recs.push(Rec::Remove {
            parent,
            name: name.to_os_string(),
            ino,
            grave,
        });
        Ok(())
    }

    /// Renames `parent/name` to `newparent/newname`, a replaced file to the grave.
    pub(crate) fn rename(
        &mut self,
        (parent, name): (u64, &OsStr),
        (newparent, newname): (u64, &OsStr),
        flags: RenameFlags,
    ) -> io::Result<()> {
        if flags.contains(RenameFlags::RENAME_EXCHANGE)
            || flags.contains(RenameFlags::RENAME_WHITEOUT)
        {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let from = self.child(parent, name)?;
        let to = self.child(newparent, newname)?;
        std::fs::symlink_metadata(&from)?;
        let ino = self.ino_of(&from);
        let mut replaced = None;
        if let Ok(m) = std::fs::symlink_metadata(&to) {
            if flags.contains(RenameFlags::RENAME_NOREPLACE) {
                return Err(io::Error::from_raw_os_error(libc::EEXIST));
            }
            if m.is_dir() {
                // A directory replaced by rename: no engine does it, so
                // it is refused rather than made undoable.
                return Err(io::Error::from_raw_os_error(libc::EISDIR));
            }
            let old = self.ino_of(&to);
            let grave = self.grave_slot();
            std::fs::rename(&to, &grave)?;
            self.moved(old, &grave);
            replaced = Some((old, grave));
        }
        std::fs::rename(&from, &to)?;
        self.moved(ino, &to);
        self.log.recs.push(Rec::Rename {
            parent,
            name: name.to_os_string(),
            newparent,
            newname: newname.to_os_string(),
            ino,
            replaced,
        });
        Ok(())
    }
}

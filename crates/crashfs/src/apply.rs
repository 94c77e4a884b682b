//! Playing a crash on the backing directory once the mount is gone: what
//! was synced stays; of the rest, `lose` keeps nothing, `reorder` a random
//! subset of the data writes and a prefix of the directory changes, and
//! `torn` as `reorder` with one kept write cut at a sector boundary.
//!
//! Everything not synced is first undone, newest first, which brings the
//! backing directory back to what the syncs made durable; the kept changes
//! are then done again in their original order. Writes to the same bytes
//! keep their order (a page is never written back older after newer), so
//! the reordering is in which writes reach the device, not in what a
//! single byte ends up holding among those that do. And a page reaches the
//! device whole: a kept write keeps every earlier unsynced write to one of
//! its 4 KiB pages.

use std::collections::{HashMap, HashSet};
use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use ledgerbench_results::crash::{FsCrash, LOST_NAMES_LISTED, TornWrite};
use ledgerbench_rng::Rng;

use crate::Fault;
use crate::log::Rec;
use crate::state::State;

/// Which records a sync made durable: a file's data up to its last fsync,
/// a directory's entries up to its last fsync (a rename needs both
/// directories').
fn durable(recs: &[Rec]) -> Vec<bool> {
    let (mut files, mut dirs) = (HashSet::new(), HashSet::new());
    let mut out = vec![false; recs.len()];
    for (i, r) in recs.iter().enumerate().rev() {
        out[i] = match r {
            Rec::SyncFile { ino } => {
                files.insert(*ino);
                true
            }
            Rec::SyncDir { ino } => {
                dirs.insert(*ino);
                true
            }
            Rec::Write { ino, .. } | Rec::SetSize { ino, .. } => files.contains(ino),
            Rec::Create { parent, .. } | Rec::Remove { parent, .. } => dirs.contains(parent),
            Rec::Rename {
                parent, newparent, ..
            } => dirs.contains(parent) && dirs.contains(newparent),
        };
    }
    out
}

/// What page write-back makes of the writes kept: a page reaches the
/// device whole, with every earlier write to it, so each kept write keeps
/// every earlier unsynced write that touches one of its 4 KiB pages. Kept
/// whole, such a write may also bring its other pages, a state a device
/// can show too. Without this, of two writes to different bytes of one
/// page the later could persist alone, which no page cache writes.
fn keep_whole_pages(recs: &[Rec], durable: &[bool], keep: &mut [bool]) {
    const PAGE: u64 = 4096;
    // Per file, the pages a kept write (or one it kept) touches.
    let mut kept_pages: HashMap<u64, HashSet<u64>> = HashMap::new();
    for (i, r) in recs.iter().enumerate().rev() {
        let Rec::Write { ino, off, redo, .. } = r else {
            continue;
        };
        if durable[i] || redo.len == 0 {
            continue;
        }
        let pages = off / PAGE..=(off + redo.len - 1) / PAGE;
        let seen = kept_pages.entry(*ino).or_default();
        if !keep[i] && pages.clone().any(|p| seen.contains(&p)) {
            keep[i] = true;
        }
        if keep[i] {
            seen.extend(pages);
        }
    }
}

/// The sector boundary a torn write is cut at: 4 KiB or 512 B (chosen by
/// `rng`), strictly inside `off..off + len`, if there is one.
fn cut_point(off: u64, len: u64, rng: &mut Rng) -> Option<u64> {
    let units = if rng.below(2) == 0 {
        [4096, 512]
    } else {
        [512, 512]
    };
    for unit in units {
        let first = (off / unit + 1) * unit;
        if first < off + len {
            let count = (off + len - 1) / unit - off / unit;
            return Some(first + unit * rng.below(count) - off);
        }
    }
    None
}

/// Plays `fault` on the backing directory behind `s` and says what it did.
pub(crate) fn play(s: &mut State, root: &Path, fault: Fault, rng: &mut Rng) -> io::Result<FsCrash> {
    let recs = std::mem::take(&mut s.log.recs);
    let durable = durable(&recs);
    let data: Vec<usize> = (0..recs.len())
        .filter(|&i| !durable[i] && matches!(recs[i], Rec::Write { .. } | Rec::SetSize { .. }))
        .collect();
    let names: Vec<usize> = (0..recs.len())
        .filter(|&i| !durable[i] && recs[i].is_name_op())
        .collect();
    let mut keep = vec![false; recs.len()];
    if fault != Fault::Lose {
        for &i in &data {
            keep[i] = rng.below(2) == 1;
        }
        let k = rng.below(names.len() as u64 + 1) as usize;
        for &i in &names[..k] {
            keep[i] = true;
        }
    }
    let torn = if fault == Fault::Torn {
        choose_torn(&recs, &data, &mut keep, rng)
    } else {
        None
    };
    keep_whole_pages(&recs, &durable, &mut keep);
    let mut report = FsCrash {
        unsynced_writes: data.len() as u64,
        persisted_writes: data.iter().filter(|&&i| keep[i]).count() as u64,
        unsynced_names: names.len() as u64,
        persisted_names: names.iter().filter(|&&i| keep[i]).count() as u64,
        torn: None,
        logged_bytes: s.log.payload_bytes(),
        lost_names: names
            .iter()
            .filter(|&&i| !keep[i])
            .filter_map(|&i| describe(s, root, &recs[i]))
            .take(LOST_NAMES_LISTED)
            .collect(),
    };
    for (i, r) in recs.iter().enumerate().rev() {
        if !durable[i] {
            undo(s, r)?;
        }
    }
    for (i, r) in recs.iter().enumerate() {
        if !durable[i] && keep[i] {
            let cut = torn.filter(|t| t.0 == i).map(|t| t.1);
            if let (Some(kept), Rec::Write { ino, off, redo, .. }) = (cut, r) {
                report.torn = Some(TornWrite {
                    path: s
                        .paths
                        .get(ino)
                        .and_then(|p| p.strip_prefix(root).ok())
                        .map_or_else(|| format!("inode {ino}"), |p| p.display().to_string()),
                    offset: *off,
                    len: redo.len,
                    kept,
                });
            }
            redo_rec(s, r, cut)?;
        }
    }
    Ok(report)
}

/// The write a torn crash cuts, and where: one kept write that spans a
/// sector boundary, at random (the latest is most often an info log,
/// which tells nothing); failing that, an unsynced one that does, kept
/// torn.
fn choose_torn(
    recs: &[Rec],
    data: &[usize],
    keep: &mut [bool],
    rng: &mut Rng,
) -> Option<(usize, u64)> {
    let cuttable: Vec<usize> = data
        .iter()
        .copied()
        .filter(
            |&i| matches!(recs[i], Rec::Write { off, redo, .. } if (off % 512) + redo.len > 512),
        )
        .collect();
    let kept: Vec<usize> = cuttable.iter().copied().filter(|&i| keep[i]).collect();
    let pool = if kept.is_empty() { &cuttable } else { &kept };
    if pool.is_empty() {
        return None;
    }
    let i = pool[rng.below(pool.len() as u64) as usize];
    if let Rec::Write { off, redo, .. } = &recs[i]
        && let Some(c) = cut_point(*off, redo.len, rng)
    {
        keep[i] = true;
        return Some((i, c));
    }
    None
}

/// A name change as a reader knows it, relative to the backing directory.
fn describe(s: &State, root: &Path, r: &Rec) -> Option<String> {
    let at = |dir: &u64, name: &std::ffi::OsStr| {
        s.paths.get(dir).map(|p| {
            let p = p.join(name);
            p.strip_prefix(root).unwrap_or(&p).display().to_string()
        })
    };
    match r {
        Rec::Create { parent, name, .. } => Some(format!("create {}", at(parent, name)?)),
        Rec::Remove { parent, name, .. } => Some(format!("remove {}", at(parent, name)?)),
        Rec::Rename {
            parent,
            name,
            newparent,
            newname,
            ..
        } => Some(format!(
            "rename {} -> {}",
            at(parent, name)?,
            at(newparent, newname)?
        )),
        _ => None,
    }
}

fn open_rw(p: &Path) -> io::Result<std::fs::File> {
    OpenOptions::new().read(true).write(true).open(p)
}

/// Undoes one record on the backing directory.
fn undo(s: &mut State, r: &Rec) -> io::Result<()> {
    match r {
        Rec::Write {
            ino,
            off,
            old_size,
            undo,
            ..
        } => {
            if let Some(p) = s.paths.get(ino) {
                let f = open_rw(p)?;
                f.write_all_at(&s.log.read(*undo)?, *off)?;
                f.set_len(*old_size)?;
            }
        }
        Rec::SetSize {
            ino,
            old_size,
            new_size,
            undo,
        } => {
            if let Some(p) = s.paths.get(ino) {
                let f = open_rw(p)?;
                f.set_len(*old_size)?;
                f.write_all_at(&s.log.read(*undo)?, *new_size)?;
            }
        }
        Rec::Create { ino, dir, .. } => {
            if let Some(p) = s.paths.get(ino).cloned() {
                if *dir {
                    std::fs::remove_dir_all(&p)?;
                } else {
                    std::fs::remove_file(&p)?;
                }
                s.forget(*ino);
            }
        }
        Rec::Remove {
            parent,
            name,
            ino,
            grave,
        } => {
            if let Ok(to) = s.child(*parent, name) {
                match grave {
                    Some(g) => std::fs::rename(g, &to)?,
                    None => std::fs::create_dir(&to)?,
                }
                s.place(*ino, to);
            }
        }
        Rec::Rename {
            parent,
            name,
            newparent,
            newname,
            ino,
            replaced,
        } => {
            if let (Some(from), Ok(to)) = (s.paths.get(ino).cloned(), s.child(*parent, name)) {
                std::fs::rename(&from, &to)?;
                s.moved(*ino, &to);
            }
            if let (Some((old, g)), Ok(back)) = (replaced, s.child(*newparent, newname)) {
                std::fs::rename(g, &back)?;
                s.place(*old, back);
            }
        }
        Rec::SyncFile { .. } | Rec::SyncDir { .. } => {}
    }
    Ok(())
}

/// Does one kept record again (a write cut to its first `cut` bytes).
fn redo_rec(s: &mut State, r: &Rec, cut: Option<u64>) -> io::Result<()> {
    match r {
        Rec::Write { ino, off, redo, .. } => {
            if let Some(p) = s.paths.get(ino) {
                let mut b = s.log.read(*redo)?;
                b.truncate(cut.unwrap_or(redo.len) as usize);
                open_rw(p)?.write_all_at(&b, *off)?;
            }
        }
        Rec::SetSize { ino, new_size, .. } => {
            if let Some(p) = s.paths.get(ino) {
                open_rw(p)?.set_len(*new_size)?;
            }
        }
        Rec::Create {
            parent,
            name,
            ino,
            dir,
        } => {
            if let Ok(p) = s.child(*parent, name) {
                if *dir {
                    std::fs::create_dir(&p)?;
                } else {
                    OpenOptions::new().write(true).create_new(true).open(&p)?;
                }
                s.place(*ino, p);
            }
        }
        Rec::Remove { ino, grave, .. } => {
            if let Some(p) = s.paths.get(ino).cloned() {
                if grave.is_some() {
                    std::fs::remove_file(&p)?;
                } else {
                    std::fs::remove_dir_all(&p)?;
                }
                s.forget(*ino);
            }
        }
        Rec::Rename {
            newparent,
            newname,
            ino,
            replaced,
            ..
        } => {
            if let (Some(from), Ok(to)) = (s.paths.get(ino).cloned(), s.child(*newparent, newname))
            {
                if let Some((old, _)) = replaced {
                    if let Some(q) = s.paths.get(old).cloned() {
                        std::fs::remove_file(q)?;
                    }
                    s.forget(*old);
                }
                std::fs::rename(&from, &to)?;
                s.moved(*ino, &to);
            }
        }
        Rec::SyncFile { .. } | Rec::SyncDir { .. } => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::Span;

    fn write(ino: u64, off: u64, len: u64) -> Rec {
        Rec::Write {
            ino,
            off,
            old_size: 0,
            undo: Span::default(),
            redo: Span { at: 0, len },
        }
    }

    #[test]
    fn a_kept_write_keeps_the_earlier_writes_to_its_pages_and_no_others() {
        let recs = [
            write(1, 0, 100),       // page 0, reached through the next one
            write(1, 4000, 200),    // pages 0 and 1, under the kept write
            write(1, 8192, 4096),   // page 2: no kept write touches it
            write(2, 4096, 10),     // another file's page 1
            write(1, 4096 + 20, 8), // page 1: kept
            write(1, 0, 4),         // page 0, after the kept one: free
        ];
        let durable = [false; 6];
        let mut keep = [false, false, false, false, true, false];
        keep_whole_pages(&recs, &durable, &mut keep);
        assert_eq!(keep, [true, true, false, false, true, false]);
        // A synced write is the device's already: nothing to keep.
        let mut keep = [false, false, false, false, true, false];
        keep_whole_pages(&recs, &[false, true, false, false, false, false], &mut keep);
        assert_eq!(keep, [false, false, false, false, true, false]);
    }
}

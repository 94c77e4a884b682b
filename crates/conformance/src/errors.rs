//! Bad paths, full stores and corrupt files give clear errors.

use std::fs;
use std::path::PathBuf;

use ledgerbench_core::{Batch, Error, fsutil};

use crate::{SMALL_CAP, Scratch, Subject, put_all, random_bytes, rng};

/// A path that is a file is refused with a clear error; the file is untouched.
pub fn path_that_is_a_file_is_refused(s: &Subject) {
    let sc = Scratch::new();
    fs::write(&sc.store, b"not a store").unwrap();
    let err = (s.open)(&sc.store).err().expect("opening a file must fail");
    assert!(matches!(err, Error::BadPath { .. }), "{}: {err}", s.name);
    assert!(err.to_string().contains("is a file"), "{err}");
    assert_eq!(fs::read(&sc.store).unwrap(), b"not a store");
}

/// A directory that cannot be written gives an error naming the path.
pub fn unwritable_directory_is_refused(s: &Subject) {
    let sc = Scratch::new();
    // Root writes through permission bits, so as root use a place no one can
    // create files in: procfs.
    let path = if is_root() {
        PathBuf::from("/proc/ledgerbench-conformance-store")
    } else {
        use std::os::unix::fs::PermissionsExt;
        fs::create_dir(&sc.store).unwrap();
        fs::set_permissions(&sc.store, fs::Permissions::from_mode(0o555)).unwrap();
        sc.store.clone()
    };
    let err = (s.open)(&path)
        .err()
        .expect("opening an unwritable dir must fail");
    let msg = err.to_string();
    assert!(
        msg.contains(&path.display().to_string()),
        "{}: error does not name the path: {msg}",
        s.name
    );
}

pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A store bounded by config (LMDB map size) gives a full-store error that
/// names the setting to raise, and stays usable.
pub fn full_store_is_a_clear_error(s: &Subject) {
    let Some(open_small) = s.open_small else {
        return;
    };
    let sc = Scratch::new();
    let st = open_small(&sc.store).unwrap();
    let mut r = rng(17);
    let mut err = None;
    for i in 0..(4 * SMALL_CAP / 16384) as u32 {
        let mut b = Batch::new();
        b.put(&i.to_be_bytes(), &random_bytes(&mut r, 16384));
        if let Err(e) = st.write(&b) {
            err = Some(e);
            break;
        }
    }
    let err = err.unwrap_or_else(|| panic!("{}: wrote 4x the cap without an error", s.name));
    assert!(matches!(err, Error::Full { .. }), "{}: {err}", s.name);
    let msg = err.to_string();
    assert!(
        msg.contains("raise `"),
        "{}: error does not name the setting: {msg}",
        s.name
    );
    assert!(
        st.get(&0u32.to_be_bytes()).unwrap().is_some(),
        "{}: earlier data lost",
        s.name
    );
    st.close().unwrap();
}

/// A store whose files were overwritten with garbage fails to open or read
/// with an error, never a panic or a silent empty store.
pub fn corrupt_store_is_an_error(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    put_all(&*st, &[(b"k".to_vec(), b"v".repeat(100))]);
    st.flush().unwrap();
    st.close().unwrap();
    // Engines that keep their files in subdirectories (partitions) are
    // corrupted there too.
    let mut files = Vec::new();
    let mut dirs = vec![sc.store.clone()];
    while let Some(d) = dirs.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                files.push(p);
            }
        }
    }
    for p in files {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name == fsutil::STORE_MARKER
            || !p.is_file()
            || name.contains("LOCK")
            || name.starts_with("LOG")
            || name.ends_with("-lock")
            || name.ends_with(".lck")
        {
            continue;
        }
        let len = fs::metadata(&p).unwrap().len().max(64) as usize;
        fs::write(&p, vec![0x5a; len]).unwrap();
    }
    match (s.open)(&sc.store) {
        Err(e) => assert!(!e.to_string().is_empty()),
        Ok(st) => {
            let got = st.get(b"k");
            assert!(
                got.is_err(),
                "{}: a corrupt store opened and read {:?}",
                s.name,
                got.map(|v| v.map(|v| v.len()))
            );
        }
    }
}

/// A directory holding something ledgerbench did not make, or another engine's
/// store, is refused and left untouched.
pub fn foreign_directory_is_refused(s: &Subject) {
    let sc = Scratch::new();
    fs::create_dir(&sc.store).unwrap();
    fs::write(sc.store.join("data.bin"), b"someone's data").unwrap();
    let err = (s.open)(&sc.store)
        .err()
        .expect("foreign dir must be refused");
    assert!(matches!(err, Error::BadPath { .. }), "{}: {err}", s.name);
    assert_eq!(
        fs::read(sc.store.join("data.bin")).unwrap(),
        b"someone's data"
    );
    assert_eq!(
        fs::read_dir(&sc.store).unwrap().count(),
        1,
        "{}: wrote into a foreign dir",
        s.name
    );

    let sc = Scratch::new();
    fs::create_dir(&sc.store).unwrap();
    fs::write(sc.store.join(fsutil::STORE_MARKER), "some-other-engine\n").unwrap();
    let err = (s.open)(&sc.store)
        .err()
        .expect("another engine's store must be refused");
    assert!(
        err.to_string().contains("some-other-engine"),
        "{}: {err}",
        s.name
    );
}

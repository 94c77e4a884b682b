//! Deletes, overwrites across flushes and compactions, and key edge cases.

use std::collections::BTreeMap;

use ledgerbench_core::{Batch, Error, KvStore};

use crate::{Scratch, Subject, put_all, random_bytes, reopen, rng};

fn scan_all(st: &dyn KvStore) -> Vec<(Vec<u8>, Vec<u8>)> {
    st.scan_collect(b"", usize::MAX).unwrap()
}

pub(crate) fn check_model(
    s: &Subject,
    st: &dyn KvStore,
    model: &BTreeMap<Vec<u8>, Vec<u8>>,
    when: &str,
) {
    for (k, v) in model {
        assert_eq!(
            st.get(k).unwrap().as_ref(),
            Some(v),
            "{}: {when}: wrong value",
            s.name
        );
    }
    if st.capabilities().ordered_iteration {
        let want: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        assert!(
            scan_all(st) == want,
            "{}: {when}: scan differs from the model",
            s.name
        );
    }
}

/// Deleted keys are gone from point reads and from scans, also a scan that
/// starts at a deleted key.
pub fn deletes_hide_keys_from_scans(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    let pairs: Vec<_> = (0..100u32)
        .map(|i| (i.to_be_bytes().to_vec(), vec![i as u8; 10]))
        .collect();
    put_all(&*st, &pairs);
    st.flush().unwrap();
    let mut b = Batch::new();
    for i in (1..100u32).step_by(2) {
        b.delete(&i.to_be_bytes());
    }
    st.write(&b).unwrap();
    for i in 0..100u32 {
        assert_eq!(
            st.get(&i.to_be_bytes()).unwrap().is_some(),
            i % 2 == 0,
            "{}: key {i}",
            s.name
        );
    }
    if st.capabilities().ordered_iteration {
        let keys: Vec<_> = scan_all(&*st).into_iter().map(|(k, _)| k).collect();
        let want: Vec<_> = (0..100u32)
            .step_by(2)
            .map(|i| i.to_be_bytes().to_vec())
            .collect();
        assert_eq!(keys, want, "{}: a tombstone shows in a scan", s.name);
        let from = st.scan_collect(&7u32.to_be_bytes(), 1).unwrap();
        assert_eq!(from[0].0, 8u32.to_be_bytes().to_vec(), "{}", s.name);
    }
    st.close().unwrap();
}

/// Overwrites and deletes spread over flushed files and a compaction read
/// back as the last write, by get and by scan, before and after a reopen.
pub fn overwrites_and_deletes_survive_flush_and_compaction(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    let mut r = rng(21);
    let mut model = BTreeMap::new();
    let keys: Vec<_> = (0..1000).map(|_| random_bytes(&mut r, 16)).collect();
    let first: Vec<_> = keys
        .iter()
        .map(|k| (k.clone(), random_bytes(&mut r, 100)))
        .collect();
    put_all(&*st, &first);
    model.extend(first);
    st.flush().unwrap();
    let mut b = Batch::new();
    for (i, k) in keys.iter().enumerate() {
        match i % 4 {
            0 => {
                b.delete(k);
                model.remove(k);
            }
            1 => {
                let v = random_bytes(&mut r, 60);
                b.put(k, &v);
                model.insert(k.clone(), v);
            }
            _ => {}
        }
    }
    st.write(&b).unwrap();
    st.flush().unwrap();
    check_model(s, &*st, &model, "after two flushes");
    if st.capabilities().manual_compaction {
        st.compact().unwrap();
        check_model(s, &*st, &model, "after compaction");
    }
    let st = reopen(s, st);
    check_model(s, &*st, &model, "after reopen");
    st.close().unwrap();
}

/// Keys of 0xFF and 0x00 bytes and keys that are prefixes of each other are
/// distinct keys, sorted bytewise, and scans start exactly at the bound.
pub fn high_bytes_and_prefix_boundaries(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    let keys: Vec<Vec<u8>> = vec![
        vec![0x00],
        vec![0x00, 0x00],
        b"a".to_vec(),
        b"a\x00".to_vec(),
        b"ab".to_vec(),
        b"a\xff".to_vec(),
        vec![0xfe, 0xff],
        vec![0xff],
        vec![0xff, 0xff],
        vec![0xff; 32],
    ];
    let pairs: Vec<_> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.clone(), vec![i as u8; i + 1]))
        .collect();
    put_all(&*st, &pairs);
    for (k, v) in &pairs {
        assert_eq!(
            st.get(k).unwrap().as_ref(),
            Some(v),
            "{}: key {k:x?}",
            s.name
        );
    }
    if st.capabilities().ordered_iteration {
        let got: Vec<Vec<u8>> = scan_all(&*st).into_iter().map(|p| p.0).collect();
        assert_eq!(got, keys, "{}: not in byte order", s.name);
        let from = |start: &[u8]| -> Vec<Vec<u8>> {
            st.scan_collect(start, usize::MAX)
                .unwrap()
                .into_iter()
                .map(|p| p.0)
                .collect()
        };
        assert_eq!(from(&[0xff]), keys[7..].to_vec(), "{}", s.name);
        assert_eq!(from(b"a\xff"), keys[5..].to_vec(), "{}", s.name);
        assert_eq!(from(b"a\x00\x00"), keys[4..].to_vec(), "{}", s.name);
        assert!(from(&[0xff; 33]).is_empty(), "{}", s.name);
    }
    st.close().unwrap();
}

/// A long key is stored and read back, or refused with an error that names
/// the key's length and the engine's limit; either way the store goes on.
pub fn long_keys_work_or_fail_clearly(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    for (i, len) in [511usize, 512, 2048, 4096, 65536].into_iter().enumerate() {
        // A byte of its own per length, so no key is a prefix of another.
        let key = vec![0xa0 + i as u8; len];
        let mut b = Batch::new();
        b.put(&key, b"v");
        match st.write(&b) {
            Ok(()) => assert_eq!(
                st.get(&key).unwrap().as_deref(),
                Some(&b"v"[..]),
                "{}: {len}-byte key",
                s.name
            ),
            Err(Error::KeyTooLong { len: l, max, .. }) => {
                assert!(l == len && max < len, "{}: {l} vs limit {max}", s.name);
                assert_eq!(st.get(&key[..max]).unwrap(), None);
            }
            Err(e) => panic!("{}: a {len}-byte key gave an unclear error: {e}", s.name),
        }
    }
    put_all(&*st, &[(b"after".to_vec(), b"ok".to_vec())]);
    assert_eq!(st.get(b"after").unwrap().as_deref(), Some(&b"ok"[..]));
    st.close().unwrap();
}

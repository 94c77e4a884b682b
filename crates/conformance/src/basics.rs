//! Reads, writes, iteration and value sizes.

use ledgerbench_core::Batch;
use rand::Rng;

use crate::{Scratch, Subject, put_all, random_bytes, reopen, rng};

/// Put, get, overwrite, delete.
pub fn put_get_overwrite_delete(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    let mut b = Batch::new();
    b.put(b"alpha", b"1");
    b.put(b"beta", b"2");
    st.write(&b).unwrap();
    assert_eq!(st.get(b"alpha").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(st.get(b"beta").unwrap().as_deref(), Some(&b"2"[..]));

    let mut b = Batch::new();
    b.put(b"alpha", b"one");
    b.delete(b"beta");
    st.write(&b).unwrap();
    assert_eq!(st.get(b"alpha").unwrap().as_deref(), Some(&b"one"[..]));
    assert_eq!(
        st.get(b"beta").unwrap(),
        None,
        "{}: deleted key still visible",
        s.name
    );

    // Within one batch, later operations win.
    let mut b = Batch::new();
    b.put(b"gamma", b"x");
    b.delete(b"gamma");
    b.put(b"delta", b"x");
    b.put(b"delta", b"y");
    st.write(&b).unwrap();
    assert_eq!(st.get(b"gamma").unwrap(), None);
    assert_eq!(st.get(b"delta").unwrap().as_deref(), Some(&b"y"[..]));

    // get_into clears the buffer it is given.
    let mut buf = b"stale".to_vec();
    assert!(st.get_into(b"alpha", &mut buf).unwrap());
    assert_eq!(buf, b"one");
    assert!(!st.get_into(b"nope", &mut buf).unwrap());

    // get_many: one answer per key, in order, into a buffer it clears.
    let mut many = vec![Some(b"stale".to_vec())];
    let keys: [&[u8]; 4] = [b"delta", b"nope", b"alpha", b"beta"];
    let keys = keys.map(<[u8]>::to_vec);
    st.get_many(&keys, &mut many).unwrap();
    let want = [Some(&b"y"[..]), None, Some(&b"one"[..]), None].map(|v| v.map(<[u8]>::to_vec));
    assert_eq!(many, want.to_vec(), "{}: get_many", s.name);
    st.get_many(&[], &mut many).unwrap();
    assert!(many.is_empty(), "{}: get_many of no keys", s.name);
    st.close().unwrap();
}

/// A key never written, and one deleted, read as None.
pub fn missing_key_is_none(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    assert_eq!(st.get(b"never-written").unwrap(), None);
    assert_eq!(st.get(&[0u8; 32]).unwrap(), None);
    put_all(&*st, &[(b"k".to_vec(), b"v".to_vec())]);
    assert_eq!(st.get(b"k\0").unwrap(), None, "prefix match is not a hit");
    assert_eq!(st.get(b"").unwrap(), None);
    st.close().unwrap();
}

/// Iteration from a key returns keys in byte order, starting at the first key >= start.
pub fn ordered_iteration(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    if !st.capabilities().ordered_iteration {
        return;
    }
    let mut r = rng(11);
    let mut keys: Vec<Vec<u8>> = (0..1000)
        .map(|_| {
            let n = r.random_range(1..40);
            random_bytes(&mut r, n)
        })
        .collect();
    let pairs: Vec<_> = keys
        .iter()
        .map(|k| (k.clone(), k.iter().rev().copied().collect()))
        .collect();
    put_all(&*st, &pairs);
    keys.sort();
    keys.dedup();
    let all = st.scan_collect(b"", usize::MAX).unwrap();
    let got: Vec<_> = all.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(got, keys, "{}: full scan not in byte order", s.name);
    for (k, v) in &all {
        assert_eq!(v, &k.iter().rev().copied().collect::<Vec<u8>>());
    }
    let start = keys[400].clone();
    let mut probe = start.clone();
    probe.pop(); // a start key that may not exist
    let from = st.scan_collect(&probe, 10).unwrap();
    let expect: Vec<_> = keys
        .iter()
        .filter(|k| **k >= probe)
        .take(10)
        .cloned()
        .collect();
    assert_eq!(from.into_iter().map(|p| p.0).collect::<Vec<_>>(), expect);
    assert!(st.scan_collect(&[0xff; 64], 10).unwrap().is_empty());
    st.close().unwrap();
}

/// 10,000 uniformly random 32-byte keys (the shape of transaction hashes).
pub fn random_32_byte_keys(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    let mut r = rng(32);
    let pairs: Vec<_> = (0..10_000)
        .map(|_| {
            let k = random_bytes(&mut r, 32);
            let v = k[..8].repeat(4);
            (k, v)
        })
        .collect();
    for chunk in pairs.chunks(1000) {
        put_all(&*st, chunk);
    }
    st.flush().unwrap();
    let mut buf = Vec::new();
    for (k, v) in &pairs {
        assert!(st.get_into(k, &mut buf).unwrap(), "{}: key lost", s.name);
        assert_eq!(&buf, v);
    }
    if st.capabilities().ordered_iteration {
        let mut n = 0usize;
        st.scan(b"", &mut |_, _| {
            n += 1;
            true
        })
        .unwrap();
        assert_eq!(n, pairs.len());
    }
    st.close().unwrap();
}

/// Empty values and values of 1 MiB and more round-trip exactly.
pub fn empty_and_large_values(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    let mut r = rng(3);
    let pairs = vec![
        (b"empty".to_vec(), Vec::new()),
        (b"one-mib".to_vec(), random_bytes(&mut r, 1 << 20)),
        (b"three-mib".to_vec(), random_bytes(&mut r, 3 << 20)),
    ];
    put_all(&*st, &pairs);
    let st = reopen(s, st);
    for (k, v) in &pairs {
        let got = st.get(k).unwrap();
        assert_eq!(
            got.as_ref().map(Vec::len),
            Some(v.len()),
            "{}: {:?}",
            s.name,
            String::from_utf8_lossy(k)
        );
        assert!(got.as_ref() == Some(v));
    }
    // Many at once, in the order asked: an empty value is found, not absent.
    let mut keys: Vec<Vec<u8>> = pairs.iter().map(|(k, _)| k.clone()).collect();
    keys.insert(1, b"absent".to_vec());
    let mut many = Vec::new();
    st.get_many(&keys, &mut many).unwrap();
    let mut want: Vec<Option<Vec<u8>>> = pairs.iter().map(|(_, v)| Some(v.clone())).collect();
    want.insert(1, None);
    assert!(many == want, "{}: get_many answered other values", s.name);
    st.close().unwrap();
}

//! Known roots from ethereum/tests and go-ethereum, and the stored trie
//! against a reference map and a from-scratch root at every block.

use std::collections::BTreeMap;

use ledgerbench_core::{Batch, KvBackend, KvStore};
use ledgerbench_mem::{Mem, MemConfig, MemLog};

use crate::accounts::{Accounts, account_rlp};
use crate::build::{self, Leaf, hex};
use crate::{EMPTY_ROOT, Hash, Scheme, Trie, keccak};

fn unhex(s: &str) -> Vec<u8> {
    let s = s.trim_start_matches("0x");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// The root of `pairs` (keys hashed first when `secure`), nodes discarded.
fn root_of(pairs: &[(&[u8], &[u8])], secure: bool) -> String {
    let mut items: Vec<(Vec<u8>, Vec<u8>)> = pairs
        .iter()
        .map(|(k, v)| {
            let k = if secure {
                keccak(k).to_vec()
            } else {
                k.to_vec()
            };
            (k, v.to_vec())
        })
        .collect();
    items.sort();
    hex(&build::root(&items, &mut |_, _, _| Ok(())).expect("builds"))
}

#[test]
fn constants_are_the_hashes_they_name() {
    assert_eq!(keccak(&[0x80]), EMPTY_ROOT);
    assert_eq!(
        hex(&keccak(b"")),
        "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"
    );
    assert_eq!(hex(&EMPTY_ROOT), root_of(&[], true));
}

/// ethereum/tests TrieTests (secure: keys hashed) and go-ethereum's
/// stack-trie vectors (keys as given, short values inlined).
#[test]
fn roots_match_known_vectors() {
    // trieanyorder_secureTrie.json "singleItem".
    let a50 = [b'a'; 50];
    assert_eq!(
        root_of(&[(b"A", &a50)], true),
        "e9e2935138352776cad724d31c9fa5266a5c593bb97726dd2a908fe6d53284df"
    );
    // trieanyorder_secureTrie.json "puppy".
    let puppy: [(&[u8], &[u8]); 4] = [
        (b"do", b"verb"),
        (b"horse", b"stallion"),
        (b"doge", b"coin"),
        (b"dog", b"puppy"),
    ];
    assert_eq!(
        root_of(&puppy, true),
        "29b235a58c3c25ab83010c327d5932bcf05324b7d6b1185e650798034783ca9d"
    );
    // hex_encoded_securetrie_test.json "test2": three accounts.
    let accts = [
        ("a94f5374fce5edbc8e2a8697c15331677e6ebf0b", "f84c01880de0b6b3a7622746a056e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421a0c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"),
        ("095e7baea6a6c7c4c2dfeb977efac326af552d87", "f84780830186b7a056e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421a0501653f02840675b1aab0328c6634762af5d51764e78f9641cccd9b27b90db4f"),
        ("2adc25665018aa1fe0e6bc666dac8fc2697ff9ba", "f8468082521aa056e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421a0c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"),
    ]
    .map(|(k, v)| (unhex(k), unhex(v)));
    let refs: Vec<(&[u8], &[u8])> = accts.iter().map(|(k, v)| (&k[..], &v[..])).collect();
    assert_eq!(
        root_of(&refs, true),
        "a7c787bf470808896308c215e22c7a580a0087bb6db6e8695fb4759537283a83"
    );
    // trietest_secureTrie.json "jeff": the state its inserts, delete and
    // overwrite leave.
    let jeff = [
        (
            "0000000000000000000000000000000000000000000000000000000000000045",
            "22b224a1420a802ab51d326e29fa98e34c4f24ea",
        ),
        (
            "0000000000000000000000000000000000000000000000000000000000000046",
            "67706c2076330000000000000000000000000000000000000000000000000000",
        ),
        (
            "000000000000000000000000697c7b8c961b56f675d570498424ac8de1a918f6",
            "6f6f6f6820736f2067726561742c207265616c6c6c793f000000000000000000",
        ),
        (
            "0000000000000000000000007ef9e639e2733cb34e4dfc576d4b23f72db776b2",
            "4655474156000000000000000000000000000000000000000000000000000000",
        ),
        (
            "000000000000000000000000ec4f34c97e43fbb2816cfd95e388353c7181dab1",
            "4e616d6552656700000000000000000000000000000000000000000000000000",
        ),
        (
            "4655474156000000000000000000000000000000000000000000000000000000",
            "7ef9e639e2733cb34e4dfc576d4b23f72db776b2",
        ),
        (
            "4e616d6552656700000000000000000000000000000000000000000000000000",
            "ec4f34c97e43fbb2816cfd95e388353c7181dab1",
        ),
        (
            "6f6f6f6820736f2067726561742c207265616c6c6c793f000000000000000000",
            "697c7b8c961b56f675d570498424ac8de1a918f6",
        ),
    ]
    .map(|(k, v)| (unhex(k), unhex(v)));
    let refs: Vec<(&[u8], &[u8])> = jeff.iter().map(|(k, v)| (&k[..], &v[..])).collect();
    assert_eq!(
        root_of(&refs, true),
        "72adb52e9d9428f808e3e8045be18d3baa77881d0cfab89a17a2bcbacee2f320"
    );
    // go-ethereum trie/stacktrie_test.go: every leaf inlined, the root
    // (26 bytes) hashed anyway.
    let short: [(&[u8], &[u8]); 4] = [
        (&[0x01], b"a"),
        (&[0x80], b"b"),
        (&[0xee], b"c"),
        (&[0xff], b"d"),
    ];
    assert_eq!(
        root_of(&short[..2], false),
        "2dc6b680daf74db067cb7aeaad73265ded93d96fce190fcbf64f498d475672ab"
    );
    assert_eq!(
        root_of(&short, false),
        "bd5a3584d271d459bd4eb95247b2fc88656b3671b60c1125ffe7bc0b689470d0"
    );
    // ... and nodes of exactly 31 bytes, inlined under an extension and a branch.
    let z = [b'Z'; 9];
    let x = [b'X'; 28];
    let edge: [(&[u8], &[u8]); 3] = [(&[0, 0, 1], &z), (&[0, 0, 2], b"Y"), (&[0, 0, 3], &x)];
    assert_eq!(
        root_of(&edge, false),
        "962c0fffdeef7612a4f7bff1950d67e3e81c878e48b9ae45b3b374253b050bd8"
    );
}

fn mem_store() -> (tempfile::TempDir, Box<dyn KvStore>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = MemConfig {
        persist: false,
        log: MemLog::Off,
        planted: None,
    };
    let store = Mem::open_boxed(&dir.path().join("s"), &cfg).expect("open");
    (dir, store)
}

/// Loads `items` into `store` under `scheme`; the root.
fn load(store: &dyn KvStore, scheme: Scheme, items: &[(Vec<u8>, Vec<u8>)]) -> Hash {
    let mut batch = Batch::new();
    let mut key = Vec::new();
    let root = build::root(items, &mut |path, h, rlp| {
        scheme.node_key(path, h, &mut key);
        batch.put(&key, rlp);
        Ok(())
    })
    .expect("builds");
    store.write(&batch).expect("write");
    root
}

fn entries(store: &dyn KvStore) -> usize {
    store.scan_collect(&[], usize::MAX).expect("scan").len()
}

fn read_all(trie: &mut Trie<'_>, reference: &BTreeMap<Vec<u8>, Vec<u8>>) {
    for (k, v) in reference {
        let (got, trace) = trie.read(k, &mut |_, _| {}).expect("read");
        assert_eq!(got.as_ref(), Some(v), "key {}", hex(k));
        assert!(trace.fetched >= 1);
    }
    let mut missing = reference.keys().next().expect("a key").clone();
    missing[31] ^= 1;
    if !reference.contains_key(&missing) {
        assert_eq!(trie.read(&missing, &mut |_, _| {}).expect("read").0, None);
    }
}

/// Blocks of seeded updates through the store agree with a reference map
/// on every value and with a from-scratch root at every block, both schemes.
#[test]
fn stored_trie_agrees_with_a_reference_map_and_a_fresh_root_every_block() {
    let accts = Accounts { seed: 7, n: 3000 };
    for scheme in [Scheme::Hash, Scheme::Path] {
        let (_dir, store) = mem_store();
        let mut reference: BTreeMap<Vec<u8>, Vec<u8>> = (0..accts.n)
            .map(|i| (accts.key(i).to_vec(), account_rlp(7, i, 0)))
            .collect();
        let items: Vec<_> = reference.clone().into_iter().collect();
        let root = load(&*store, scheme, &items);
        let mut trie = Trie::new(&*store, scheme, root);
        let mut versions = vec![0u32; accts.n as usize];
        let mut r = ledgerbench_rng::Rng::new(99);
        for block in 0..20 {
            let mut picked: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
            // Small blocks and one large one.
            for _ in 0..if block == 10 { 2000 } else { 1 + block * 3 } {
                let i = r.below(accts.n);
                versions[i as usize] += 1;
                let v = account_rlp(7, i, versions[i as usize]);
                picked.insert(accts.key(i).to_vec(), v.clone());
                reference.insert(accts.key(i).to_vec(), v);
            }
            let updates: Vec<_> = picked.into_iter().collect();
            let mut batch = Batch::new();
            let cost = trie.update(&updates, &mut batch).expect("update");
            store.write(&batch).expect("commit");
            assert!(cost.nodes_written as usize > updates.len());
            let fresh: Vec<_> = reference.clone().into_iter().collect();
            let want = build::root(&fresh, &mut |_, _, _| Ok(())).expect("root");
            assert_eq!(hex(&trie.root()), hex(&want), "{scheme:?} block {block}");
            read_all(&mut trie, &reference);
        }
        // The bucketed build gives the same root as the one-slice build.
        let by_buckets = build::root_by_buckets(
            1,
            &mut |b| Ok(accts.bucket(1, b, &|i| versions[i as usize])),
            &mut |_, _, _| Ok(()),
        )
        .expect("buckets");
        assert_eq!(by_buckets, trie.root());
        assert_eq!(
            accts
                .bucket(1, 3, &|_| 0)
                .iter()
                .map(|a| a.key()[0] >> 4)
                .max(),
            Some(3)
        );
    }
}

/// A hand-made trie of three keys: root branch; under nibble 0 a branch of
/// two leaves, under nibble 1 a leaf. Updating one key of the pair
/// rewrites exactly its leaf, its branch and the root: three new entries
/// under the hash scheme, three overwritten ones under the path scheme.
#[test]
fn hash_scheme_grows_and_path_scheme_overwrites_by_exact_counts() {
    let key = |b: u8| {
        let mut k = vec![0x55u8; 32];
        k[0] = b;
        k
    };
    let value = |n: u8| vec![n; 40];
    let items = vec![
        (key(0x00), value(1)),
        (key(0x01), value(2)),
        (key(0x10), value(3)),
    ];
    for (scheme, growth) in [(Scheme::Hash, 3), (Scheme::Path, 0)] {
        let (_dir, store) = mem_store();
        let root = load(&*store, scheme, &items);
        assert_eq!(entries(&*store), 5, "{scheme:?}: 2 branches and 3 leaves");
        let mut trie = Trie::new(&*store, scheme, root);
        let mut batch = Batch::new();
        let cost = trie
            .update(&[(key(0x00), value(9))], &mut batch)
            .expect("update");
        store.write(&batch).expect("commit");
        assert_eq!(cost.nodes_written, 3, "{scheme:?}");
        assert_eq!(cost.nodes_read, 3, "{scheme:?}");
        assert_eq!(entries(&*store), 5 + growth, "{scheme:?}");
        // A second block grows the hash scheme again by the same count.
        let mut batch = Batch::new();
        trie.update(&[(key(0x01), value(8))], &mut batch)
            .expect("update");
        store.write(&batch).expect("commit");
        assert_eq!(entries(&*store), 5 + 2 * growth, "{scheme:?}");
        let (got, trace) = trie.read(&key(0x01), &mut |_, _| {}).expect("read");
        assert_eq!(got, Some(value(8)));
        assert_eq!((trace.fetched, trace.leaf_depth), (3, 2));
    }
}

#[test]
fn an_update_of_a_key_not_in_the_trie_is_refused() {
    let (_dir, store) = mem_store();
    let items = vec![
        (vec![0u8; 32], vec![1u8; 40]),
        (vec![0x10u8; 32], vec![2u8; 40]),
    ];
    let root = load(&*store, Scheme::Path, &items);
    let mut trie = Trie::new(&*store, Scheme::Path, root);
    let e = trie
        .update(&[(vec![0x20u8; 32], vec![3u8; 40])], &mut Batch::new())
        .expect_err("refused");
    assert!(e.to_string().contains("not in the trie"), "{e}");
    let e = trie
        .update(
            &[
                (vec![0x10u8; 32], vec![3u8; 40]),
                (vec![0u8; 32], vec![3u8; 40]),
            ],
            &mut Batch::new(),
        )
        .expect_err("refused");
    assert!(e.to_string().contains("sorted"), "{e}");
    // A lost write under the path scheme is caught, not read as current.
    let mut batch = Batch::new();
    trie.update(&[(vec![0u8; 32], vec![5u8; 40])], &mut batch)
        .expect("update");
    let e = trie
        .read(&[0u8; 32], &mut |_, _| {})
        .expect_err("stale root");
    assert!(
        e.to_string().contains("not the one its parent names"),
        "{e}"
    );
}

/// Sparse buckets fold up: a bucket alone under its parent becomes a leaf
/// or an extension one nibble longer. Built one bucket at a time or in one
/// slice, the roots agree.
#[test]
fn a_trie_built_by_sparse_buckets_has_the_root_of_one_built_at_once() {
    let key = |a: u8, b: u8| {
        let mut k = vec![0x3cu8; 32];
        (k[0], k[1]) = (a, b);
        k
    };
    let sets: [&[(u8, u8)]; 5] = [
        &[(0x12, 0x00)],
        &[(0x12, 0x00), (0x12, 0x01)],
        &[(0x12, 0x00), (0x13, 0x00)],
        &[(0x12, 0x00), (0x12, 0x01), (0xf0, 0x00)],
        &[(0x00, 0x00), (0x01, 0x00), (0x02, 0x55), (0x02, 0x56)],
    ];
    for set in sets {
        let mut items: Vec<(Vec<u8>, Vec<u8>)> = set
            .iter()
            .map(|&(a, b)| (key(a, b), vec![a ^ b; 40]))
            .collect();
        items.sort();
        let want = build::root(&items, &mut |_, _, _| Ok(())).expect("root");
        for depth in [1usize, 2] {
            let got = build::root_by_buckets(
                depth,
                &mut |b| {
                    Ok(items
                        .iter()
                        .filter(|(k, _)| {
                            let prefix = if depth == 1 { k[0] >> 4 } else { k[0] };
                            u64::from(prefix) == b
                        })
                        .cloned()
                        .collect())
                },
                &mut |_, _, _| Ok(()),
            )
            .expect("buckets");
            assert_eq!(hex(&got), hex(&want), "{set:?} at depth {depth}");
        }
    }
}

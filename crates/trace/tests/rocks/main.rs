//! RocksDB query traces: every record kind imported to the operations it
//! should become, in versions 0.1 and 0.2; refusals listed; every damaged
//! trace refused with the byte offset and what was expected.

mod enc;

use enc::Batch;
use ledgerbench_trace::queue::OwnedOp;
use ledgerbench_trace::rocks::import::RocksImport;
use ledgerbench_trace::rocks::survey::ImportOptions;
use ledgerbench_trace::{Expect, OpSource, TraceError};

fn import(bytes: &[u8], opts: ImportOptions) -> Result<(Vec<String>, RocksImport), TraceError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("trace");
    std::fs::write(&p, bytes).expect("write");
    let mut src = RocksImport::open(&[p], opts)?;
    let mut ops = Vec::new();
    while let Some(op) = src.next_op()? {
        ops.push(format!("{:?}", OwnedOp::from(&op)));
    }
    Ok((ops, src))
}

fn opts() -> ImportOptions {
    ImportOptions {
        scan_length: Some(5),
        cf_names: [(2, "shreds".to_string())].into(),
        ..ImportOptions::default()
    }
}

fn everything(v1: bool) -> Vec<u8> {
    let mut t = enc::header(if v1 { "0.1" } else { "0.2" }, 1000);
    let b = Batch::new()
        .put(0, b"a", b"1")
        .put(2, b"b", b"2")
        .delete(0, b"c")
        .single_delete(2, b"d")
        .delete_range(0, b"e", b"g")
        .timed_put(0, b"t", b"tv", 99)
        .log_data(b"x")
        .bytes(None);
    if v1 {
        enc::record(&mut t, 1000, 3, &b);
        enc::v1_cf_key(&mut t, 1500, 4, 2, b"b");
        enc::v1_cf_key(&mut t, 1700, 5, 0, b"b");
    } else {
        enc::write(&mut t, 1000, &b);
        enc::get(&mut t, 1500, 2, b"b");
        enc::multiget(&mut t, 1600, &[(0, b"a"), (2, b"b")]);
        enc::seek(&mut t, 1700, false, 0, b"a", b"b", b"z");
    }
    enc::end(&mut t, 1800);
    t
}

fn s(v: &[u8]) -> Vec<u8> {
    v.to_vec()
}

fn writes() -> Vec<String> {
    [
        OwnedOp::At(0),
        OwnedOp::Put(0, s(b"a"), s(b"1")),
        OwnedOp::Put(1, s(b"b"), s(b"2")),
        OwnedOp::Delete(0, s(b"c")),
        OwnedOp::Delete(1, s(b"d")),
        OwnedOp::DeleteRange(0, s(b"e"), s(b"g")),
        OwnedOp::Put(0, s(b"t"), s(b"tv")),
        OwnedOp::Commit(false),
        OwnedOp::At(500),
        OwnedOp::Get(1, s(b"b"), Expect::Unchecked),
    ]
    .iter()
    .map(|o| format!("{o:?}"))
    .collect()
}

#[test]
fn version_2_records_become_their_operations() {
    let (ops, src) = import(&everything(false), opts()).expect("import");
    let mut want = writes();
    want.extend(
        [
            OwnedOp::At(600),
            OwnedOp::Get(0, s(b"a"), Expect::Unchecked),
            OwnedOp::Get(1, s(b"b"), Expect::Unchecked),
            OwnedOp::At(700),
            // A Seek below its lower bound starts at the bound.
            OwnedOp::Scan(0, s(b"b"), s(b"z"), 5),
        ]
        .iter()
        .map(|o| format!("{o:?}")),
    );
    assert_eq!(ops, want);
    assert_eq!(src.header().stores, ["default", "shreds"]);
    let sm = src.summary();
    assert_eq!(
        (
            sm.writes,
            sm.puts,
            sm.timed_puts,
            sm.deletes,
            sm.single_deletes
        ),
        (1, 2, 1, 1, 1)
    );
    assert_eq!(
        (
            sm.delete_ranges,
            sm.markers,
            sm.gets,
            sm.multigets,
            sm.multiget_keys,
            sm.seeks
        ),
        (1, 1, 1, 1, 2, 1)
    );
    assert_eq!(
        (
            sm.micros,
            sm.trace_version.as_str(),
            sm.rocksdb_version.as_str()
        ),
        (700, "0.2", "11.8")
    );
    // The options are in the header, so every replay's results carry them.
    assert_eq!(src.header().source["options"]["scan_length"], 5);
}

#[test]
fn version_1_records_become_their_operations() {
    let (ops, src) = import(&everything(true), opts()).expect("import");
    let mut want = writes();
    want.extend(
        [OwnedOp::At(700), OwnedOp::Scan(0, s(b"b"), Vec::new(), 5)]
            .iter()
            .map(|o| format!("{o:?}")),
    );
    assert_eq!(ops, want);
    assert_eq!(src.summary().trace_version, "0.1");
}

#[test]
fn marks_follow_every_nth_record_and_the_clock_is_not_repeated() {
    let mut t = enc::header("0.2", 10);
    for i in 0..5u8 {
        enc::get(&mut t, 10, 0, &[i]);
    }
    enc::end(&mut t, 11);
    let o = ImportOptions {
        mark_every: 2,
        ..ImportOptions::default()
    };
    let (ops, _) = import(&t, o).expect("import");
    let marks: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, o)| o.starts_with("Mark"))
        .map(|(i, _)| i)
        .collect();
    // At(0), get, get, mark, get, get, mark, get: one time, two marks.
    assert_eq!(ops.iter().filter(|o| o.starts_with("At")).count(), 1);
    assert_eq!(marks, [3, 6]);
    assert_eq!(ops[3], "Mark(\"records 2\")");
}

#[test]
fn what_has_no_neutral_meaning_is_refused_together_and_mapped_by_flags() {
    let mut t = enc::header("0.2", 0);
    enc::write(&mut t, 1, &Batch::new().merge(0, b"m", b"+1").bytes(None));
    enc::seek(&mut t, 2, true, 0, b"k", b"", b"");
    enc::seek(&mut t, 3, false, 0, b"k", b"", b"");
    enc::end(&mut t, 4);
    let e = import(&t, ImportOptions::default())
        .err()
        .expect("refused")
        .to_string();
    for want in [
        "1 Merge entries",
        "--merge-as-put",
        "2 Seek and SeekForPrev records",
        "--scan-length",
        "1 SeekForPrev records",
        "--seek-for-prev-forward",
    ] {
        assert!(e.contains(want), "{want:?} missing from: {e}");
    }
    let o = ImportOptions {
        merge_as_put: true,
        seek_for_prev_forward: true,
        scan_length: Some(3),
        ..ImportOptions::default()
    };
    let (ops, src) = import(&t, o).expect("mapped");
    assert_eq!(ops[1], format!("{:?}", OwnedOp::Put(0, s(b"m"), s(b"+1"))));
    assert_eq!(
        ops[4],
        format!("{:?}", OwnedOp::Scan(0, s(b"k"), Vec::new(), 3))
    );
    assert_eq!(src.summary().merges, 1);
}

fn format_error(r: Result<(Vec<String>, RocksImport), TraceError>) -> (u64, String) {
    match r {
        Err(TraceError::Format { offset, what, .. }) => (offset, what),
        Err(e) => panic!("expected a format error, got {e}"),
        Ok((ops, _)) => panic!("expected a format error, got {} operations", ops.len()),
    }
}

#[test]
fn a_trace_cut_anywhere_is_refused_where_it_ends() {
    let t = everything(false);
    let ends = record_ends(&t);
    for cut in 0..t.len() {
        let r = import(&t[..cut], opts());
        if cut == 0 {
            assert!(r.is_err(), "empty file accepted");
            continue;
        }
        let (offset, what) = format_error(r);
        assert!(
            offset <= cut as u64,
            "cut at {cut}: error at {offset}: {what}"
        );
        let boundary = ends.contains(&cut);
        assert!(
            what.contains(if boundary { "cut short" } else { "truncated" })
                || (cut < ends[0] && what.contains("header")),
            "cut at {cut} (boundary {boundary}): {what}"
        );
        if boundary && cut > ends[0] {
            let ok = ImportOptions {
                allow_missing_end: true,
                ..opts()
            };
            import(&t[..cut], ok).unwrap_or_else(|e| {
                panic!("cut at record boundary {cut} with --allow-missing-end: {e}")
            });
        }
    }
}

/// Byte offsets where each record ends.
fn record_ends(t: &[u8]) -> Vec<usize> {
    let (mut at, mut ends) = (0, Vec::new());
    while at < t.len() {
        let len = u32::from_le_bytes(t[at + 9..at + 13].try_into().expect("4 bytes")) as usize;
        at += 13 + len;
        ends.push(at);
    }
    ends
}

#[test]
fn damaged_traces_name_the_offset_and_what_was_expected() {
    let good = everything(false);
    let first = record_ends(&good)[0];
    let cases: Vec<(&str, Vec<u8>, u64, &str)> = vec![
        (
            "wrong magic",
            {
                let mut t = good.clone();
                t[13 + 15] = b'X';
                t
            },
            0,
            "not a RocksDB query trace",
        ),
        (
            "a ledgerbench trace",
            b"KVBTRACE\x01\x00and more bytes than a head".to_vec(),
            0,
            "not a RocksDB query trace",
        ),
        (
            "unknown version",
            {
                let mut t = enc::header("0.3", 0);
                enc::end(&mut t, 0);
                t
            },
            13,
            "version 0.3",
        ),
        (
            "unknown record type",
            {
                let mut t = enc::header("0.2", 0);
                enc::record(&mut t, 0, 7, b"");
                t
            },
            first as u64 + 8,
            "unknown record type 7",
        ),
        (
            "a 4 GiB payload length",
            {
                let mut t = enc::header("0.2", 0);
                t.extend_from_slice(&0u64.to_le_bytes());
                t.push(4);
                t.extend_from_slice(&u32::MAX.to_le_bytes());
                t
            },
            first as u64 + 9,
            "exceeds",
        ),
        (
            "a 10 GB key length",
            {
                let mut t = enc::header("0.2", 0);
                let mut p = ((1u64 << 2) | (1 << 3)).to_le_bytes().to_vec();
                p.extend_from_slice(&0u32.to_le_bytes());
                enc::varint(&mut p, 10_000_000_000);
                enc::record(&mut t, 0, 4, &p);
                t
            },
            first as u64 + 13 + 12,
            "does not fit 32 bits",
        ),
        (
            "a batch count that disagrees",
            {
                let mut t = enc::header("0.2", 0);
                let b = Batch::new().put(0, b"k", b"v").put(0, b"l", b"w");
                enc::write(&mut t, 0, &b.bytes(Some(3)));
                enc::end(&mut t, 0);
                t
            },
            0,
            "declares 3 entries but holds 2",
        ),
        (
            "an unknown batch tag",
            {
                let mut t = enc::header("0.2", 0);
                let mut b = Batch::new().put(0, b"k", b"v");
                b.rep.push(0x14);
                enc::write(&mut t, 0, &b.bytes(None));
                enc::end(&mut t, 0);
                t
            },
            0,
            "unknown WriteBatch entry tag 0x14",
        ),
        (
            "bytes after the end record",
            {
                let mut t = good.clone();
                t.push(0);
                t
            },
            good.len() as u64,
            "after the end record",
        ),
        (
            "a MultiGet in version 0.1",
            {
                let mut t = enc::header("0.1", 0);
                enc::multiget(&mut t, 0, &[(0, b"k")]);
                t
            },
            first as u64 + 8,
            "version 0.1",
        ),
    ];
    for (name, bytes, offset, want) in cases {
        let (at, what) = format_error(import(&bytes, opts()));
        assert!(what.contains(want), "{name}: {want:?} not in {what:?}");
        // Offset 0 in the table: anywhere; a batch error names its place inside the batch.
        if offset != 0 {
            assert_eq!(at, offset, "{name}: {what}");
        }
    }
}

#[test]
fn several_files_are_one_stream_timed_from_the_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut a = enc::header("0.2", 1_000);
    enc::write(&mut a, 1_000, &Batch::new().put(0, b"k", b"1").bytes(None));
    enc::end(&mut a, 1_100);
    let mut b = enc::header("0.1", 5_000);
    enc::v1_cf_key(&mut b, 6_000, 4, 7, b"k");
    enc::end(&mut b, 6_100);
    let paths = [dir.path().join("a.trace"), dir.path().join("b.trace")];
    std::fs::write(&paths[0], &a).expect("write");
    std::fs::write(&paths[1], &b).expect("write");
    let mut src = RocksImport::open(&paths, ImportOptions::default()).expect("import");
    let mut ops = Vec::new();
    while let Some(op) = src.next_op().expect("op") {
        ops.push(format!("{:?}", OwnedOp::from(&op)));
    }
    let want: Vec<String> = [
        OwnedOp::At(0),
        OwnedOp::Put(0, s(b"k"), s(b"1")),
        OwnedOp::Commit(false),
        OwnedOp::At(5_000),
        OwnedOp::Get(1, s(b"k"), Expect::Unchecked),
    ]
    .iter()
    .map(|o| format!("{o:?}"))
    .collect();
    assert_eq!(ops, want);
    assert_eq!(src.header().stores, ["default", "cf7"]);
    let sm = src.summary();
    assert_eq!(
        (sm.trace_version.as_str(), sm.files.len(), sm.micros),
        ("0.2,0.1", 2, 5_000)
    );
}

#[test]
fn a_hashed_key_keeps_equality_length_and_order_past_its_prefix() {
    use ledgerbench_trace::rocks::privacy::Privacy;
    let p = Privacy {
        hash_secret: Some("s".into()),
        hash_keys: true,
        hash_prefix: Some(4),
        drop_values: None,
    };
    let h = |k: &[u8]| {
        let mut out = Vec::new();
        p.key(k, &mut out);
        out
    };
    let (a, b, c) = (h(b"acct0001"), h(b"acct0002"), h(b"acct0001"));
    assert_eq!(a, c);
    assert_eq!(a.len(), 8);
    assert_ne!(&a[..4], b"acct");
    assert_eq!(&a[..4], &b[..4], "one prefix, one hash");
    assert!(a < b, "order within the prefix kept");
    let whole = Privacy {
        hash_prefix: None,
        ..p.clone()
    };
    let mut long = Vec::new();
    whole.key(&[7u8; 100], &mut long);
    assert_eq!(long.len(), 100);
    assert!(long.iter().any(|&x| x != 7));
}

//! The trace format: round trips, and damaged input giving errors with
//! offsets instead of panics.

use std::io::Cursor;

use ledgerbench_rng::Rng;
use ledgerbench_trace::{
    Expect, Header, Op, TraceError, TraceReader, TraceWriter, ValueRef, expand,
};

fn header() -> Header {
    Header {
        workload: "test".into(),
        seed: 7,
        stores: vec!["a".into(), "b".into()],
        source: serde_json::json!({"note": "unit test"}),
    }
}

fn ops() -> Vec<Op<'static>> {
    vec![
        Op::Put {
            store: 0,
            key: b"k1",
            value: ValueRef::Bytes(b"v1"),
        },
        Op::Put {
            store: 1,
            key: b"",
            value: ValueRef::Generated { len: 1000, seed: 9 },
        },
        Op::Delete {
            store: 0,
            key: b"k0",
        },
        Op::Commit { sync: true },
        Op::Get {
            store: 0,
            key: b"k1",
            expect: Expect::of(b"v1"),
        },
        Op::Get {
            store: 1,
            key: b"zz",
            expect: Expect::Absent,
        },
        Op::Get {
            store: 1,
            key: b"zz",
            expect: Expect::Unchecked,
        },
        Op::Get {
            store: 0,
            key: b"g",
            expect: Expect::Present,
        },
        Op::Get {
            store: 0,
            key: b"g",
            expect: Expect::Generated { len: 9, seed: 3 },
        },
        Op::Scan {
            store: 1,
            start: b"a",
            end: &[],
            limit: 10,
        },
        Op::Scan {
            store: 1,
            start: b"b",
            end: b"c",
            limit: 7,
        },
        Op::At { micros: 1_234_567 },
        Op::Flush { store: None },
        Op::Compact { store: Some(1) },
        Op::Mark { label: "batch 1" },
    ]
}

fn write(dir: &tempfile::TempDir) -> Vec<u8> {
    let p = dir.path().join("t.kvtrace");
    let mut w = TraceWriter::create(&p, &header()).expect("create");
    for op in ops() {
        w.write(&op).expect("write");
    }
    assert_eq!(w.finish().expect("finish"), 17, "header + 15 ops + end");
    let bytes = std::fs::read(&p).expect("read back");
    // The fuzz corpus's seed is this file: refresh it with the variable set.
    if std::env::var_os("LEDGERBENCH_WRITE_FUZZ_CORPUS").is_some() {
        let seed =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/read/seed.kvtrace");
        std::fs::write(seed, &bytes).expect("write corpus seed");
    }
    bytes
}

fn read_all(bytes: &[u8]) -> Result<usize, TraceError> {
    let mut r = TraceReader::new(Cursor::new(bytes.to_vec()), "mem".into())?;
    let mut n = 0;
    while r.next_op()?.is_some() {
        n += 1;
    }
    Ok(n)
}

#[test]
fn every_operation_round_trips() {
    let t = tempfile::tempdir().expect("tempdir");
    write(&t);
    let mut r = TraceReader::open(&t.path().join("t.kvtrace")).expect("open");
    assert_eq!(r.header(), &header());
    let want = ops();
    let mut i = 0;
    let mut scratch = Vec::new();
    while let Some(op) = r.next_op().expect("op") {
        assert_eq!(op, want[i], "op {i}");
        if let Op::Put { value, .. } = op {
            let v = expand(value, &mut scratch).to_vec();
            let n = if i == 0 { 2 } else { 1000 };
            assert_eq!(v.len(), n);
        }
        i += 1;
    }
    assert_eq!(i, want.len());
    assert!(r.next_op().expect("still done").is_none());
    // Generated values are the same bytes every time.
    let (mut a, mut b) = (Vec::new(), Vec::new());
    ledgerbench_trace::generate(64, 5, &mut a);
    ledgerbench_trace::generate(64, 5, &mut b);
    assert_eq!(a, b);
    let mut sc = Vec::new();
    assert!(Expect::of(&a).check(Some(&b), &mut sc));
    assert!(!Expect::of(&a).check(Some(b"x"), &mut sc));
    assert!(!Expect::of(&a).check(None, &mut sc));
    assert!(Expect::Absent.check(None, &mut sc));
    assert!(Expect::Present.check(Some(b""), &mut sc));
    assert!(!Expect::Present.check(None, &mut sc));
    let g = Expect::Generated { len: 64, seed: 5 };
    assert!(g.check(Some(&a), &mut sc));
    let mut flipped = a.clone();
    flipped[63] ^= 1;
    assert!(!g.check(Some(&flipped), &mut sc), "byte for byte");
}

#[test]
fn existing_files_are_never_overwritten() {
    let t = tempfile::tempdir().expect("tempdir");
    let p = t.path().join("x");
    std::fs::write(&p, b"keep").expect("write");
    assert!(TraceWriter::create(&p, &header()).is_err());
    assert_eq!(std::fs::read(&p).expect("read"), b"keep");
}

#[test]
fn an_unfinished_trace_leaves_nothing_and_a_finished_one_appears_whole() {
    let t = tempfile::tempdir().expect("tempdir");
    let p = t.path().join("x.kvtrace");
    let mut w = TraceWriter::create(&p, &header()).expect("create");
    w.write(&Op::Commit { sync: false }).expect("op");
    assert!(!p.exists(), "not under its name before it is finished");
    drop(w);
    let left: Vec<_> = std::fs::read_dir(t.path()).expect("ls").collect();
    assert!(left.is_empty(), "the partial file is removed: {left:?}");
    // The retry is not blocked, and ends with the trace in place.
    let w = TraceWriter::create(&p, &header()).expect("retry");
    w.finish().expect("finish");
    assert!(p.exists());
    assert_eq!(std::fs::read_dir(t.path()).expect("ls").count(), 1);
}

#[test]
fn every_truncation_is_an_error_with_an_offset() {
    let t = tempfile::tempdir().expect("tempdir");
    let full = write(&t);
    assert_eq!(read_all(&full).expect("full file"), 15);
    for cut in 0..full.len() {
        let e = read_all(&full[..cut]).expect_err("truncated file must fail");
        let msg = e.to_string();
        assert!(msg.contains("offset"), "cut at {cut}: {msg}");
    }
    let mut extra = full.clone();
    extra.push(0);
    assert!(
        read_all(&extra)
            .expect_err("trailing byte")
            .to_string()
            .contains("end of the file")
    );
}

#[test]
fn foreign_and_newer_files_are_refused_by_name() {
    let e = read_all(b"PK\x03\x04 a zip file").expect_err("foreign");
    assert!(e.to_string().contains("not a ledgerbench trace"), "{e}");
    let mut v = b"KVBTRACE".to_vec();
    v.extend_from_slice(&9u16.to_le_bytes());
    let e = read_all(&v).expect_err("newer");
    assert!(e.to_string().contains("version 9"), "{e}");
}

#[test]
fn random_damage_never_panics_and_flipped_bits_are_caught() {
    let t = tempfile::tempdir().expect("tempdir");
    let full = write(&t);
    let mut r = Rng::new(42);
    for _ in 0..3000 {
        let mut v = full.clone();
        let flips = 1 + r.below(4);
        for _ in 0..flips {
            let at = r.below(v.len() as u64) as usize;
            v[at] ^= 1 << r.below(8);
        }
        // Any single-bit damage past the 10-byte preamble breaks a checksum,
        // a length or a tag; the reader must say so, never panic.
        let _ = read_all(&v);
        if flips == 1 && v != full {
            assert!(read_all(&v).is_err(), "undetected damage");
        }
    }
    // Random garbage after a valid preamble.
    for len in [0usize, 1, 7, 8, 9, 100] {
        let mut v = full[..10].to_vec();
        let mut g = Vec::new();
        r.fill(&mut g, len);
        v.extend_from_slice(&g);
        assert!(read_all(&v).is_err());
    }
}

//! Trace files as `ledgerbench run replay` meets them: any mutation of a real
//! trace ends in operations or an error with an offset, never a panic.
//! (The `cargo fuzz` target in crates/trace/fuzz needs nightly; this one
//! runs in every `cargo test`.) Budget: `LEDGERBENCH_FUZZ_INPUTS` / `LEDGERBENCH_FUZZ_SECS`.

use std::io::Cursor;

use ledgerbench_fuzz::{Budget, fuzz};
use ledgerbench_trace::{Expect, Header, Op, TraceReader, TraceWriter, ValueRef};

fn trace(ops: &[Op<'_>]) -> Vec<u8> {
    let t = tempfile::tempdir().expect("tempdir");
    let p = t.path().join("seed.kvtrace");
    let header = Header {
        workload: "fuzz".into(),
        seed: 7,
        stores: vec!["a".into(), "b".into()],
        source: serde_json::json!({"note": "fuzz seed"}),
    };
    let mut w = TraceWriter::create(&p, &header).expect("create");
    for op in ops {
        w.write(op).expect("op");
    }
    w.finish().expect("finish");
    std::fs::read(&p).expect("read")
}

#[test]
fn trace_reader() {
    let seeds = vec![
        trace(&[]),
        trace(&[
            Op::Put {
                store: 0,
                key: b"k1",
                value: ValueRef::Bytes(b"v1"),
            },
            Op::Put {
                store: 1,
                key: b"k2",
                value: ValueRef::Generated { len: 100, seed: 9 },
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
        ]),
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fuzz/corpus/read/seed.kvtrace"
        ))
        .expect("corpus seed"),
    ];
    let r = fuzz("trace-reader", &seeds, Budget::from_env(), |bytes| {
        let Ok(mut reader) = TraceReader::new(Cursor::new(bytes), "fuzz".into()) else {
            return false;
        };
        loop {
            match reader.next_op() {
                Ok(Some(_)) => {}
                Ok(None) => return true,
                Err(e) => {
                    // Every error says where: a byte offset or the file.
                    assert!(!e.to_string().is_empty());
                    return false;
                }
            }
        }
    });
    eprintln!("{r}");
    assert!(
        r.accepted > 0,
        "no input was read whole: the seeds are broken"
    );
}

#[path = "rocks/enc.rs"]
#[allow(dead_code)]
mod enc;

/// A RocksDB trace of every record kind, in format 0.2 or 0.1.
fn rocks_seed(v1: bool) -> Vec<u8> {
    let mut t = enc::header(if v1 { "0.1" } else { "0.2" }, 5);
    let b = enc::Batch::new()
        .put(0, b"key", b"value")
        .put(3, b"other", b"v")
        .delete(0, b"gone")
        .single_delete(3, b"once")
        .delete_range(0, b"a", b"c")
        .merge(0, b"m", b"+1")
        .timed_put(0, b"t", b"tv", 7)
        .log_data(b"blob")
        .bytes(None);
    if v1 {
        enc::record(&mut t, 6, 3, &b);
        enc::v1_cf_key(&mut t, 7, 4, 0, b"key");
        enc::v1_cf_key(&mut t, 8, 5, 3, b"o");
    } else {
        enc::write(&mut t, 6, &b);
        enc::get(&mut t, 7, 0, b"key");
        enc::multiget(&mut t, 8, &[(0, b"key"), (3, b"other")]);
        enc::seek(&mut t, 9, false, 0, b"k", b"a", b"z");
        enc::seek(&mut t, 10, true, 3, b"p", b"", b"q");
    }
    enc::end(&mut t, 11);
    t
}

#[test]
fn rocksdb_trace_reader() {
    use ledgerbench_trace::rocks::batch::Entries;
    use ledgerbench_trace::rocks::{Record, RocksTraceReader};
    let seeds = vec![rocks_seed(false), rocks_seed(true)];
    let r = fuzz(
        "rocksdb-trace-reader",
        &seeds,
        Budget::from_env(),
        |bytes| {
            let Ok(mut reader) = RocksTraceReader::new(Cursor::new(bytes), "fuzz".into()) else {
                return false;
            };
            loop {
                match reader.next_record() {
                    Ok(Some(Record::Write { batch, .. })) => {
                        let Ok(mut e) = Entries::new(batch) else {
                            return false;
                        };
                        loop {
                            match e.next_entry() {
                                Ok(Some(_)) => {}
                                Ok(None) => break,
                                Err(b) => {
                                    assert!(b.at <= batch.len() && !b.what.is_empty());
                                    return false;
                                }
                            }
                        }
                    }
                    Ok(Some(Record::MultiGet { keys, .. })) => {
                        assert!(keys.iter().count() == keys.len() && !keys.is_empty());
                    }
                    Ok(Some(_)) => {}
                    Ok(None) => return true,
                    Err(e) => {
                        assert!(e.to_string().contains("byte offset"));
                        return false;
                    }
                }
            }
        },
    );
    eprintln!("{r}");
    assert!(
        r.accepted > 0,
        "no input was read whole: the seeds are broken"
    );
}

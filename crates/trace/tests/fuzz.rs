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
                limit: 10,
            },
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

//! Every results file committed to the repository still loads, typed: the
//! published results and the fixtures are what old files look like.

use std::path::{Path, PathBuf};

use ledgerbench_report::doc::{self, Doc};
use ledgerbench_results::workload::WorkloadConfig;

fn results_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("readable").flatten() {
        let p = e.path();
        if p.is_dir() {
            results_files(&p, out);
        } else if p.file_name().is_some_and(|n| n == "results.json") {
            out.push(p);
        }
    }
}

#[test]
fn every_committed_results_file_loads_with_its_workload_config_typed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    results_files(&root.join("results"), &mut files);
    results_files(&root.join("fixtures/results"), &mut files);
    assert!(files.len() >= 30, "found only {}", files.len());
    let (mut typed, mut kept, mut ops) = (0, 0, 0);
    for f in &files {
        let d = doc::load(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        if let Doc::Stellar(r) = &d.doc {
            match &r.config {
                WorkloadConfig::Stellar(c) => {
                    typed += 1;
                    assert!(c.batch_ledgers > 0, "{}", f.display());
                }
                // Written before a Stellar setting was removed: kept whole.
                WorkloadConfig::Other(v) => {
                    kept += 1;
                    assert!(v.get("durability").is_some(), "{}: {v}", f.display());
                }
                // An op-stream run (YCSB, a replay): typed as ops, never a
                // Stellar run mistaken for one.
                WorkloadConfig::Ops(o) => {
                    assert!(
                        !d.workload().starts_with("stellar"),
                        "{}: a Stellar run read as ops",
                        f.display()
                    );
                    assert!(!o.header.stores.is_empty(), "{}", f.display());
                    ops += 1;
                }
            }
        }
    }
    assert!(
        typed >= 10 && kept >= 1 && ops >= 2,
        "typed {typed}, kept {kept}, ops {ops}"
    );
}

#[test]
fn an_op_stream_config_is_typed_and_a_stellar_one_is_not_mistaken_for_it() {
    let ops: WorkloadConfig = serde_json::from_str(
        r#"{"workload":"ycsb","workers":2,"header":{"workload":"ycsb-a","seed":7,"stores":["kv"]}}"#,
    )
    .expect("parses");
    let WorkloadConfig::Ops(o) = &ops else {
        panic!("not ops: {ops:?}")
    };
    assert_eq!((o.workload.as_deref(), o.workers), (Some("ycsb"), Some(2)));
    assert_eq!(o.header.stores, ["kv"]);
    let st: WorkloadConfig =
        serde_json::from_str(r#"{"ledgers":40,"batch_ledgers":10}"#).expect("parses");
    assert_eq!(
        st.stellar().map(|c| (c.ledgers, c.batch_ledgers)),
        Some((40, 10))
    );
    // Written back, a typed config is the same JSON shape as before typing.
    let back = serde_json::to_value(&st).expect("json");
    assert_eq!(back["ledgers"], 40);
    assert!(back.get("streaming").is_some());
}

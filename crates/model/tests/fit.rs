//! `fit` on streams whose shape is known: what it states per store, and a
//! model that reads back as written.

use ledgerbench_model::{Options, finish, parse, survey, write};
use ledgerbench_rng::Rng;
use ledgerbench_trace::queue::{OwnedOp, Queued, Refill};
use ledgerbench_trace::{Expect, Header};

/// Operations handed over in one chunk.
struct Script {
    header: Header,
    ops: Option<Vec<OwnedOp>>,
}

impl Refill for Script {
    fn header(&self) -> &Header {
        &self.header
    }
    fn refill(&mut self, out: &mut Vec<OwnedOp>) -> Result<bool, ledgerbench_trace::SourceError> {
        match self.ops.take() {
            Some(ops) => {
                out.extend(ops);
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

/// Store 0: 2,000 ascending 8-byte keys of 100-byte values, each read back
/// 10 writes later with its answer recorded, commits of 10 writes every
/// 6 s. Store 1: 4,000 puts of random keys from 1,000 (overwrites),
/// values of 10 to 1,009 bytes, and 1,000 gets of keys never written
/// whose answer was not recorded.
fn stream() -> Vec<OwnedOp> {
    let mut rng = Rng::new(7);
    let mut ops = Vec::new();
    for i in 0u64..2000 {
        if i % 10 == 0 {
            ops.push(OwnedOp::At(i / 10 * 6_000_000));
        }
        ops.push(OwnedOp::Put(0, i.to_be_bytes().to_vec(), vec![0; 100]));
        let len = 10 + rng.below(1000) as usize;
        ops.push(OwnedOp::Put(
            1,
            rng.below(1000).to_be_bytes().to_vec(),
            vec![1; len],
        ));
        ops.push(OwnedOp::Put(
            1,
            rng.below(1000).to_be_bytes().to_vec(),
            vec![1; len],
        ));
        if i >= 10 {
            ops.push(OwnedOp::Get(
                0,
                (i - 10).to_be_bytes().to_vec(),
                Expect::Present,
            ));
        }
        ops.push(OwnedOp::Get(
            1,
            (5000 + i).to_be_bytes().to_vec(),
            Expect::Unchecked,
        ));
        if i % 10 == 9 {
            ops.push(OwnedOp::Commit(false));
        }
    }
    ops
}

fn fitted() -> ledgerbench_model::Workload {
    fit(vec!["ledger".into(), "state".into()], stream())
}

fn fit(stores: Vec<String>, ops: Vec<OwnedOp>) -> ledgerbench_model::Workload {
    let header = Header {
        workload: "script".into(),
        seed: 0,
        stores,
        source: serde_json::Value::Null,
    };
    let mut src = Queued::new(Script {
        header,
        ops: Some(ops),
    });
    let s = survey(&mut src, &Options::default(), &mut |_| {}).expect("survey");
    finish(&s, "script")
}

#[test]
fn each_store_s_shape_is_found() {
    let w = fitted();
    let [ledger, state] = &w.stores[..] else {
        panic!("two stores: {w:?}")
    };
    assert_eq!((ledger.operations, ledger.keys), (3990, 2000));
    assert!(
        (ledger.mix.insert - 2000.0 / 3990.0).abs() < 1e-9,
        "{:?}",
        ledger.mix
    );
    assert!(
        (ledger.mix.get_found - 1990.0 / 3990.0).abs() < 1e-9,
        "{:?}",
        ledger.mix
    );
    assert_eq!(ledger.inserts.ascending, 1.0);
    assert_eq!(ledger.key_size.fixed, Some(8));
    assert_eq!(ledger.value_size.fixed, Some(100));
    let age = ledger.read_age.as_ref().expect("read ages");
    // Read 10 puts later: 21 operations on the store (puts and gets) once
    // the reads began.
    assert_eq!(age.p50, 21.0, "{age:?}");

    assert_eq!(state.initial_keys, 2000);
    assert!(
        (state.mix.get_unwritten - 2000.0 / 6000.0).abs() < 1e-9,
        "{:?}",
        state.mix
    );
    // 4,000 puts over 1,000 keys: about 1,000 inserts (a few keys never drawn).
    assert!(
        (state.mix.insert * 6000.0 - 982.0).abs() < 40.0,
        "{:?}",
        state.mix
    );
    assert!(state.inserts.ascending < 0.05, "{:?}", state.inserts);
    let v = state.value_size.quantiles.as_ref().expect("quantiles");
    assert!(v.min >= 10.0 && v.max <= 1009.0 && v.p50 > 300.0, "{v:?}");
    assert!(state.value_size.pareto.is_some());

    let writes = w.commits.writes.as_ref().expect("commit sizes");
    assert_eq!((writes.p50, writes.count), (30.0, 200));
    assert_eq!(w.commits.period_micros, Some(6_000_000));
}

#[test]
fn the_model_reads_back_as_written() {
    let w = fitted();
    let text = write(&w);
    assert!(
        text.contains("# Gets that find their key.\nget_found = "),
        "{text}"
    );
    let back = parse("w.toml", &text).expect("parse");
    assert_eq!(back.stores.len(), 2);
    assert_eq!(write(&back), text);
}

#[test]
fn a_hand_written_model_with_bad_shares_is_refused_saying_why() {
    let text = "version = 1\n[[store]]\nname = \"s\"\n[store.mix]\ninsert = 0.5\nget_found = 0.2\n";
    let e = parse("w.toml", text).expect_err("shares sum to 0.7");
    assert!(e.to_string().contains("sum to 0.7"), "{e}");
    let e = parse("w.toml", "version = 2\n").expect_err("version");
    assert!(
        e.to_string().contains("missing field") || e.to_string().contains("version"),
        "{e}"
    );
    let e = parse(
        "w.toml",
        "version = 1\n[[store]]\nname = \"s\"\nmix = { insert = 1.0, fast = 1.0 }\n",
    )
    .expect_err("unknown field");
    assert!(e.to_string().contains("fast"), "{e}");
}

/// db_bench's mixgraph draws value sizes from a Generalized Pareto (theta
/// 0, k 0.2615, sigma 25.45) and raises those under 10 bytes to 10: a
/// third of the sizes sit at 10. The fit keeps them as a floor and finds
/// the published tail in the sizes above.
#[test]
fn sizes_raised_to_a_floor_are_kept_as_one_and_the_tail_fitted_above() {
    let (k, sigma) = (0.2615, 25.45);
    let mut rng = Rng::new(11);
    let ops = (0u64..20_000)
        .map(|i| {
            let u = rng.f64();
            let x = sigma / k * ((1.0 - u).powf(-k) - 1.0);
            let len = (x as usize).clamp(10, 1 << 20);
            OwnedOp::Put(0, i.to_be_bytes().to_vec(), vec![0; len])
        })
        .collect();
    let w = fit(vec!["values".into()], ops);
    let p = w.stores[0].value_size.pareto.as_ref().expect("a Pareto");
    // P(X < 11) = 1 - (1 + k 11 / sigma)^(-1/k) = 0.336.
    assert!((p.floor - 0.336).abs() < 0.015, "{p:?}");
    assert!((p.shape - k).abs() < 0.06, "{p:?}");
    assert_eq!(p.loc, 11.0, "{p:?}");
    assert!(p.ks < 0.03, "{p:?}");
    let text = write(&w);
    assert!(text.contains(", floor = 0.3"), "{text}");
    let back = parse("w.toml", &text).expect("parse");
    assert_eq!(write(&back), text);
}

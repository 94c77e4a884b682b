//! Real pubnet ledgers from `fixtures/stellar-pubnet/` (see its README for
//! provenance): decoding, hash checks, errors.

use std::path::PathBuf;

use ledgerbench_galexie::{
    ImportConfig, LedgerOps, PUBNET, collect, decode, network_id, read_file, start_seq,
};
use ledgerbench_trace::OpSource;
use ledgerbench_trace::queue::Queued;

fn data() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/stellar-pubnet");
    assert!(p.is_dir(), "{} is missing from the clone", p.display());
    p
}

#[test]
fn every_real_ledger_decodes_with_matching_hashes() {
    let (files, passphrase) = collect(&[data()]).expect("collect");
    assert_eq!(passphrase, None, "no .config.json there");
    assert_eq!(files.len(), 2, "{files:?}");
    let net = network_id(PUBNET);
    let mut seen = Vec::new();
    for f in &files {
        for lcm in read_file(f).expect("read") {
            let l = decode(&lcm, net).expect("hashes match");
            // Every transaction keeps its meta, and records are self-describing.
            let mut rec = Vec::new();
            for i in 0..l.txs.len() {
                l.tx_record(i, &mut rec);
                assert_eq!(&rec[..4], &l.seq.to_be_bytes());
                assert!(!l.txs[i].envelope.is_empty() && !l.txs[i].result_meta.is_empty());
            }
            seen.push((l.seq, l.txs.len(), l.meta_version));
        }
    }
    seen.sort_unstable();
    assert_eq!(
        seen,
        vec![
            (6_154_623, 0, 0),
            (16_154_623, 2, 0),
            (26_154_623, 19, 0),
            (36_154_623, 190, 0),
            (46_154_623, 212, 0),
            (53_312_000, 163, 1),
        ]
    );
}

#[test]
fn a_wrong_passphrase_fails_the_hash_check() {
    let lake = data().join("FCD285FF--53312000.xdr.zstd");
    assert_eq!(start_seq(&lake), Some(53_312_000));
    let lcm = read_file(&lake).expect("read").remove(0);
    let e =
        decode(&lcm, network_id("Test SDF Network ; September 2015")).expect_err("wrong network");
    assert!(
        e.to_string().contains("53312000") && e.to_string().contains("passphrase"),
        "{e}"
    );
}

#[test]
fn damaged_files_name_themselves_and_the_problem() {
    let t = tempfile::tempdir().expect("tempdir");
    let bad = t.path().join("FFFFFFFE--1.xdr.zst");
    std::fs::write(&bad, b"not zstd").expect("write");
    let e = read_file(&bad).expect_err("bad zstd").to_string();
    assert!(
        e.contains("FFFFFFFE--1.xdr.zst") && e.contains("zstd"),
        "{e}"
    );
    let lines = t.path().join("l.txt");
    std::fs::write(&lines, "AAAA\n!!!\n").expect("write");
    let e = read_file(&lines).expect_err("bad base64").to_string();
    assert!(e.contains("line 1"), "{e}");
    assert!(collect(&[t.path().join("missing")]).is_err());
}

#[test]
fn ledgers_become_the_three_stores_operations() {
    let (files, _) = collect(&[data()]).expect("collect");
    let mut ops = Queued::new(LedgerOps::new(files, ImportConfig::default()).expect("ops"));
    let (mut puts, mut marks) = ([0u64; 3], 0);
    while let Some(op) = ops.next_op().expect("op") {
        match op {
            ledgerbench_trace::Op::Put { store, .. } => puts[store as usize] += 1,
            ledgerbench_trace::Op::Mark { .. } => marks += 1,
            _ => {}
        }
    }
    let txs = 2 + 19 + 190 + 212 + 163;
    assert_eq!(puts, [6, txs, txs]);
    assert_eq!(marks, 6, "one batch per ledger by default");
    assert_eq!(ops.inner().stats().txs, txs);
}

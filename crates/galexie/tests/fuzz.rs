//! Ledger files as a user may hand them to `ledgerbench import galexie`:
//! mutated data-lake batches and base64 line files end in ledgers or an
//! error, never a panic. Budget: `LEDGERBENCH_FUZZ_INPUTS` / `LEDGERBENCH_FUZZ_SECS`.

use std::path::PathBuf;

use ledgerbench_fuzz::{Budget, fuzz};
use ledgerbench_galexie::{PUBNET, decode, network_id, read_file};
use stellar_xdr::{LedgerCloseMeta, LedgerCloseMetaBatch, Limits, WriteXdr};

fn small_ledgers() -> Vec<LedgerCloseMeta> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/stellar-pubnet/ledgers-base64.txt.zst");
    // The ledgers of 0, 2 and 19 transactions: small seeds mutate fast.
    read_file(&p)
        .expect("fixture")
        .into_iter()
        .take(3)
        .collect()
}

/// Reads `bytes` through the importer's own file path, as a file named
/// `name`, and decodes every ledger; true when all of it was accepted.
fn import(dir: &std::path::Path, name: &str, bytes: &[u8]) -> bool {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write input");
    let Ok(ledgers) = read_file(&path) else {
        return false;
    };
    let net = network_id(PUBNET);
    ledgers.iter().all(|l| decode(l, net).is_ok())
}

#[test]
fn data_lake_batches() {
    let seeds: Vec<Vec<u8>> = small_ledgers()
        .into_iter()
        .map(|l| {
            let seq = match &l {
                LedgerCloseMeta::V0(v) => v.ledger_header.header.ledger_seq,
                LedgerCloseMeta::V1(v) => v.ledger_header.header.ledger_seq,
                LedgerCloseMeta::V2(v) => v.ledger_header.header.ledger_seq,
            };
            LedgerCloseMetaBatch {
                start_sequence: seq,
                end_sequence: seq,
                ledger_close_metas: vec![l].try_into().expect("one ledger"),
            }
            .to_xdr(Limits::none())
            .expect("xdr")
        })
        .collect();
    let dir = tempfile::tempdir().expect("tempdir");
    // The raw XDR is mutated, then compressed as a lake file is, so the
    // mutations reach the XDR decoder rather than stop at zstd's checksum.
    let r = fuzz("galexie-lake", &seeds, Budget::from_env(), |raw| {
        let packed = zstd::bulk::compress(raw, 1).expect("compress");
        import(dir.path(), "FUZZ--1.xdr.zst", &packed)
    });
    eprintln!("{r}");
    assert!(
        r.accepted > 0,
        "no mutated batch was accepted: the seeds are broken"
    );
}

#[test]
fn base64_line_files() {
    let seeds: Vec<Vec<u8>> = small_ledgers()
        .into_iter()
        .map(|l| {
            let mut line = l
                .to_xdr_base64(Limits::none())
                .expect("base64")
                .into_bytes();
            line.push(b'\n');
            line
        })
        .collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let r = fuzz("galexie-lines", &seeds, Budget::from_env(), |text| {
        import(dir.path(), "ledgers.txt", text)
    });
    eprintln!("{r}");
    assert!(r.accepted > 0, "no mutated line file was accepted");
}

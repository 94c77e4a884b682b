//! The synthetic generator must compress like real pubnet data.
//!
//! References (see `fixtures/stellar-pubnet/README.md`): the ingestion
//! report's month of pubnet, a ledger 89.5 % smaller and a transaction record
//! 77.5 % smaller with zstd level 3, record mean about 5.1 KB raw and a
//! ledger about 1.4 MB raw. The band is 4 percentage points on the ratios
//! and 15 % on the sizes.

use ledgerbench_workloads::stellar::{StellarGen, StellarProfile};

struct Shape {
    ledger_raw_mean: f64,
    ledger_reduction: f64,
    tx_raw_mean: f64,
    tx_reduction: f64,
    tx_p50: f64,
    tx_p99: f64,
}

fn measure(ledgers: u32) -> Shape {
    let g = StellarGen::new(7, StellarProfile::default()).expect("valid profile");
    let level = g.profile().zstd_level;
    let (mut lr, mut lc, mut tr, mut tc) = (0usize, 0usize, 0usize, 0usize);
    let mut sizes = Vec::new();
    for s in 0..ledgers {
        let l = g.ledger(59_000_000 + s * 97);
        lr += l.raw.len();
        lc += zstd::bulk::compress(&l.raw, level).expect("zstd").len();
        for rec in &l.tx_records {
            tr += rec.len();
            tc += zstd::bulk::compress(rec, level).expect("zstd").len();
            sizes.push(rec.len());
        }
    }
    sizes.sort_unstable();
    let n = sizes.len();
    Shape {
        ledger_raw_mean: lr as f64 / f64::from(ledgers),
        ledger_reduction: 100.0 * (1.0 - lc as f64 / lr as f64),
        tx_raw_mean: tr as f64 / n as f64,
        tx_reduction: 100.0 * (1.0 - tc as f64 / tr as f64),
        tx_p50: sizes[n / 2] as f64,
        tx_p99: sizes[n * 99 / 100] as f64,
    }
}

#[test]
fn generator_compresses_like_pubnet() {
    let s = measure(100);
    eprintln!(
        "ledger raw {:.0} B, {:.1}% smaller; tx raw mean {:.0} B, {:.1}% smaller; tx p50 {:.0} p99 {:.0}",
        s.ledger_raw_mean, s.ledger_reduction, s.tx_raw_mean, s.tx_reduction, s.tx_p50, s.tx_p99
    );
    assert!(
        (s.ledger_reduction - 89.5).abs() <= 4.0,
        "ledger reduction {:.1}%",
        s.ledger_reduction
    );
    assert!(
        (s.tx_reduction - 77.5).abs() <= 4.0,
        "tx reduction {:.1}%",
        s.tx_reduction
    );
    assert!(
        (s.tx_raw_mean / 5100.0 - 1.0).abs() <= 0.15,
        "tx mean {:.0}",
        s.tx_raw_mean
    );
    assert!(
        (s.ledger_raw_mean / 1.4e6 - 1.0).abs() <= 0.15,
        "ledger mean {:.0}",
        s.ledger_raw_mean
    );
    assert!(
        s.tx_p99 >= 3.0 * s.tx_p50,
        "heavy tail: p99 {} vs p50 {}",
        s.tx_p99,
        s.tx_p50
    );
}

/// The real data-lake ledger, recompressed the way the generator's output is,
/// must give the README's figure: this pins the measuring method itself.
#[test]
fn real_ledger_reduction_is_measured_the_same_way() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/stellar-pubnet/FCD285FF--53312000.xdr.zstd"
    );
    let compressed = std::fs::read(path).expect("the real ledger fixture is in the clone");
    let raw = zstd::stream::decode_all(&compressed[..]).expect("real file decodes");
    assert_eq!(raw.len(), 372_492, "the README's raw size");
    let recompressed = zstd::bulk::compress(&raw, 3).expect("zstd").len();
    let reduction = 100.0 * (1.0 - recompressed as f64 / raw.len() as f64);
    eprintln!(
        "real ledger 53312000: {} -> {} bytes, {:.1}% smaller",
        raw.len(),
        recompressed,
        reduction
    );
    assert!((reduction - 80.9).abs() < 1.0, "{reduction}");
}

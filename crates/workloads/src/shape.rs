//! The measurable shape of Stellar ledger data: transactions per ledger,
//! record sizes and compression ratios. Computed the same way for real
//! ledgers (`ledgerbench calibrate stellar`) and for the synthetic generator, so
//! the two can be set side by side.

use serde::Serialize;

/// Percentiles of a sample.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Spread {
    /// Values measured.
    pub n: usize,
    /// Mean.
    pub mean: f64,
    /// 10th percentile.
    pub p10: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

impl Spread {
    /// Percentiles of `v` (see `ledgerbench_core::quantile`); `None` when empty.
    pub fn of(mut v: Vec<f64>) -> Option<Self> {
        use ledgerbench_core::quantile::{quantile_sorted, sort};
        sort(&mut v);
        let n = v.len();
        let at = |q: f64| quantile_sorted(&v, q);
        Some(Self {
            n,
            mean: v.iter().sum::<f64>() / n as f64,
            p10: at(0.10)?,
            p50: at(0.50)?,
            p90: at(0.90)?,
            p99: at(0.99)?,
            min: v[0],
            max: v[n - 1],
        })
    }
}

/// The shape of a set of ledgers.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Shape {
    /// Ledgers measured.
    pub ledgers: usize,
    /// Transactions per ledger.
    pub txs_per_ledger: Option<Spread>,
    /// Raw ledger bytes.
    pub ledger_raw_bytes: Option<Spread>,
    /// Percent smaller after zstd, over all ledger bytes.
    pub ledger_reduction_pct: Option<f64>,
    /// Raw transaction record bytes.
    pub tx_raw_bytes: Option<Spread>,
    /// Compressed transaction record bytes.
    pub tx_stored_bytes: Option<Spread>,
    /// Percent smaller after zstd, over all record bytes.
    pub tx_reduction_pct: Option<f64>,
}

/// Accumulates ledgers into a [`Shape`].
pub struct ShapeBuilder {
    level: i32,
    txs: Vec<f64>,
    lraw: Vec<f64>,
    lbytes: (u64, u64),
    traw: Vec<f64>,
    tstored: Vec<f64>,
    tbytes: (u64, u64),
}

impl ShapeBuilder {
    /// A builder compressing with zstd at `level`.
    pub fn new(level: i32) -> Self {
        Self {
            level,
            txs: Vec::new(),
            lraw: Vec::new(),
            lbytes: (0, 0),
            traw: Vec::new(),
            tstored: Vec::new(),
            tbytes: (0, 0),
        }
    }

    /// Adds one ledger: its raw bytes and its transaction records.
    pub fn add<'a>(
        &mut self,
        raw_ledger: &[u8],
        records: impl IntoIterator<Item = &'a [u8]>,
    ) -> std::io::Result<()> {
        let c = zstd::bulk::compress(raw_ledger, self.level)?;
        self.lraw.push(raw_ledger.len() as f64);
        self.lbytes.0 += raw_ledger.len() as u64;
        self.lbytes.1 += c.len() as u64;
        let mut n = 0;
        for r in records {
            let c = zstd::bulk::compress(r, self.level)?;
            self.traw.push(r.len() as f64);
            self.tstored.push(c.len() as f64);
            self.tbytes.0 += r.len() as u64;
            self.tbytes.1 += c.len() as u64;
            n += 1;
        }
        self.txs.push(f64::from(n));
        Ok(())
    }

    /// The shape so far.
    pub fn finish(self) -> Shape {
        let pct = |(raw, stored): (u64, u64)| {
            (raw > 0).then(|| 100.0 * (1.0 - stored as f64 / raw as f64))
        };
        Shape {
            ledgers: self.txs.len(),
            txs_per_ledger: Spread::of(self.txs),
            ledger_raw_bytes: Spread::of(self.lraw),
            ledger_reduction_pct: pct(self.lbytes),
            tx_raw_bytes: Spread::of(self.traw),
            tx_stored_bytes: Spread::of(self.tstored),
            tx_reduction_pct: pct(self.tbytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_interpolates_between_ranks_and_is_absent_when_empty() {
        let s = Spread::of((1..=100).map(f64::from).collect()).expect("values");
        assert_eq!((s.min, s.max, s.n), (1.0, 100.0, 100));
        assert_eq!(s.p50, 50.5);
        assert!((s.mean - 50.5).abs() < 1e-9);
        assert!(Spread::of(Vec::new()).is_none());
        let mut b = ShapeBuilder::new(3);
        b.add(&[0u8; 4096], [&[1u8; 100][..], &[2u8; 300][..]])
            .expect("zstd");
        let sh = b.finish();
        assert_eq!(sh.ledgers, 1);
        assert_eq!(sh.txs_per_ledger.expect("txs").max, 2.0);
        assert!(
            sh.ledger_reduction_pct.expect("ratio") > 90.0,
            "zeros compress"
        );
    }
}

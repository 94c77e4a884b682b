//! A stated model of a store's per-batch ingestion cost once its data
//! outgrows memory, fitted to measured batches and used to predict a run
//! nobody can afford to make on a small machine (the report's full month).
//!
//! The model: `secs = a * txs + b * txs * miss(t / m) + c * d`, where `txs`
//! are the batch's transactions, `d` the store's data after the batch, `t`
//! the data of every store of the run (they share the page cache), `m` the
//! memory limit and `miss(r) = max(0, 1 - 1/r)` the share of random keys
//! whose page or block is not in memory when the data is `r` times memory
//! (uniform random keys, an LRU-ish cache).
//! - `a`: the cost of an insert that finds its page in memory;
//! - `b`: the extra cost of one that must read it (a B-tree's leaf read;
//!   an LSM's index or filter block read);
//! - `c`: the cost per stored byte per batch: compaction rewriting what is
//!   stored (a full compaction per batch rewrites all of `d`).
//!
//! Coefficients are fitted by least squares and kept non-negative (the
//! best fit among the subsets of terms whose coefficients are all >= 0),
//! so a term the data does not support is 0, not a negative cost.

/// One measured batch of one store.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Transactions in the batch.
    pub txs: f64,
    /// The store's data after the batch, bytes.
    pub data: f64,
    /// Every store's data after the batch, bytes: what competes for memory.
    pub total: f64,
    /// The memory limit of the run, bytes.
    pub memory: f64,
    /// Seconds the store spent on the batch (writes, flush, compaction).
    pub secs: f64,
}

/// The share of random keys that miss memory when data is `data` bytes and
/// memory `memory` bytes.
pub fn miss(data: f64, memory: f64) -> f64 {
    if memory <= 0.0 || data <= memory {
        0.0
    } else {
        1.0 - memory / data
    }
}

fn features(p: &Point) -> [f64; 3] {
    [p.txs, p.txs * miss(p.total, p.memory), p.data]
}

/// A fitted model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// Seconds per transaction that hits memory.
    pub per_tx: f64,
    /// Extra seconds per transaction that misses.
    pub per_miss: f64,
    /// Seconds per stored byte per batch.
    pub per_byte: f64,
    /// Share of the variance of the fitted batches the model explains.
    pub r2: f64,
    /// Batches fitted.
    pub points: usize,
}

impl Fit {
    /// Predicted seconds of a batch.
    pub fn predict(&self, p: &Point) -> f64 {
        let f = features(p);
        self.per_tx * f[0] + self.per_miss * f[1] + self.per_byte * f[2]
    }
}

/// Solves the least-squares problem on the columns in `cols`; `None` when
/// singular.
fn solve(points: &[Point], cols: &[usize]) -> Option<Vec<f64>> {
    let n = cols.len();
    let mut a = vec![vec![0.0; n + 1]; n];
    for p in points {
        let f = features(p);
        for (i, &ci) in cols.iter().enumerate() {
            for (j, &cj) in cols.iter().enumerate() {
                a[i][j] += f[ci] * f[cj];
            }
            a[i][n] += f[ci] * p.secs;
        }
    }
    // Gaussian elimination with partial pivoting.
    for c in 0..n {
        let pivot = (c..n).max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs()))?;
        if a[pivot][c].abs() < 1e-300 {
            return None;
        }
        a.swap(c, pivot);
        let pivot_row = a[c].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != c {
                let k = row[c] / pivot_row[c];
                for (x, p) in row.iter_mut().zip(&pivot_row).skip(c) {
                    *x -= k * p;
                }
            }
        }
    }
    Some((0..n).map(|i| a[i][n] / a[i][i]).collect())
}

/// Fits the model to `points`; `None` with fewer than 3 batches or when no
/// subset of terms fits with non-negative coefficients.
pub fn fit(points: &[Point]) -> Option<Fit> {
    if points.len() < 3 {
        return None;
    }
    let mut best: Option<(f64, [f64; 3])> = None;
    for mask in 1u8..8 {
        let cols: Vec<usize> = (0..3).filter(|i| mask & (1 << i) != 0).collect();
        let Some(coef) = solve(points, &cols) else {
            continue;
        };
        if coef.iter().any(|c| *c < 0.0 || !c.is_finite()) {
            continue;
        }
        let mut full = [0.0; 3];
        for (c, &i) in coef.iter().zip(&cols) {
            full[i] = *c;
        }
        let sse: f64 = points
            .iter()
            .map(|p| {
                let f = features(p);
                let e = p.secs - (full[0] * f[0] + full[1] * f[1] + full[2] * f[2]);
                e * e
            })
            .sum();
        if best.is_none_or(|(b, _)| sse < b) {
            best = Some((sse, full));
        }
    }
    let (sse, c) = best?;
    let mean = points.iter().map(|p| p.secs).sum::<f64>() / points.len() as f64;
    let sst: f64 = points.iter().map(|p| (p.secs - mean).powi(2)).sum();
    Some(Fit {
        per_tx: c[0],
        per_miss: c[1],
        per_byte: c[2],
        r2: if sst > 0.0 { 1.0 - sse / sst } else { 1.0 },
        points: points.len(),
    })
}

/// A run to predict: `batches` batches of `txs` transactions, each adding
/// `bytes` to the store and `total` to all stores, under `memory` bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scenario {
    /// Batches.
    pub batches: u32,
    /// Transactions per batch.
    pub txs: f64,
    /// Bytes each batch adds to the store.
    pub bytes: f64,
    /// Bytes each batch adds to all stores.
    pub total: f64,
    /// Memory, bytes.
    pub memory: f64,
}

/// Predicted seconds of the first batch, the last batch and all of them.
pub fn predict_run(fit: &Fit, s: &Scenario) -> (f64, f64, f64) {
    let at = |i: u32| {
        fit.predict(&Point {
            txs: s.txs,
            data: s.bytes * f64::from(i + 1),
            total: s.total * f64::from(i + 1),
            memory: s.memory,
            secs: 0.0,
        })
    };
    let total = (0..s.batches).map(at).sum();
    (at(0), at(s.batches.saturating_sub(1)), total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synth(a: f64, b: f64, c: f64, memory: f64) -> Vec<Point> {
        (1..=20)
            .map(|i| {
                let mut p = Point {
                    txs: 100_000.0,
                    data: f64::from(i) * 1e8,
                    total: f64::from(i) * 1e8,
                    memory,
                    secs: 0.0,
                };
                let f = features(&p);
                p.secs = a * f[0] + b * f[1] + c * f[2];
                p
            })
            .collect()
    }

    #[test]
    fn recovers_the_coefficients_it_was_made_from() {
        let pts = synth(2e-6, 5e-5, 3e-9, 5e8);
        let f = fit(&pts).expect("fit");
        assert!((f.per_tx - 2e-6).abs() < 1e-9, "{f:?}");
        assert!((f.per_miss - 5e-5).abs() < 1e-8, "{f:?}");
        assert!((f.per_byte - 3e-9).abs() < 1e-12, "{f:?}");
        assert!(f.r2 > 0.999_999);
    }

    #[test]
    fn coefficients_stay_non_negative() {
        // Cost falling with data cannot be fitted by a negative per-byte term.
        let mut pts = synth(1e-5, 0.0, 0.0, 1e12);
        for (i, p) in pts.iter_mut().enumerate() {
            p.secs -= i as f64 * 0.01;
        }
        let f = fit(&pts).expect("fit");
        assert!(
            f.per_tx >= 0.0 && f.per_miss >= 0.0 && f.per_byte >= 0.0,
            "{f:?}"
        );
    }

    #[test]
    fn a_run_is_the_sum_of_its_batches() {
        let f = Fit {
            per_tx: 1e-6,
            per_miss: 0.0,
            per_byte: 1e-9,
            r2: 1.0,
            points: 3,
        };
        let s = Scenario {
            batches: 4,
            txs: 1e6,
            bytes: 1e9,
            total: 1e9,
            memory: 1e12,
        };
        let (first, last, total) = predict_run(&f, &s);
        assert!((first - 2.0).abs() < 1e-9 && (last - 5.0).abs() < 1e-9);
        assert!((total - (2.0 + 3.0 + 4.0 + 5.0)).abs() < 1e-9);
        assert_eq!(miss(1.0, 2.0), 0.0);
        assert!((miss(4.0, 1.0) - 0.75).abs() < 1e-12);
        assert!(fit(&[]).is_none());
    }
}

//! Known-answer trials of the drift verdict, as `ledgerbench ab` has its
//! own: synthetic series of a soak's length with AR(1) noise at several
//! strengths, flat or with a planted drift or step, each judged at the
//! default settings chosen before the trials ran. A planted drift or step
//! must be called in at least 19 of 20 series, a flat series called
//! drifting or stepped in at most 1 of 20.

use crate::drift::{DriftOptions, Verdict, judge};
use crate::normal;

/// What a trial's series carries besides its noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Planted {
    /// Nothing: the level throughout.
    Flat,
    /// A linear change of this share of the level over the series.
    Drift(f64),
    /// A change of this share of the level at this share of the series.
    Step {
        /// Where, as a share of the series.
        at: f64,
        /// By how much, as a share of the level.
        by: f64,
    },
}

/// One cell of the trials: a planted shape under one noise.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// What was planted.
    pub planted: Planted,
    /// The noise's AR(1) coefficient.
    pub phi: f64,
    /// The noise's marginal standard deviation, as a share of the level.
    pub noise: f64,
    /// Series judged.
    pub series: usize,
    /// Called as planted: flat as flat, a drift as drifting, a step as
    /// stepped within a tenth of the series of where it was planted.
    pub right: usize,
    /// Flat series called drifting or stepped (false alarms); 0 for the
    /// planted cells.
    pub false_alarms: usize,
    /// The median over the cell's series of the smallest drift over the
    /// run the test finds 19 times in 20 ([`crate::drift::Drift::detectable`]).
    pub detectable: Option<f64>,
}

impl Cell {
    /// Whether the cell meets the bar: 19 of 20 planted changes found, at
    /// most 1 of 20 flat series called changed.
    pub fn passes(&self) -> bool {
        match self.planted {
            Planted::Flat => self.false_alarms * 20 <= self.series,
            _ => self.right * 20 >= self.series * 19,
        }
    }
}

/// SplitMix64: the trials' own seeded source, so the trials do not move
/// when another generator in the project changes.
struct Source(u64);

impl Source {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn normal(&mut self) -> f64 {
        // The top 53 bits, centred in their cell: never 0 or 1.
        let u = ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        normal::ppf(u)
    }
}

/// A series of `n` samples at level 100: `planted` plus AR(1) noise of
/// coefficient `phi` and marginal deviation `noise` of the level, started
/// in its stationary distribution.
pub fn series(n: usize, planted: Planted, phi: f64, noise: f64, seed: u64) -> Vec<f64> {
    let mut src = Source(seed);
    let level = 100.0;
    let sd = noise * level;
    let innovation = sd * (1.0 - phi * phi).sqrt();
    let mut e = sd * src.normal();
    (0..n)
        .map(|i| {
            if i > 0 {
                e = phi * e + innovation * src.normal();
            }
            let t = i as f64 / n as f64;
            let shape = match planted {
                Planted::Flat => 0.0,
                Planted::Drift(share) => share * t,
                Planted::Step { at, by } => {
                    if t >= at {
                        by
                    } else {
                        0.0
                    }
                }
            };
            level * (1.0 + shape) + e
        })
        .collect()
}

/// Judges `count` series of `n` samples per planted shape and noise, the
/// `k`th of a cell seeded `seed + k` (the cell's place mixed in), at `o`.
pub fn run(
    n: usize,
    count: usize,
    shapes: &[Planted],
    noises: &[(f64, f64)],
    o: &DriftOptions,
    seed: u64,
) -> Vec<Cell> {
    let mut cells = Vec::new();
    for (si, &planted) in shapes.iter().enumerate() {
        for (ni, &(phi, noise)) in noises.iter().enumerate() {
            let mut right = 0;
            let mut false_alarms = 0;
            let mut detectable = Vec::with_capacity(count);
            for k in 0..count {
                let s = seed
                    .wrapping_add((si as u64) << 40)
                    .wrapping_add((ni as u64) << 32)
                    .wrapping_add(k as u64);
                let x = series(n, planted, phi, noise, s);
                let d = judge(&x, o);
                detectable.extend(d.detectable);
                let v = d.verdict;
                let ok = match (planted, &v) {
                    (Planted::Flat, Verdict::Flat) => true,
                    (Planted::Drift(_), Verdict::Drifting) => true,
                    (Planted::Step { at, .. }, Verdict::Stepped(steps)) => {
                        let want = at * n as f64;
                        steps
                            .iter()
                            .any(|st| (st.at as f64 - want).abs() <= n as f64 / 10.0)
                    }
                    _ => false,
                };
                right += usize::from(ok);
                if planted == Planted::Flat && !ok {
                    false_alarms += 1;
                }
            }
            cells.push(Cell {
                planted,
                phi,
                noise,
                series: count,
                right,
                false_alarms,
                detectable: crate::quantile::median(&detectable),
            });
        }
    }
    cells
}

/// The published trials: what `ledgerbench drift-trials` runs.
#[derive(Debug, Clone)]
pub struct Setup {
    /// Samples per series: a 2-hour soak at 10-second intervals.
    pub n: usize,
    /// Series per cell.
    pub count: usize,
    /// The first series' seed.
    pub seed: u64,
    /// The verdict's settings: the defaults, with a soak's horizon.
    pub options: DriftOptions,
    /// The planted shapes.
    pub shapes: Vec<Planted>,
    /// The noises, as (AR(1) coefficient, marginal deviation share).
    pub noises: Vec<(f64, f64)>,
}

impl Setup {
    /// The grid chosen before the first trials ran (2026-11-27): 720
    /// samples, 20 series a cell, a 14-day horizon at 10 s, a 10% drift
    /// over the run, a 20% step at 60% of it, four noises; and a fifth
    /// noise added after them: AR(1) 0.9 again, at 3%, where a 10% drift
    /// is within what a test can see under that persistence.
    pub fn published() -> Self {
        Self {
            n: 720,
            count: 20,
            seed: 20_261_127,
            options: DriftOptions {
                horizon: 14.0 * 86_400.0 / 10.0,
                ..DriftOptions::default()
            },
            shapes: vec![
                Planted::Flat,
                Planted::Drift(0.10),
                Planted::Step { at: 0.6, by: 0.20 },
            ],
            noises: vec![
                (0.0, 0.03),
                (0.5, 0.03),
                (0.8, 0.03),
                (0.9, 0.05),
                (0.9, 0.03),
            ],
        }
    }

    /// Runs the trials.
    pub fn run(&self) -> Vec<Cell> {
        run(
            self.n,
            self.count,
            &self.shapes,
            &self.noises,
            &self.options,
            self.seed,
        )
    }
}

/// What a cell's row calls its planted shape.
pub fn planted_name(p: Planted) -> String {
    match p {
        Planted::Flat => "flat".into(),
        Planted::Drift(s) => format!("drift {:+.0}% over the run", s * 100.0),
        Planted::Step { at, by } => {
            format!("step {:+.0}% at {:.0}% of the run", by * 100.0, at * 100.0)
        }
    }
}

/// The trials as a markdown table, a row per cell.
pub fn table(cells: &[Cell]) -> String {
    let mut out = String::from(
        "| planted | AR(1) phi | noise sd | called as planted | false alarms | detectable drift (median) | bar | meets it |\n\
         |---|---:|---:|---:|---:|---:|---|---|\n",
    );
    for c in cells {
        let bar = match c.planted {
            Planted::Flat => "at most 1 of 20 called changed",
            _ => "at least 19 of 20 found",
        };
        // A step widens the slope's interval: no drift limit to read there.
        let detectable = match c.planted {
            Planted::Step { .. } => None,
            _ => c.detectable,
        };
        let detectable = detectable.map_or("-".into(), |d| format!("{:.1}%", d * 100.0));
        out.push_str(&format!(
            "| {} | {} | {:.0}% | {} of {} | {} | {} | {} | {} |\n",
            planted_name(c.planted),
            c.phi,
            c.noise * 100.0,
            c.right,
            c.series,
            c.false_alarms,
            detectable,
            bar,
            if c.passes() { "yes" } else { "**no**" },
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_noise_has_the_strength_and_memory_asked_for() {
        let x = series(5_000, Planted::Flat, 0.8, 0.05, 3);
        let mean = x.iter().sum::<f64>() / x.len() as f64;
        let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / x.len() as f64;
        assert!((mean - 100.0).abs() < 1.0, "{mean}");
        assert!((var.sqrt() - 5.0).abs() < 0.4, "{}", var.sqrt());
        let r1 = crate::trend::autocorrelation(&x)[1];
        assert!((r1 - 0.8).abs() < 0.03, "{r1}");
        // Seeded: the same series again.
        let again = |seed| series(50, Planted::Drift(0.1), 0.5, 0.02, seed);
        assert_eq!(again(9), again(9));
        assert_ne!(again(9), again(10));
    }
}

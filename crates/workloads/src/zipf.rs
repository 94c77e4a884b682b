//! YCSB's request distributions: zipfian (Gray et al., "Quickly generating
//! billion-record synthetic databases"), scrambled so hot keys spread over
//! the key space, and uniform.

use ledgerbench_rng::{Rng, mix};

/// Zipfian over `0..n` with constant `theta` (YCSB's 0.99).
#[derive(Debug, Clone)]
pub struct Zipf {
    n: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
}

fn zeta(n: u64, theta: f64) -> f64 {
    (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum()
}

impl Zipf {
    /// The distribution over `n` items (n >= 1); O(n) to set up.
    pub fn new(n: u64, theta: f64) -> Self {
        let n = n.max(1);
        let zetan = zeta(n, theta);
        let zeta2 = zeta(2.min(n), theta);
        let eta = if n > 1 {
            (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan)
        } else {
            0.0
        };
        Self {
            n,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta,
        }
    }

    /// An item; 0 is the most popular.
    pub fn next(&self, r: &mut Rng) -> u64 {
        let u = r.f64();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1.min(self.n - 1);
        }
        ((self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64).min(self.n - 1)
    }

    /// An item with popularity scattered over the key space, as YCSB's
    /// scrambled zipfian does.
    pub fn next_scrambled(&self, r: &mut Rng) -> u64 {
        mix(self.next(r)) % self.n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_is_skewed_and_in_range() {
        let z = Zipf::new(1000, 0.99);
        let mut r = Rng::new(1);
        let mut hits = vec![0u32; 1000];
        for _ in 0..100_000 {
            hits[z.next(&mut r) as usize] += 1;
        }
        // The head is hot: item 0 alone takes several percent, the tail little.
        assert!(hits[0] > 5_000, "{}", hits[0]);
        assert!(hits[0] > 10 * hits[500].max(1));
        let s = z.next_scrambled(&mut r);
        assert!(s < 1000);
        assert_eq!(Zipf::new(1, 0.99).next(&mut r), 0);
    }
}

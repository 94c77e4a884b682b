//! Bounded memory over a trace of any length: a reservoir of values for
//! quantiles and fits, and a spatial sample of keys for what needs each
//! key's history (access counts, ages, lifetimes).

use ledgerbench_rng::Rng;

use crate::model::Quantiles;

/// A uniform sample of at most `cap` values of a stream (Vitter's
/// algorithm R), seeded so a fit is the same every time.
pub struct Reservoir {
    cap: usize,
    seen: u64,
    values: Vec<f64>,
    sum: f64,
    min: f64,
    max: f64,
    rng: Rng,
}

impl Reservoir {
    /// An empty reservoir of `cap` values.
    pub fn new(cap: usize, seed: u64) -> Self {
        Self {
            cap,
            seen: 0,
            values: Vec::new(),
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            rng: Rng::new(seed),
        }
    }

    /// Offers one value.
    pub fn push(&mut self, v: f64) {
        self.seen += 1;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        if self.values.len() < self.cap {
            self.values.push(v);
        } else {
            let j = self.rng.below(self.seen);
            if (j as usize) < self.cap {
                self.values[j as usize] = v;
            }
        }
    }

    /// Values offered.
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// The sample kept.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Quantiles of the sample, with the exact smallest, largest, mean and
    /// count of every value offered; `None` when none was.
    pub fn quantiles(&self) -> Option<Quantiles> {
        if self.seen == 0 {
            return None;
        }
        let mut v = self.values.clone();
        ledgerbench_stats::quantile::sort(&mut v);
        let q = |p| ledgerbench_stats::quantile::quantile_sorted(&v, p).unwrap_or(f64::NAN);
        Some(Quantiles {
            min: self.min,
            p10: q(0.10),
            p50: q(0.50),
            p90: q(0.90),
            p99: q(0.99),
            max: self.max,
            mean: self.sum / self.seen as f64,
            count: self.seen,
        })
    }

    /// Every value offered was this one.
    pub fn constant(&self) -> Option<f64> {
        (self.seen > 0 && self.min == self.max).then_some(self.min)
    }
}

/// The keys whose 24-bit hash is below a threshold (SHARDS, Waldspurger et
/// al. 2015): a fixed share of the key space, so each kept key's history
/// is whole and shares over keys are estimated without bias. When more
/// than `cap` keys are kept the threshold halves and the keys above it go.
pub struct KeySample<T> {
    cap: usize,
    threshold: u32,
    keys: std::collections::HashMap<Box<[u8]>, (u32, T)>,
}

/// The hash range a key sample's threshold is out of.
const SPACE: u32 = 1 << 24;

impl<T: Default> KeySample<T> {
    /// Every key, until there are more than `cap`.
    pub fn new(cap: usize) -> Self {
        Self {
            cap: cap.max(1),
            threshold: SPACE,
            keys: std::collections::HashMap::new(),
        }
    }

    /// The state of `key` when it is in the sample (inserted the first
    /// time); `None` when its hash is outside.
    pub fn get(&mut self, key: &[u8]) -> Option<&mut T> {
        let h = hash24(key);
        if h >= self.threshold {
            return None;
        }
        if !self.keys.contains_key(key) {
            if self.keys.len() >= self.cap {
                self.halve();
                if h >= self.threshold {
                    return None;
                }
            }
            self.keys.insert(key.into(), (h, T::default()));
        }
        self.keys.get_mut(key).map(|(_, t)| t)
    }

    fn halve(&mut self) {
        while self.keys.len() >= self.cap && self.threshold > 1 {
            self.threshold /= 2;
            let t = self.threshold;
            self.keys.retain(|_, (h, _)| *h < t);
        }
    }

    /// Keys in the whole trace per key in the sample.
    pub fn scale(&self) -> f64 {
        f64::from(SPACE) / f64::from(self.threshold)
    }

    /// The keys kept and their states.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &T)> {
        self.keys.iter().map(|(k, (_, t))| (&**k, t))
    }

    /// Keys kept.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// No key kept.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// 24 bits of a key's hash (FNV-1a, then mixed so nearby keys scatter).
fn hash24(key: &[u8]) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in key {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (ledgerbench_rng::mix(h) >> 40) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reservoir_keeps_exact_extremes_and_a_bounded_sample() {
        let mut r = Reservoir::new(100, 1);
        for i in 0..10_000 {
            r.push(f64::from(i));
        }
        let q = r.quantiles().expect("quantiles");
        assert_eq!((q.min, q.max, q.count), (0.0, 9999.0, 10_000));
        assert!((q.mean - 4999.5).abs() < 1e-9);
        assert_eq!(r.values().len(), 100);
        assert!((q.p50 - 5000.0).abs() < 1500.0, "{q:?}");
        assert_eq!(r.constant(), None);
    }

    #[test]
    fn a_key_sample_halves_its_share_to_stay_under_its_cap() {
        let mut s: KeySample<u64> = KeySample::new(1000);
        for i in 0u64..20_000 {
            if let Some(c) = s.get(&i.to_be_bytes()) {
                *c += 1;
            }
        }
        assert!(s.len() < 1000, "{}", s.len());
        assert!(s.scale() >= 16.0, "{}", s.scale());
        // About one key in `scale` is kept.
        let est = s.len() as f64 * s.scale();
        assert!((est / 20_000.0 - 1.0).abs() < 0.2, "{est}");
        // A key kept has its whole history.
        for i in 0u64..20_000 {
            if let Some(c) = s.get(&i.to_be_bytes()) {
                *c += 1;
            }
        }
        assert!(s.iter().all(|(_, &c)| c == 2));
    }
}

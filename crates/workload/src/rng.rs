//! A small, fast, position-addressable random source.
//!
//! Generators derive a fresh stream for every (seed, position) so that any
//! element can be regenerated alone, in any order, on any thread.

/// SplitMix64 finaliser: a strong 64-bit mix used to derive stream seeds.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Seed of the stream for `(seed, a, b)`.
pub fn stream(seed: u64, a: u64, b: u64) -> u64 {
    mix(mix(mix(seed) ^ a) ^ b.wrapping_mul(0xd6e8_feb8_6659_fd93))
}

/// xoshiro256++: fast, good quality, not cryptographic (not needed here).
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator for one stream seed.
    pub fn new(seed: u64) -> Self {
        let a = mix(seed);
        let b = mix(a);
        let c = mix(b);
        let d = mix(c);
        Self {
            s: [a, b, c, d | 1],
        }
    }

    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let out = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        out
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [0, n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.f64().max(f64::MIN_POSITIVE);
        let u2 = self.f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Appends `n` random bytes.
    pub fn fill(&mut self, out: &mut Vec<u8>, n: usize) {
        let mut left = n;
        while left >= 8 {
            out.extend_from_slice(&self.next_u64().to_le_bytes());
            left -= 8;
        }
        if left > 0 {
            out.extend_from_slice(&self.next_u64().to_le_bytes()[..left]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4)
            .map(|_| Rng::new(stream(1, 2, 3)).next_u64())
            .collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(stream(1, 2, 3), stream(1, 3, 2));
        assert_ne!(stream(1, 2, 3), stream(2, 2, 3));
    }

    #[test]
    fn below_and_normal_have_the_right_moments() {
        let mut r = Rng::new(9);
        let n = 200_000;
        let mean = (0..n).map(|_| r.below(10) as f64).sum::<f64>() / n as f64;
        assert!((mean - 4.5).abs() < 0.05, "{mean}");
        let xs: Vec<f64> = (0..n).map(|_| r.normal()).collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n as f64;
        assert!(m.abs() < 0.01 && (v - 1.0).abs() < 0.02, "{m} {v}");
    }
}

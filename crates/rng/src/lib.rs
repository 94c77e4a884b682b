//! A small, fast, position-addressable random source, and the value hash.
//!
//! Generators derive a fresh stream for every (seed, position) so that any
//! element can be regenerated alone, in any order, on any thread. Traces
//! store generated values as (length, seed) and reads as hashes, so every
//! trace ever recorded depends on the exact output of this crate: the
//! golden vectors below pin it, and a change that moves them breaks traces.

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

    /// Appends `n` random bytes: each 8 the little-endian bytes of the next
    /// 64 bits, the last fewer than 8 the first of theirs.
    pub fn fill(&mut self, out: &mut Vec<u8>, n: usize) {
        // Grown once and written in place: a value is made for every put, and
        // growing it 8 bytes at a time cost twice the random bits' making.
        let start = out.len();
        out.resize(start + n, 0);
        for chunk in out[start..].chunks_mut(8) {
            chunk.copy_from_slice(&self.next_u64().to_le_bytes()[..chunk.len()]);
        }
    }
}

/// 64-bit hash of a value, for read expectations (not cryptographic).
pub fn value_hash(v: &[u8]) -> u64 {
    let mut h = mix(v.len() as u64);
    for chunk in v.chunks(8) {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        h = mix(h ^ u64::from_le_bytes(w));
    }
    h
}

/// Fills `out` with the `len` bytes a generated value of `seed` stands for.
pub fn generate(len: u32, seed: u64, out: &mut Vec<u8>) {
    out.clear();
    Rng::new(seed).fill(out, len as usize);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pinned outputs: every recorded trace regenerates its values and
    /// checks its reads through these exact functions. If this test fails,
    /// the change breaks every existing trace; bump the trace format
    /// version instead of updating the vectors.
    #[test]
    fn golden_vectors() {
        assert_eq!(mix(0), 0xe220_a839_7b1d_cdaf);
        assert_eq!(mix(1), 0x910a_2dec_8902_5cc1);
        assert_eq!(stream(1, 2, 3), 0x1591_eedb_d504_c4ad);
        let mut r = Rng::new(42);
        let next: Vec<u64> = (0..4).map(|_| r.next_u64()).collect();
        assert_eq!(
            next,
            [
                0xc757_960b_442b_0ac3,
                0x4bb2_2a7f_77ff_8c6c,
                0x0495_0439_d3c5_eafe,
                0xb769_fb44_902f_2dc2
            ]
        );
        let mut r = Rng::new(7);
        let below: Vec<u64> = (0..8).map(|_| r.below(10)).collect();
        assert_eq!(below, [3, 8, 6, 8, 4, 0, 6, 7]);
        let mut r = Rng::new(9);
        assert_eq!(r.f64(), 0.574_415_031_000_227_7);
        assert_eq!(r.normal(), -2.270_200_045_917_466_3);
        let mut out = Vec::new();
        Rng::new(3).fill(&mut out, 13);
        assert_eq!(
            out,
            [149, 49, 123, 158, 180, 211, 54, 148, 52, 121, 240, 80, 212]
        );
        // Appended after what is there, the same bytes.
        let mut after = vec![1, 2];
        Rng::new(3).fill(&mut after, 13);
        assert_eq!((&after[..2], &after[2..]), (&[1u8, 2][..], &out[..]));
        assert_eq!(value_hash(b""), 0xe220_a839_7b1d_cdaf);
        assert_eq!(value_hash(b"kvbench value hash"), 0xa103_bb26_18da_51b9);
        generate(11, 5, &mut out);
        assert_eq!(out, [35, 208, 44, 213, 69, 204, 92, 85, 232, 99, 208]);
    }

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

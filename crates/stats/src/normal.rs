//! The standard normal distribution: its CDF and its inverse, to double
//! precision, for the p-values and intervals of the trend tests.
//!
//! `erfc` comes from a series of positive terms below 2 (no cancellation)
//! and from its continued fraction above, where `1 - erf` would lose the
//! small p-values a trend test reports. The inverse starts from Acklam's
//! rational approximation (relative error about 1e-9) and is polished by
//! Newton steps on the CDF.

use std::f64::consts::{FRAC_1_SQRT_2, PI};

/// The complementary error function, `1 - erf(x)`.
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 2.0 {
        1.0 - erf_series(x)
    } else {
        erfc_fraction(x)
    }
}

/// `erf(x) = 2/sqrt(pi) * exp(-x^2) * sum 2^n x^(2n+1) / (1*3*...*(2n+1))`:
/// every term positive, so nothing cancels.
fn erf_series(x: f64) -> f64 {
    let x2 = x * x;
    let mut term = x;
    let mut sum = x;
    let mut n = 0.0;
    while term > sum * 1e-17 {
        n += 1.0;
        term *= 2.0 * x2 / (2.0 * n + 1.0);
        sum += term;
    }
    2.0 / PI.sqrt() * (-x2).exp() * sum
}

/// Laplace's continued fraction, `erfc(x) = exp(-x^2)/sqrt(pi) /
/// (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))`, by the modified Lentz method.
fn erfc_fraction(x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut f = x;
    let mut c = x;
    let mut d = 0.0;
    for k in 1..500 {
        let a = f64::from(k) / 2.0;
        d = x + a * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = x + a / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() <= f64::EPSILON {
            break;
        }
    }
    (-x * x).exp() / PI.sqrt() / f
}

/// P(Z <= z) for a standard normal Z.
pub fn cdf(z: f64) -> f64 {
    0.5 * erfc(-z * FRAC_1_SQRT_2)
}

/// P(Z > z), exact in the upper tail where `1 - cdf(z)` would round to 0.
pub fn sf(z: f64) -> f64 {
    0.5 * erfc(z * FRAC_1_SQRT_2)
}

/// The `p` quantile of the standard normal (`scipy.stats.norm.ppf`):
/// NaN outside 0 to 1, infinite at the ends.
pub fn ppf(p: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) || p.is_nan() {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    let mut x = acklam(p);
    // Newton on cdf(x) - p; the density is never 0 at a finite x.
    for _ in 0..4 {
        let density = (-0.5 * x * x).exp() / (2.0 * PI).sqrt();
        // The tail's own function keeps the error relative there.
        let err = if x > 0.0 {
            (1.0 - p) - sf(x)
        } else {
            cdf(x) - p
        };
        let step = err / density;
        x -= step;
        if step.abs() <= 1e-15 * x.abs().max(1.0) {
            break;
        }
    }
    x
}

/// Acklam's rational approximation of the normal quantile.
fn acklam(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    const LOW: f64 = 0.02425;
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - LOW {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// The two-sided p-value of a standard normal statistic `z`.
pub fn two_sided(z: f64) -> f64 {
    2.0 * sf(z.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cdf_and_its_inverse_agree_with_known_values() {
        // Values from tables; scipy's own answers are the golden vectors'.
        let close = |a: f64, b: f64, rel: f64| (a - b).abs() <= rel * b.abs().max(1e-300);
        assert!(close(cdf(0.0), 0.5, 1e-15));
        assert!(close(cdf(1.959_963_984_540_054), 0.975, 1e-14));
        assert!(close(sf(5.0), 2.866_515_718_791_939e-7, 1e-12));
        assert!(close(sf(10.0), 7.619_853_024_160_527e-24, 1e-9));
        assert!(close(cdf(-1.0), 0.158_655_253_931_457_05, 1e-13));
        assert!(close(ppf(0.975), 1.959_963_984_540_054, 1e-13));
        assert!(close(ppf(0.025), -1.959_963_984_540_054, 1e-13));
        assert!(close(ppf(0.995), 2.575_829_303_548_901, 1e-13));
        assert!(close(ppf(1e-10), -6.361_340_902_404_056, 1e-10));
        assert_eq!(ppf(0.5), 0.0);
        assert!(ppf(1.5).is_nan() && ppf(f64::NAN).is_nan());
        assert_eq!(ppf(1.0), f64::INFINITY);
        // Round trips across the range.
        for p in [1e-12, 1e-6, 0.01, 0.3, 0.7, 0.99, 1.0 - 1e-9] {
            assert!(close(cdf(ppf(p)), p, 1e-12), "{p}");
        }
        assert!(close(two_sided(1.959_963_984_540_054), 0.05, 1e-13));
    }
}

//! From what a survey gathered to a workload model: shares, sizes and
//! their fits, the order of inserts, access skew and its models.

use ledgerbench_stats::fit::{self, gpd, two_exp};

use crate::model::{
    Access, Commits, Inserts, KeyRanges, Mix, Pareto, Power, PrefixOrder, Sizes, Store, VERSION,
    Workload,
};
use crate::sample::Reservoir;
use crate::survey::{PREFIXES, StoreSurvey, Survey};

/// Key ranges the hotness of ranges is measured over (db_bench's
/// `keyrange_num` default for mixgraph's published parameters).
pub const KEY_RANGES: usize = 30;

/// A power law is kept only below this `b` (1 is uniform).
const POWER_B_MAX: f64 = 0.9;

/// The model of what `s` gathered; `source` says where it came from.
pub fn finish(s: &Survey, source: &str) -> Workload {
    let gaps = s.commit_gaps.quantiles();
    let period_micros = gaps.as_ref().and_then(|g| {
        (g.count >= 10 && g.p50 > 0.0 && g.p90 - g.p10 <= 0.1 * g.p50).then_some(g.p50 as u64)
    });
    Workload {
        version: VERSION,
        source: source.to_string(),
        stores: s
            .stores
            .iter()
            .filter(|st| st.ops > st.load_ops)
            .map(store)
            .collect(),
        commits: Commits {
            writes: s.commit_writes.quantiles(),
            gap_micros: gaps,
            period_micros,
            flush_every_writes: s.flushes.every(),
            compact_every_writes: s.compactions.every(),
        },
        roles: Vec::new(),
    }
}

fn store(st: &StoreSurvey) -> Store {
    let c = &st.counts;
    let scale = st.keys.scale();
    let ratio = |part: u64, whole: u64| {
        if whole == 0 {
            0.0
        } else {
            part as f64 / whole as f64
        }
    };
    // Puts split into inserts and overwrites as the sampled keys' were.
    let sampled_puts = c.sampled_inserts + c.sampled_overwrites;
    let insert_share = if sampled_puts == 0 {
        1.0
    } else {
        ratio(c.sampled_inserts, sampled_puts)
    };
    let inserts = c.puts as f64 * insert_share;
    // Gets whose answer the trace did not record split as the sampled
    // keys' did (all unwritten when none was sampled).
    let unchecked = (c.gets - c.gets_found - c.gets_missing) as f64;
    let sampled = c.sampled_found + c.sampled_missing + c.sampled_unwritten;
    let part = |n: u64| {
        if sampled == 0 {
            0.0
        } else {
            unchecked * ratio(n, sampled)
        }
    };
    let unwritten = if sampled == 0 {
        unchecked
    } else {
        part(c.sampled_unwritten)
    };
    let ops = (st.ops - st.load_ops).max(1) as f64;
    let mix = Mix {
        insert: inserts / ops,
        overwrite: (c.puts as f64 - inserts) / ops,
        delete: c.deletes as f64 / ops,
        delete_range: c.delete_ranges as f64 / ops,
        get_found: (c.gets_found as f64 + part(c.sampled_found)) / ops,
        get_missing: (c.gets_missing as f64 + part(c.sampled_missing)) / ops,
        get_unwritten: unwritten / ops,
        scan: c.scans as f64 / ops,
    };
    let initial = st.keys.iter().filter(|(_, k)| k.read_unwritten).count();
    Store {
        name: st.name.clone(),
        operations: st.ops - st.load_ops,
        keys: (st.keys.len() as f64 * scale).round() as u64,
        initial_keys: st.loaded_keys + (initial as f64 * scale).round() as u64,
        mix,
        key_size: sizes(&st.key_sizes, false),
        value_size: sizes(&st.value_sizes, true),
        scan_length: (c.scans > 0).then(|| sizes(&st.scan_lengths, false)),
        inserts: Inserts {
            ascending: share_of(c.ascending, inserts),
            within_prefix: PREFIXES
                .iter()
                .zip(st.prefix_ascending())
                .filter_map(|(&bytes, n)| {
                    n.map(|n| PrefixOrder {
                        bytes,
                        ascending: share_of(n, inserts),
                    })
                })
                .collect(),
        },
        access: access(st),
        read_age: st.read_ages.quantiles(),
        lifetime: st.lifetimes.quantiles(),
    }
}

/// `n` of `whole`, at most 1 (both estimated from samples).
fn share_of(n: u64, whole: f64) -> f64 {
    if whole <= 0.0 {
        0.0
    } else {
        (n as f64 / whole).min(1.0)
    }
}

/// Sizes: fixed when every one was the same, else their quantiles and,
/// for values, a Generalized Pareto when one fits within [`PARETO_KS_MAX`].
fn sizes(r: &Reservoir, pareto: bool) -> Sizes {
    if let Some(c) = r.constant() {
        return Sizes {
            fixed: Some(c as u32),
            ..Sizes::default()
        };
    }
    let quantiles = r.quantiles();
    let pareto = quantiles
        .as_ref()
        .filter(|_| pareto)
        .and_then(|q| fit_pareto(r.values(), q.min))
        .filter(|p| p.ks <= PARETO_KS_MAX);
    Sizes {
        fixed: None,
        quantiles,
        pareto,
    }
}

/// A Pareto is kept only this close to the sizes; past it the quantiles
/// say more (a size mix of a few fixed lengths is no Pareto).
pub const PARETO_KS_MAX: f64 = 0.1;

/// The better of two Paretos by Kolmogorov-Smirnov distance: one from the
/// smallest size, and one for the sizes above it with those at the
/// smallest kept as a floor. Sizes raised to a floor pile up there, which
/// a Pareto from the floor cannot follow.
fn fit_pareto(v: &[f64], min: f64) -> Option<Pareto> {
    let whole = gpd::fit(v, min).and_then(|g| {
        Some(Pareto {
            loc: g.loc,
            shape: g.shape,
            scale: g.scale,
            ks: fit::ks_distance(v, |x| g.cdf(x))?,
            floor: 0.0,
        })
    });
    let above: Vec<f64> = v.iter().copied().filter(|&x| x > min).collect();
    let floor = 1.0 - above.len() as f64 / v.len().max(1) as f64;
    let start = above.iter().copied().fold(f64::INFINITY, f64::min);
    // At the floor the model's distribution and the sizes' agree exactly
    // (both put `floor` there), so the distance is the rest's, shrunk by
    // the share the rest holds.
    let floored = (floor > 0.0)
        .then(|| gpd::fit(&above, start))
        .flatten()
        .and_then(|g| {
            Some(Pareto {
                loc: g.loc,
                shape: g.shape,
                scale: g.scale,
                ks: (1.0 - floor) * fit::ks_distance(&above, |x| g.cdf(x))?,
                floor,
            })
        });
    match (whole, floored) {
        (Some(w), Some(f)) => Some(if f.ks < w.ks { f } else { w }),
        (w, f) => w.or(f),
    }
}

/// Access skew from the sampled keys' counts.
fn access(st: &StoreSurvey) -> Access {
    let counts: Vec<u64> = st.keys.iter().map(|(_, k)| k.count).collect();
    let share = |f| fit::hottest_share(&counts, f).unwrap_or(0.0);
    // The n hottest sampled keys stand for the n * scale hottest of all.
    let power = fit::power_cdf(&counts)
        .map(|p| Power {
            a: p.a / st.keys.scale().powf(p.b),
            b: p.b,
            max_gap: p.max_gap,
        })
        .filter(|p| p.b < POWER_B_MAX);
    Access {
        hottest_0_1: share(0.001),
        hottest_1: share(0.01),
        hottest_10: share(0.1),
        power,
        key_ranges: key_ranges(st),
    }
}

/// The ranked hotness of [`KEY_RANGES`] ranges of equal width in key
/// space ([`range_shares`]), when the curve fits it at least twice as well
/// as ranges all alike and the hottest range takes 3 times the coldest's
/// share.
fn key_ranges(st: &StoreSurvey) -> Option<KeyRanges> {
    let mut keys: Vec<(&[u8], u64)> = st.keys.iter().map(|(k, s)| (k, s.count)).collect();
    if keys.len() < KEY_RANGES * 10 {
        return None;
    }
    keys.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut shares = range_shares(&keys, KEY_RANGES)?;
    shares.sort_by(|a, b| b.total_cmp(a));
    let n = shares.len();
    let x: Vec<f64> = (1..=n).map(|i| i as f64).collect();
    let t = two_exp::fit(&x, &shares)?;
    let flat = 1.0 / n as f64;
    let flat_rmse = (shares.iter().map(|s| (s - flat).powi(2)).sum::<f64>() / n as f64).sqrt();
    let coldest = shares.last().copied().unwrap_or(0.0);
    (t.rmse * 2.0 <= flat_rmse && shares[0] >= 3.0 * coldest).then_some(KeyRanges {
        ranges: n as u32,
        a: t.a,
        b: t.b,
        c: t.c,
        d: t.d,
        rmse: t.rmse,
        flat_rmse,
    })
}

/// The shares of accesses of `n` ranges of equal width in key space, in
/// key order, from `keys` sorted with their access counts. A key's place
/// is its 8 bytes after the prefix every key shares, read as a number;
/// the span from the least to the greatest is cut evenly. `None` when all
/// keys sit at one place.
///
/// Why width and not equal counts of the keys seen: a cold range shows
/// few of its keys, so cutting the keys seen into equal counts lumps cold
/// ranges together and splits hot ones. A range of equal width holds an
/// equal count of keys where keys are dense numbers or hashes (db_bench's
/// are its key ids, big-endian), and the sample keeps keys by hash, so
/// sampling thins every range alike.
fn range_shares(keys: &[(&[u8], u64)], n: usize) -> Option<Vec<f64>> {
    let (first, last) = (keys.first()?.0, keys.last()?.0);
    let skip = first.iter().zip(last).take_while(|(a, b)| a == b).count();
    let place = |k: &[u8]| {
        let mut b = [0u8; 8];
        for (to, from) in b.iter_mut().zip(k.iter().skip(skip)) {
            *to = *from;
        }
        u64::from_be_bytes(b)
    };
    let (lo, hi) = (place(first), place(last));
    if hi <= lo {
        return None;
    }
    let width = u128::from(hi - lo) + 1;
    let mut counts = vec![0u64; n];
    for (k, c) in keys {
        let i = (u128::from(place(k) - lo) * n as u128 / width) as usize;
        counts[i.min(n - 1)] += c;
    }
    let total = counts.iter().sum::<u64>().max(1) as f64;
    Some(counts.iter().map(|&c| c as f64 / total).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(prefix: &[u8], id: u64) -> Vec<u8> {
        let mut k = prefix.to_vec();
        k.extend_from_slice(&id.to_be_bytes());
        k
    }

    /// 30 ranges of 100 ids: range 7 has all its keys seen, 10 accesses
    /// each; the others 2 keys each, once.
    fn db_bench_like(prefix: &[u8]) -> Vec<(Vec<u8>, u64)> {
        let mut keys = Vec::new();
        for r in 0..30u64 {
            if r == 7 {
                keys.extend((700..800).map(|id| (key(prefix, id), 10)));
            } else {
                keys.extend([0, 99].map(|o| (key(prefix, r * 100 + o), 1)));
            }
        }
        keys
    }

    #[test]
    fn ranges_are_cut_by_key_space_not_by_the_keys_seen() {
        for prefix in [&b""[..], b"table/"] {
            let keys = db_bench_like(prefix);
            let refs: Vec<(&[u8], u64)> = keys.iter().map(|(k, c)| (&k[..], *c)).collect();
            let s = range_shares(&refs, 30).expect("shares");
            let total = 1000.0 + 58.0;
            for (i, got) in s.iter().enumerate() {
                let want = if i == 7 { 1000.0 } else { 2.0 } / total;
                assert!((got - want).abs() < 1e-12, "range {i}: {got} != {want}");
            }
        }
    }

    #[test]
    fn keys_all_at_one_place_have_no_ranges() {
        let keys = [(&b"k"[..], 3u64)];
        assert_eq!(range_shares(&keys, 30), None);
    }
}

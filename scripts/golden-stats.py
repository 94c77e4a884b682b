#!/usr/bin/env python3
"""The golden vectors of crates/stats: what independent implementations
answer for fixed series, written to fixtures/stats/golden.json.

    pip install numpy==2.4.6 scipy==1.17.1 pymannkendall==1.4.3 ruptures==1.1.10
    python3 scripts/golden-stats.py > fixtures/stats/golden.json

pymannkendall 1.4.3 (the last on PyPI) sums the significant lags of the
Hamed-Rao correction with their signs, which makes the variance negative
under negative autocorrelation; its repository fixed that (issue 29,
`abs(sni)`) after the release. The script applies that fix to the
installed module's source before using it, so the vectors are those of
the fixed test, which crates/stats follows.

The series are in the file, so the Rust tests need no Python and no
random generator of numpy's. Run again only to add a case; a changed
answer for an old case is a finding about one implementation or the other.
"""
import json
import sys

import numpy as np
import inspect

import pymannkendall as mk
import ruptures as rpt
import scipy
from scipy import optimize, stats


def fixed_hamed_rao():
    """pymannkendall's Hamed-Rao test with the fix of its issue 29."""
    src = inspect.getsource(mk.pymannkendall)
    fixed = src.replace("(n * (n-1) * (n-2))) * sni", "(n * (n-1) * (n-2))) * abs(sni)")
    if fixed == src and "abs(sni)" not in src:
        sys.exit("golden-stats: pymannkendall's Hamed-Rao source is not the one this script patches")
    scope = {}
    exec(compile(fixed, "pymannkendall_fixed", "exec"), scope)
    return scope["hamed_rao_modification_test"]


def mann_kendall_ar1(x):
    """crates/stats' `mann_kendall_ar1`, built on pymannkendall's pieces:
    its S and Var(S) (`original_test`), its Sen's slope for the detrending
    and scipy's ranks; the inflation is Hamed and Rao's sum with every lag
    of the ranks' autocorrelation taken as phi^k, phi their lag-1
    autocorrelation bias-corrected (r1 + (1 + 4 r1) / n), clipped to [0, 0.99]."""
    n = len(x)
    base = mk.original_test(x)
    slope = mk.sens_slope(x).slope
    ranks = stats.rankdata(x - np.arange(1, n + 1) * slope)
    c = ranks - ranks.mean()
    r1 = float(np.dot(c[:-1], c[1:]) / np.dot(c, c))
    phi = min(max(r1 + (1 + 4 * r1) / n, 0.0), 0.99)
    k = np.arange(1, n)
    m = (n - k).astype(float)
    total = float(np.sum(m * (m - 1) * (m - 2) * phi ** k))
    var_s = base.var_s * (1 + 2 / (n * (n - 1) * (n - 2)) * total)
    s = base.s
    z = (s - np.sign(s)) / np.sqrt(var_s) if s != 0 else 0.0
    return {"s": float(s), "var_s": float(var_s), "z": float(z),
            "p": float(2 * stats.norm.sf(abs(z))), "phi": phi}


def ar1(rng, n, phi, sigma=1.0):
    """AR(1) noise: e[t] = phi * e[t-1] + N(0, sigma)."""
    e = np.zeros(n)
    for t in range(1, n):
        e[t] = phi * e[t - 1] + rng.normal(0.0, sigma)
    return e


def series():
    rng = np.random.default_rng(20261127)
    out = []
    for phi in (0.0, 0.5, 0.9):
        for name, shape in (
            ("flat", lambda t, n: np.full(n, 100.0)),
            ("drift", lambda t, n: 100.0 + 10.0 * t / n),
            ("step", lambda t, n: np.where(t < n * 0.6, 100.0, 115.0)),
        ):
            n = 120
            t = np.arange(n)
            out.append((f"{name}-ar{phi}", shape(t, n) + 3.0 * ar1(rng, n, phi)))
    # Ties and a short series: the variance's tie correction, small n.
    out.append(("ties", np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9], float)))
    out.append(("short", np.array([1.0, 3.0, 2.0, 5.0])))
    return out


def log_ranks(length):
    """Ranks 1..length at 20 a decade, each once (fit::log_ranks)."""
    out, k = [], 0
    while True:
        n = int(np.floor(10 ** (k / 20) + 0.5))
        if n > length:
            break
        if not out or out[-1] != n:
            out.append(n)
        k += 1
    if length > 0 and out[-1] != length:
        out.append(length)
    return out


def fits():
    """The fits of a workload's distributions (crates/stats/src/fit)."""
    rng = np.random.default_rng(46)
    out = {"line": [], "gpd": [], "two_exp": [], "power_cdf": []}
    for slope, noise in ((2.0, 0.5), (-0.3, 2.0), (0.0, 1.0)):
        x = np.sort(rng.uniform(0, 10, 40))
        y = 1.5 + slope * x + noise * rng.standard_normal(40)
        r = stats.linregress(x, y)
        out["line"].append({"x": x.tolist(), "y": y.tolist(), "slope": float(r.slope),
                            "intercept": float(r.intercept), "r": float(r.rvalue),
                            "slope_stderr": float(r.stderr)})
    # db_bench's value sizes (value_k 0.2615, value_sigma 25.45) and other tails.
    for c, scale in ((0.2615, 25.45), (0.0, 10.0), (-0.2, 100.0), (0.8, 5.0)):
        d = stats.genpareto(c, loc=0.0, scale=scale)
        x = d.rvs(size=1000, random_state=rng)
        fc, floc, fscale = stats.genpareto.fit(x, floc=0.0)
        out["gpd"].append({
            "sample": x.tolist(), "true": [c, scale],
            "shape": float(fc), "scale": float(fscale),
            "log_likelihood": float(stats.genpareto.logpdf(x, fc, 0.0, fscale).sum()),
            "ks": float(stats.kstest(x, d.cdf).statistic),
            "cdf": [[float(q), float(d.cdf(q))] for q in d.ppf([0.01, 0.5, 0.9, 0.999])],
            "ppf": [[p, float(d.ppf(p))] for p in (1e-6, 0.25, 0.5, 0.99)],
        })
    # mixgraph's key-range hotness, with 5% noise, and a gentler pair.
    def two(x, a, b, c, d):
        return a * np.exp(b * x) + c * np.exp(d * x)
    for p in ((14.18, -2.917, 0.0164, -0.08082), (1.0, -0.5, 0.1, -0.05)):
        x = np.arange(1, 31, dtype=float)
        y = two(x, *p) * (1 + 0.05 * rng.standard_normal(len(x)))
        fit, _ = optimize.curve_fit(two, x, y, p0=p, maxfev=100000)
        out["two_exp"].append({"x": x.tolist(), "y": y.tolist(), "true": list(p),
                               "params": [float(v) for v in fit],
                               "sse": float(((y - two(x, *fit)) ** 2).sum())})
    # db_bench's key access (key_dist_a 0.002312, key_dist_b 0.3467): seeds
    # drawn as its PowerCdfInversion does, accesses counted per seed.
    # Only keys seen at least 10 times are ranked (fit::MIN_COUNT): below
    # that, which key is hotter is the draw's luck. The counts are stored
    # as (count, keys with it) pairs.
    for a, b, n in ((0.002312, 0.3467, 1000000), (0.05, 0.6, 200000)):
        u = rng.uniform(0, 1, n)
        seeds = np.floor((u / a) ** (1 / b)).astype(np.int64)
        counts = np.sort(np.unique(seeds, return_counts=True)[1])[::-1]
        cum = np.cumsum(counts) / counts.sum()
        ranks = log_ranks(int((counts >= 10).sum()))
        r = stats.linregress(np.log(ranks), np.log(cum[np.array(ranks) - 1]))
        values, times = np.unique(counts, return_counts=True)
        out["power_cdf"].append({
            "counts": [[int(v), int(t)] for v, t in zip(values[::-1], times[::-1])],
            "true": [a, b], "a": float(np.exp(r.intercept)), "b": float(r.slope)})
    # Ranked shares no sum of two exponentials with scales of 0 or more
    # fits well (a shoulder, a concave fall): unbounded, the least squares
    # takes scales of opposite sign, so these hold the bounded fit to
    # curve_fit's with bounds, the best of several starts. No noise, so
    # the generator's stream above is unchanged.
    out["two_exp_bounded"] = []
    x = np.arange(1, 31, dtype=float)
    for y in (np.exp(-(x / 12.0) ** 2), 1.0 - (x / 31.0) ** 3):
        y = y / y.sum()
        best = None
        for p0 in ((0.1, -0.5, 0.01, -0.01), (0.05, -0.1, 0.05, -0.01), (1.0, -2.0, 0.05, 0.0),
                   (0.01, -0.05, 0.01, -0.2)):
            try:
                fit, _ = optimize.curve_fit(two, x, y, p0=p0, maxfev=100000,
                                            bounds=([0, -np.inf, 0, -np.inf], np.inf))
            except RuntimeError:
                continue
            sse = float(((y - two(x, *fit)) ** 2).sum())
            if best is None or sse < best[1]:
                best = (fit, sse)
        unbounded, _ = optimize.curve_fit(two, x, y, p0=(1.0, -0.1, -1.0, -0.12), maxfev=100000)
        out["two_exp_bounded"].append({
            "x": x.tolist(), "y": y.tolist(), "params": [float(v) for v in best[0]],
            "sse": best[1], "unbounded_params": [float(v) for v in unbounded],
            "unbounded_sse": float(((y - two(x, *unbounded)) ** 2).sum())})
    return out


def main():
    cases = series()
    hamed_rao = fixed_hamed_rao()
    golden = {
        "versions": {
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "pymannkendall": mk.__version__,
            "ruptures": rpt.__version__,
        },
        "normal": {
            "cdf": [[z, stats.norm.cdf(z)] for z in (-8.0, -3.0, -1.0, 0.0, 0.5, 1.96, 2.5, 4.0)],
            "sf": [[z, stats.norm.sf(z)] for z in (1.0, 3.0, 5.0, 8.0, 12.0)],
            "ppf": [[p, stats.norm.ppf(p)] for p in (1e-12, 1e-6, 0.001, 0.025, 0.3, 0.5, 0.9, 0.975, 0.995)],
        },
        "hamed_rao": [],
        "mann_kendall_ar1": [],
        "theil_sen": [],
        "pelt": [],
        "signed_rank": [],
        "fit": fits(),
    }
    rng = np.random.default_rng(7)
    for n, shift in ((6, 0.0), (10, 0.02), (15, 0.0), (20, 0.01), (25, 0.05)):
        d = shift + 0.03 * rng.standard_normal(n)
        walsh = [(d[i] + d[j]) / 2 for i in range(n) for j in range(i, n)]
        golden["signed_rank"].append({
            "d": d.tolist(),
            "p": float(stats.wilcoxon(d, zero_method="wilcox", method="exact").pvalue),
            "hodges_lehmann": float(np.median(walsh)),
        })
    for name, x in cases:
        r = hamed_rao(x, alpha=0.05)
        golden["hamed_rao"].append({
            "name": name, "x": x.tolist(), "alpha": 0.05,
            "s": float(r.s), "var_s": float(r.var_s), "z": float(r.z), "p": float(r.p),
            "tau": float(r.Tau), "slope": float(r.slope), "intercept": float(r.intercept),
        })
        if len(x) >= 3:
            golden["mann_kendall_ar1"].append({"name": name, "x": x.tolist(), **mann_kendall_ar1(x)})
        t = np.arange(len(x), dtype=float)
        ts = stats.theilslopes(x, t, 0.95)
        golden["theil_sen"].append({
            "name": name, "x": t.tolist(), "y": x.tolist(), "confidence": 0.95,
            "slope": float(ts[0]), "intercept": float(ts[1]),
            "low": float(ts[2]), "high": float(ts[3]),
        })
        if len(x) >= 20:
            for pen in (50.0, 500.0):
                bkps = rpt.Pelt(model="l2", min_size=2, jump=1).fit(x).predict(pen=pen)
                golden["pelt"].append({
                    "name": name, "signal": x.tolist(), "penalty": pen, "min_size": 2,
                    "ends": [int(b) for b in bkps],
                })
    json.dump(golden, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

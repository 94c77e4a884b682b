#!/usr/bin/env python3
"""How sure the parity rounds are: reads the table `scripts/dbbench-compare.sh
throughput` prints (a summary.txt) and gives, per benchmark, the median of
the per-round ratios ledgerbench / db_bench with its distribution-free 95%
interval (order statistics of the binomial), and the geometric mean with a
95% t interval on the log ratios (rounds are independent pairs).

    python3 scripts/dbbench-ratio-ci.py results/.../summary.txt
"""
import math
import re
import statistics as st
import sys

from scipy import stats

ROW = re.compile(r"^\| (\w+) \| (\d+) \| (\d+) \| ([\d.]+) \| ([\d., ]+) \|$")


def main(path):
    print("| benchmark | rounds | median ratio (95%) | geometric mean (95%) |")
    print("|---|---:|---|---|")
    for line in open(path):
        m = ROW.match(line.strip())
        if not m:
            continue
        r = sorted(float(x) for x in m.group(5).split(","))
        n = len(r)
        # The k-th smallest to the k-th largest hold the median with >= 95%.
        k = int(stats.binom.ppf(0.025, n, 0.5))
        logs = [math.log(x) for x in r]
        mean, se = st.mean(logs), st.stdev(logs) / math.sqrt(n)
        t = stats.t.ppf(0.975, n - 1)
        print(
            f"| {m.group(1)} | {n} | {st.median(r):.3f} ({r[k - 1]:.3f} to {r[n - k]:.3f}) "
            f"| {math.exp(mean):.3f} ({math.exp(mean - t * se):.3f} to {math.exp(mean + t * se):.3f}) |"
        )


if __name__ == "__main__":
    main(sys.argv[1])

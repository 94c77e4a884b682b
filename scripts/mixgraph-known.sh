#!/usr/bin/env bash
# Makes fixtures/mixgraph/{power,ranges}.trace: RocksDB query traces written by
# db_bench 7.8 (Debian's rocksdb-tools) running `mixgraph` with stated
# parameters, the known answers `ledgerbench fit` must recover
# (crates/cli/tests/fit_known.rs holds it to them, within the bands
# docs/src/fit.md states): keys by a power law, the n hottest of 3,000
# keys taking 0.0607 * n^0.35 of the accesses (key_dist_a * num^b = 1, so
# the law covers the key space; the wiki's 0.002312 and 0.3467 are for
# about 40 million keys); the example's value sizes (a Generalized
# Pareto, k 0.2615, sigma 25.45, raised to 10 bytes; db_bench draws a
# put's size from the number that chose the put, so the sizes are a
# slice of it: 10 to 39 bytes) and mix (85% gets, 14% puts, 1% seeks);
# 30,000 operations on an empty database, 16-byte keys; and ranges.trace,
# the same with keys by ranges of unequal hotness (below). The traces are
# kept as db_bench wrote them (1.4 MB each), so the test needs no
# decompressor.
#
# Usage: scripts/mixgraph-known.sh [OUT_DIR] (default fixtures/mixgraph)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-fixtures/mixgraph}
if ! command -v db_bench > /dev/null; then
    echo "mixgraph-known: installing rocksdb-tools (db_bench)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rocksdb-tools > /dev/null
fi
work=$(mktemp -d /var/tmp/ledgerbench-mixgraph.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
common=(--num=3000 --key_size=16 --compression_type=none --seed=42 --threads=1
    --histogram=0 --statistics=0 --benchmarks=mixgraph --reads=30000
    -value_k=0.2615 -value_sigma=25.45 -mix_get_ratio=0.85 -mix_put_ratio=0.14
    -mix_seek_ratio=0.01 -mix_max_value_size=1024 -iter_k=2.517 -iter_sigma=14.236)
trace() {
    local name=$1
    shift
    echo "== db_bench mixgraph ${*} -> $out/$name.trace"
    db_bench "${common[@]}" --db="$work/$name" "$@" --trace_file="$work/$name.trace" > "$work/$name.log" 2>&1
    tr '\r' '\n' < "$work/$name.log" | grep -E '^mixgraph +: .*micros/op' | sed "s/^ *//" > "$out/$name.db_bench.txt"
    mv "$work/$name.trace" "$out/$name.trace"
}
trace power -key_dist_a=0.0607 -key_dist_b=0.35
# Key ranges: db_bench's published hotness of 30 ranges (keyrange_dist_a
# to _d), the same power law within each (db_bench plays ranges only with
# a power law set). It spreads the ranges over 667 slots (the floor of
# 689 times each range's hotness), and draws one in 0..num per operation,
# taking its slot mod 667: 20,010 keys (30 ranges of 667) make every slot
# as likely, so each range's share is exactly its slots over 667.
trace ranges --num=20010 -key_dist_a=0.0607 -key_dist_b=0.35 -keyrange_num=30 \
    -keyrange_dist_a=14.18 -keyrange_dist_b=-2.917 -keyrange_dist_c=0.0164 -keyrange_dist_d=-0.08082
echo "== db_bench: $(db_bench --version 2>&1 | head -1)"
ls -l "$out"

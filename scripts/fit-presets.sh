#!/usr/bin/env bash
# Makes fixtures/models/: the workload models `run synth --preset` plays,
# each fitted by `ledgerbench fit` from a trace made here as below (what
# the fit found is printed into NAME.fit.txt beside the model):
#
#   mixgraph.toml  db_bench 7.8 (Debian's rocksdb-tools) `mixgraph` with
#                  RocksDB's published example parameters (the wiki's
#                  "Generating a Workload like Facebook's": key ranges
#                  14.18, -2.917, 0.0164, -0.08082 over 30 ranges, keys
#                  in a range by the power law 0.002312, 0.3467 (without
#                  one db_bench ignores its ranges and draws keys
#                  uniformly); values
#                  a Generalized Pareto, k 0.2615, sigma 25.45; 85% gets,
#                  14% puts, 1% seeks of 10 entries), 1,000,000 operations
#                  over 1,000,000 keys of 48 bytes, traced on a database
#                  filled first (its fill is not in the model: the keys
#                  read before written are its initial state);
#   stellar.toml   `ledgerbench record stellar --preset quick`;
#   solana.toml    `ledgerbench record solana` (range purges, 8 slots in
#                  flight, 2% repairs).
#
#   scripts/fit-presets.sh LEDGERBENCH_BINARY [OUT_DIR]
#
# OUT_DIR defaults to fixtures/models; a model there is replaced only by
# this script (fit itself never replaces a file). The work directory
# (a new /var/tmp/ledgerbench-fit-presets.XXXXXX, about 1.5 GB) is removed
# at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: scripts/fit-presets.sh LEDGERBENCH_BINARY [OUT_DIR]}
out=${2:-fixtures/models}
if ! command -v db_bench > /dev/null; then
    echo "fit-presets: installing rocksdb-tools (db_bench)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rocksdb-tools > /dev/null
fi
work=$(mktemp -d /var/tmp/ledgerbench-fit-presets.XXXXXX)
mkdir -p "$out"
trap 'rm -rf "$work"' EXIT

fit() {
    local name=$1
    shift
    rm -f "$work/$name.toml"
    "$bin" fit "$@" --out "$work/$name.toml" | tee "$out/$name.fit.txt"
    mv "$work/$name.toml" "$out/$name.toml"
}

common=(--db="$work/db" --num=1000000 --key_size=48 --value_size=100
    --compression_type=none --seed=42 --threads=1 --histogram=0 --statistics=0)
echo "== db_bench fillrandom (untraced: the database mixgraph reads)"
db_bench "${common[@]}" --benchmarks=fillrandom > "$work/fill.log" 2>&1
echo "== db_bench mixgraph, traced"
db_bench "${common[@]}" --use_existing_db=1 --benchmarks=mixgraph --reads=1000000 \
    -keyrange_dist_a=14.18 -keyrange_dist_b=-2.917 -keyrange_dist_c=0.0164 \
    -keyrange_dist_d=-0.08082 -keyrange_num=30 -key_dist_a=0.002312 -key_dist_b=0.3467 \
    -value_k=0.2615 -value_sigma=25.45 \
    -iter_k=2.517 -iter_sigma=14.236 -mix_get_ratio=0.85 -mix_put_ratio=0.14 \
    -mix_seek_ratio=0.01 -mix_max_value_size=1024 \
    --trace_file="$work/mixgraph.trace" > "$work/mixgraph.log" 2>&1
rm -rf "$work/db"
fit mixgraph "$work/mixgraph.trace" --scan-length 10

echo "== ledgerbench record stellar --preset quick"
"$bin" record stellar --preset quick --out "$work/stellar.kvtrace" > /dev/null
fit stellar "$work/stellar.kvtrace"

echo "== ledgerbench record solana"
"$bin" record solana --param retention='"range"' --param purge_every=100 \
    --param in_flight=8 --param repair_fraction=0.02 --out "$work/solana.kvtrace" > /dev/null
fit solana "$work/solana.kvtrace"
echo "== db_bench: $(db_bench --version 2>&1 | head -1); models in $out"
ls -l "$out"

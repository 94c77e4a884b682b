#!/usr/bin/env bash
# Makes fixtures/rocksdb-trace/: RocksDB query traces written by Debian's
# db_bench 7.8 (an independent RocksDB build), one file per benchmark in
# the order run on one database, and that database's final content dumped
# by `ldb scan --hex`. The import tests replay the traces on every engine
# and compare each engine's final content with the dump.
#
# db_bench starts a trace at the start of each benchmark and truncates the
# trace file, so each benchmark is its own invocation with its own file.
#
# Usage: scripts/rocksdb-trace-fixtures.sh [OUT_DIR] (default fixtures/rocksdb-trace)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-fixtures/rocksdb-trace}
if ! command -v db_bench > /dev/null || ! command -v ldb > /dev/null; then
    echo "rocksdb-trace-fixtures: installing rocksdb-tools (db_bench, ldb)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rocksdb-tools > /dev/null
fi
work=$(mktemp -d /var/tmp/ledgerbench-rtrace.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
db="$work/db"
# 16-byte keys, 100-byte values, no compression: small files, every kind of record.
common=(--db="$db" --num=2000 --key_size=16 --value_size=100 --compression_type=none
    --seed=42 --threads=1 --histogram=0 --statistics=0)
run() {
    local name=$1
    shift
    echo "== db_bench ${*} --trace_file=$out/$name.trace"
    db_bench "${common[@]}" "$@" --trace_file="$out/$name.trace" > "$work/$name.log" 2>&1
    # db_bench's own result line (its progress lines end in carriage returns).
    tr '\r' '\n' < "$work/$name.log" | grep -E '^[a-z]+ +: .*micros/op' | sed "s/^ *//" | tee -a "$out/db_bench.txt"
}
rm -f "$out/db_bench.txt"
run 1-fillrandom --benchmarks=fillrandom
run 2-overwrite --benchmarks=overwrite --use_existing_db=1 --writes=1000
run 3-deleterandom --benchmarks=deleterandom --use_existing_db=1 --deletes=600
run 4-readrandom --benchmarks=readrandom --use_existing_db=1 --reads=2000
run 5-seekrandom --benchmarks=seekrandom --use_existing_db=1 --reads=300 --seek_nexts=10
# mixgraph with the key-range, value-size and mix parameters of RocksDB's
# own example (the wiki's "Generating a Workload like Facebook's"),
# at fixture scale.
run 6-mixgraph --benchmarks=mixgraph --use_existing_db=1 --reads=3000 \
    -keyrange_dist_a=14.18 -keyrange_dist_b=-2.917 -keyrange_dist_c=0.0164 \
    -keyrange_dist_d=-0.08082 -keyrange_num=30 -value_k=0.2615 -value_sigma=25.45 \
    -iter_k=2.517 -iter_sigma=14.236 -mix_get_ratio=0.85 -mix_put_ratio=0.14 \
    -mix_seek_ratio=0.01 -mix_max_value_size=1024
ldb --db="$db" scan --hex > "$out/final.scan"
echo "== $(wc -l < "$out/final.scan") keys in $out/final.scan; db_bench: $(db_bench --version 2>&1 | head -1)"
ls -l "$out"

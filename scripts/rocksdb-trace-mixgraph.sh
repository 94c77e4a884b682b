#!/usr/bin/env bash
# A benchmark, not a test (#45's published run): db_bench 7.8 (Debian's
# rocksdb-tools) fills 1,000,000 keys and runs RocksDB's mixgraph example
# (1,000,000 operations), tracing both; `ledgerbench import rocksdb-trace`
# makes one ledgerbench trace of the two, replayed on six engines under one
# memory limit; then a 1 GB fillrandom trace is imported under
# /usr/bin/time for the import's memory.
#   scripts/rocksdb-trace-mixgraph.sh LEDGERBENCH_BINARY RESULTS_DIR [WORK_DIR]
# WORK_DIR (default /var/tmp/lb-rtrace) holds the traces and db_bench's
# database, about 3 GB; the script removes what it made there first.
set -u
B=${1:?give the ledgerbench binary: a release build of a clean commit}
R=${2:?give a new results directory}
W=${3:-/var/tmp/lb-rtrace}
[[ ! -e $R ]] || { echo "rocksdb-trace-mixgraph: $R exists; name a new directory" >&2; exit 2; }
command -v db_bench > /dev/null || { echo "rocksdb-trace-mixgraph: db_bench not found (apt install rocksdb-tools)" >&2; exit 2; }
mkdir -p "$R" "$W"
step() { echo "== $(date -u +%FT%TZ) start $1" >&2; shift; "$@"; local rc=$?; echo "== $(date -u +%FT%TZ) rc $rc" >&2; }
rm -rf "$W/db" "$W"/*.trace "$W"/*.kvtrace
common=(--db="$W/db" --num=1000000 --key_size=48 --value_size=100 --compression_type=none --seed=42 --threads=1)
step fill db_bench "${common[@]}" --benchmarks=fillrandom --trace_file="$W/1-fillrandom.trace"
step mixgraph db_bench "${common[@]}" --use_existing_db=1 --benchmarks=mixgraph --reads=1000000 --trace_file="$W/2-mixgraph.trace" \
    -keyrange_dist_a=14.18 -keyrange_dist_b=-2.917 -keyrange_dist_c=0.0164 \
    -keyrange_dist_d=-0.08082 -keyrange_num=30 -value_k=0.2615 -value_sigma=25.45 \
    -iter_k=2.517 -iter_sigma=14.236 -mix_get_ratio=0.85 -mix_put_ratio=0.14 \
    -mix_seek_ratio=0.01 -mix_max_value_size=1024
step import "$B" import rocksdb-trace "$W/1-fillrandom.trace" "$W/2-mixgraph.trace" --scan-length 10 --out "$W/mixgraph.kvtrace" > "$R/import-mixgraph.json" 2> "$R/import-mixgraph.txt"
step replay "$B" run replay "$W/mixgraph.kvtrace" --backends rocksdb-leveled,rocksdb-fifo,lmdb,mdbx,pebble,fjall --memory-limit 128MiB --out "$R/mixgraph"
rm -rf "$W/db"
step fill1g db_bench --db="$W/db" --num=1000000 --key_size=16 --value_size=1000 --compression_type=none --seed=7 --threads=1 --benchmarks=fillrandom --trace_file="$W/fill-1g.trace"
step import1g /usr/bin/time -v "$B" import rocksdb-trace "$W/fill-1g.trace" --out "$W/fill-1g.kvtrace" > "$R/import-1gb.json" 2> "$R/import-1gb.txt"
rm -rf "$W/db"
echo "== all done $(date -u +%FT%TZ)" >&2

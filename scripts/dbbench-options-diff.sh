#!/usr/bin/env bash
# What each tool's RocksDB was told, side by side: the OPTIONS file RocksDB
# writes when it opens a store, from db_bench 11.8.1 with
# scripts/dbbench-throughput.sh's options and from `ledgerbench run micro`
# on rocksdb-leveled at --engine-memory 128MiB, then a sorted diff of the
# two (comments dropped; section headers are the same in both).
#   scripts/dbbench-options-diff.sh LEDGERBENCH_BINARY OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:?give the ledgerbench binary}
OUT=${2:?give a new directory for the two OPTIONS files and their diff}
[[ ! -e $OUT ]] || { echo "dbbench-options-diff: $OUT exists; name a new directory" >&2; exit 2; }
DB_BENCH=${LEDGERBENCH_DB_BENCH:-$(scripts/build-dbbench.sh)}
NUM=200000
THREADS=1
work=$(mktemp -d /var/tmp/ledgerbench-options.XXXXXX)
trap 'kill %1 2> /dev/null || true; wait || true; rm -rf "$work"' EXIT
# The throughput script's options, read from it so the two cannot drift.
eval "$(sed -n '/^DBB_OPTS=(/,/cache_type=lru_cache --seed=42)/p' scripts/dbbench-throughput.sh)"
"$DB_BENCH" "${DBB_OPTS[@]}" --db="$work/dbb" --benchmarks=fillrandom > "$work/dbb.log" 2>&1
# ledgerbench removes its store when the run ends: copy the OPTIONS file
# while a long fill runs, then stop it.
"$B" run micro --backends rocksdb-leveled --benchmarks fillrandom --num 20000000 \
    --engine-memory 128MiB --device none --out "$work/lb" > "$work/lb.log" 2>&1 &
f=""
for _ in $(seq 1 100); do
    f=$(find "$work/lb" -name 'OPTIONS-*' 2> /dev/null | head -1 || true)
    [[ -n "$f" ]] && break
    sleep 0.2
done
[[ -n "$f" ]] || { echo "dbbench-options-diff: ledgerbench wrote no OPTIONS file" >&2; cat "$work/lb.log" >&2; exit 2; }
mkdir -p "$OUT"
cp "$work"/dbb/OPTIONS-* "$OUT/db_bench-OPTIONS"
cp "$f" "$OUT/ledgerbench-OPTIONS"
options() { grep -v '^ *#' "$1" | sed 's/^ *//' | sort; }
diff <(options "$OUT/db_bench-OPTIONS") <(options "$OUT/ledgerbench-OPTIONS") > "$OUT/sorted.diff" || true
cat "$OUT/sorted.diff"

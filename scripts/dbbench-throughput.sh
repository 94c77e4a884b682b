#!/usr/bin/env bash
# A benchmark, not a test: `scripts/dbbench-compare.sh throughput [NUM] [THREADS]`.
# db_bench's fillrandom, overwrite and readrandom in RocksDB's own db_bench
# built from the very RocksDB the rocksdb backends link (11.8.1, from the
# librocksdb-sys crate's sources: scripts/build-dbbench.sh, built once and
# cached) and in `ledgerbench run micro` on rocksdb-leveled at
# --engine-memory 128MiB, durability `process`, with every option the
# backend sets given to db_bench; each tool on its own ext4 image on a loop
# device; THREADS threads in every benchmark of both, each writing or
# reading NUM. Prints ops/s of each and ledgerbench / db_bench: what the
# Rust binding and the harness cost. Needs root (loop devices).
set -euo pipefail
cd "$(dirname "$0")/.."
NUM=${1:-1000000}
THREADS=${2:-1}
[[ $EUID -eq 0 ]] || { echo "dbbench-throughput: needs root (loop devices)" >&2; exit 2; }
[[ "$NUM" =~ ^[0-9]+$ && "$NUM" -gt 0 ]] || { echo "dbbench-throughput: NUM is a positive count, not $NUM" >&2; exit 2; }
[[ "$THREADS" =~ ^[0-9]+$ && "$THREADS" -gt 0 ]] || { echo "dbbench-throughput: THREADS is a positive count, not $THREADS" >&2; exit 2; }
# $LEDGERBENCH_DB_BENCH names another db_bench (Debian's rocksdb-tools is
# RocksDB 7.8: a comparison with it measures two RocksDB versions too).
DB_BENCH=${LEDGERBENCH_DB_BENCH:-$(scripts/build-dbbench.sh)}
# $LEDGERBENCH_BIN names a ledgerbench binary (a published run's copy of a
# clean commit's build); by default the workspace's, built first.
if [[ -n "${LEDGERBENCH_BIN:-}" ]]; then
    BIN=$LEDGERBENCH_BIN
else
    cargo build --release --workspace --locked --quiet
    source scripts/bin.sh
    BIN="$(ledgerbench_bin)"
fi
# OUT (optional): a new directory that keeps both tools' logs and
# ledgerbench's results.
OUT=${3:-}
if [[ -n "$OUT" ]]; then
    [[ ! -e "$OUT" ]] || { echo "dbbench-throughput: $OUT exists; name a new directory" >&2; exit 2; }
    mkdir -p "$OUT"
fi

work=$(mktemp -d /var/tmp/ledgerbench-dbbench.XXXXXX)
dev=""
cleanup() {
    mountpoint -q "$work/mnt" && umount "$work/mnt"
    [[ -n "$dev" ]] && losetup -d "$dev" 2> /dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# rocksdb-leveled at --engine-memory 128MiB (crates/rocksdb: scale_memory
# and RocksConfig::default), spelled out for db_bench, whose own defaults
# differ from the library's in places; statistics on, as the backend keeps
# them for its counters (a timer and a histogram record per operation).
DBB_OPTS=(--key_size=16 --value_size=100 --num="$NUM" --reads="$NUM" --threads="$THREADS"
    --batch_size=1 --compression_type=none --compaction_style=0 --disable_auto_compactions=0
    --write_buffer_size=$(((128 << 20) / 6)) --max_write_buffer_number=6
    --level0_file_num_compaction_trigger=50 --max_background_jobs=4 --open_files=5000
    --cache_size=$((32 << 20)) --cache_high_pri_pool_ratio=0.5 --block_size=4096 --bloom_bits=10
    --optimize_filters_for_memory=1 --level_compaction_dynamic_level_bytes=1
    --compaction_readahead_size=2097152 --enable_pipelined_write=0 --delayed_write_rate=16777216
    --hard_pending_compaction_bytes_limit=274877906944 --disable_wal=0 --sync=0 --use_fsync=0
    --use_direct_reads=0 --use_direct_io_for_flush_and_compaction=0 --statistics=1 --seed=42)

echo "== db_bench $("$DB_BENCH" --version 2> /dev/null | head -1 || true) ($DB_BENCH): fillrandom,overwrite,readrandom, --num $NUM, --threads $THREADS"
truncate -s $((NUM * 116 * (6 + 2 * THREADS) + (1 << 30))) "$work/img"
dev=$(losetup --find --show --direct-io=on "$work/img")
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0,nodiscard "$dev"
mkdir "$work/mnt" && mount -o noatime "$dev" "$work/mnt"
# One process and one open store, as ledgerbench's run: the reads see
# what the writes left (memtables, files, compactions under way), not a
# store reopened. Within a process db_bench seeds each benchmark's threads
# apart, so readrandom reads an independent random sequence.
"$DB_BENCH" "${DBB_OPTS[@]}" --db="$work/mnt/db" --benchmarks=fillrandom,overwrite,readrandom > "$work/dbb.log" 2>&1
umount "$work/mnt"; losetup -d "$dev"; dev=""
grep -hE "^(fillrandom|overwrite|readrandom) " "$work/dbb.log"
# db_bench 7.8 prints `N ops/sec S seconds ...;`, later versions `N ops/sec;`.
dbb() { grep -hE "^$1 " "$work/dbb.log" | awk '{for (i = 1; i < NF; i++) if ($(i + 1) ~ /^ops\/sec;?$/) print $i}'; }

echo "== ledgerbench run micro (rocksdb-leveled)"
"$BIN" run micro --backends rocksdb-leveled --benchmarks fillrandom,overwrite,readrandom \
    --num "$NUM" --threads "$THREADS" --engine-memory 128MiB --out "$work/kv" > "$work/kv.log" 2>&1 \
    || { cat "$work/kv.log"; exit 2; }
kv() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"][0]; print([b for b in r["benchmarks"] if b["name"]==sys.argv[2]][0]["ops_per_sec"])' "$work/kv/results.json" "$1"; }
grep -E "^\[rocksdb-leveled\] (fillrandom|overwrite|readrandom) " "$work/kv.log" || true

echo
echo "| --num $NUM, --threads $THREADS | db_bench ops/s | ledgerbench ops/s | ledgerbench / db_bench |"
echo "|---|---:|---:|---:|"
for b in fillrandom overwrite readrandom; do
    d=$(dbb "$b"); k=$(kv "$b")
    awk -v b="$b" -v d="$d" -v k="$k" 'BEGIN{ printf "| %s | %.0f | %.0f | %s |\n", b, d, k, (d > 0 ? sprintf("%.3f", k / d) : "n/a") }'
done
if [[ -n "$OUT" ]]; then
    cp "$work"/dbb.log "$work"/kv.log "$OUT"/
    cp -r "$work/kv" "$OUT/ledgerbench"
    rm -rf "$OUT/ledgerbench/stores"
    echo "kept in $OUT"
fi

#!/usr/bin/env bash
# A measurement, not a test: instructions per operation of RocksDB's own
# db_bench 11.8.1 (scripts/build-dbbench.sh) and of `ledgerbench run
# micro` on rocksdb-leveled with the same options (scripts/dbbench-options.sh),
# counted by valgrind's callgrind. A count, not a time: the same whatever
# else the machine does, where the ops/s rounds of `dbbench-compare.sh
# throughput` swing by 20% either way on a 2-vCPU VM, on tmpfs as on a disk.
#
#   scripts/dbbench-instructions.sh [NUM] [THREADS] [OUT]
#
# Each tool runs four times, THREADS threads (default 1), each on a new
# tmpfs: fillrandom of one key a thread (start-up and shutdown), fillrandom
# of NUM a thread (default 100000), then also overwrite, then also
# readrandom. A benchmark's instructions per operation are the difference
# between two of the runs over NUM x THREADS. Every
# thread of every process is counted (ledgerbench's supervisor and worker,
# and RocksDB's flushes and compactions, the same work in both tools).
# Under callgrind a run is about 50x slower: a few minutes in all at the
# default NUM. OUT (optional, a new directory) keeps the logs, the totals
# and each process's costliest functions (callgrind_annotate).
# $LEDGERBENCH_BIN names the ledgerbench binary (default: the workspace's
# release build); needs root (tmpfs) and valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
NUM=${1:-100000}
THREADS=${2:-1}
OUT=${3:-}
[[ "$THREADS" =~ ^[0-9]+$ && "$THREADS" -gt 0 ]] || { echo "dbbench-instructions: THREADS is a positive count, not $THREADS" >&2; exit 2; }
[[ "$NUM" =~ ^[0-9]+$ && "$NUM" -gt 1 ]] || { echo "dbbench-instructions: NUM is a count above 1, not $NUM" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "dbbench-instructions: needs root (a tmpfs per run)" >&2; exit 2; }
command -v valgrind > /dev/null || { echo "dbbench-instructions: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
if [[ -n "$OUT" ]]; then
    [[ ! -e "$OUT" ]] || { echo "dbbench-instructions: $OUT exists; name a new directory" >&2; exit 2; }
fi
# shellcheck source=scripts/dbbench-options.sh
source scripts/dbbench-options.sh
dbbench_tools

work=$(mktemp -d /var/tmp/ledgerbench-instructions.XXXXXX)
cleanup() {
    mountpoint -q "$work/mnt" && umount "$work/mnt"
    rm -rf "$work"
}
trap cleanup EXIT
# A signal ends the script through its EXIT trap once the command it waits
# on ends (bash runs no EXIT trap on a signal it does not trap): no tmpfs,
# loop device or image left behind. Ctrl-C stops that command too.
trap 'exit 130' INT
trap 'exit 143' TERM

# One run under callgrind on a new tmpfs; prints its instructions (every
# process and thread).
counted() {
    local name=$1 tool=$2 num=$3 benchmarks=$4
    mkdir -p "$work/mnt" "$work/$name"
    mount -t tmpfs -o size=2g ledgerbench-instructions "$work/mnt"
    local vg=(valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$work/$name/callgrind.%p")
    if [[ "$tool" == db_bench ]]; then
        dbbench_opts "$num" "$THREADS"
        "${vg[@]}" "$DB_BENCH" "${DBB_OPTS[@]}" --db="$work/mnt/db" --benchmarks="$benchmarks" > "$work/$name/log" 2>&1
    else
        "${vg[@]}" "$BIN" run micro --backends rocksdb-leveled --benchmarks "$benchmarks" --num "$num" --threads "$THREADS" \
            --engine-memory 128MiB --device none --out "$work/mnt/ledgerbench" > "$work/$name/log" 2>&1
    fi
    umount "$work/mnt"
    # callgrind's last line of a profile: `totals: <instructions>`.
    cat "$work/$name"/callgrind.* | awk '/^totals:/ { n += $2 } END { printf "%.0f\n", n }'
}

echo "== instructions per operation, --num $NUM, --threads $THREADS, callgrind; db_bench $("$DB_BENCH" --version 2> /dev/null | head -1 || true), ledgerbench $BIN"
declare -A ir
for tool in db_bench ledgerbench; do
    ir[$tool,base]=$(counted "$tool-base" "$tool" 1 fillrandom)
    ir[$tool,f]=$(counted "$tool-f" "$tool" "$NUM" fillrandom)
    ir[$tool,fo]=$(counted "$tool-fo" "$tool" "$NUM" fillrandom,overwrite)
    ir[$tool,for]=$(counted "$tool-for" "$tool" "$NUM" fillrandom,overwrite,readrandom)
    echo "$tool: ${ir[$tool,base]} / ${ir[$tool,f]} / ${ir[$tool,fo]} / ${ir[$tool,for]} instructions (one key; fill; +overwrite; +readrandom)"
done
echo
echo "| benchmark | db_bench instructions / op | ledgerbench instructions / op | ledgerbench / db_bench |"
echo "|---|---:|---:|---:|"
for b in fillrandom overwrite readrandom; do
    row="| $b"
    declare -A per
    for tool in db_bench ledgerbench; do
        case $b in
        fillrandom) d=$((ir[$tool,f] - ir[$tool,base])) ;;
        overwrite) d=$((ir[$tool,fo] - ir[$tool,f])) ;;
        readrandom) d=$((ir[$tool,for] - ir[$tool,fo])) ;;
        esac
        per[$tool]=$((d / (NUM * THREADS)))
        row+=" | ${per[$tool]}"
    done
    echo "$row | $(awk -v a="${per[ledgerbench]}" -v b="${per[db_bench]}" 'BEGIN { printf "%.3f", a / b }') |"
done
if [[ -n "$OUT" ]]; then
    mkdir -p "$OUT"
    for d in "$work"/*/; do
        n=$(basename "$d")
        [[ "$n" == mnt ]] && continue
        mkdir -p "$OUT/$n" && cp "$d/log" "$OUT/$n/"
        grep -h '^totals:' "$d"/callgrind.* > "$OUT/$n/totals.txt" || true
        # Where the instructions went: each process's 40 costliest functions.
        for f in "$d"/callgrind.*; do
            callgrind_annotate "$f" 2> /dev/null | head -60 > "$OUT/$n/top-${f##*.}.txt" || true
        done
    done
    echo "kept in $OUT"
fi

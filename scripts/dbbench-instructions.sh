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
#
# LOOP=readrandom (environment) counts the read loop alone instead, at
# any NUM (a difference of two runs would count the fill again): each
# tool fills, overwrites and reads once, callgrind collecting only inside
# its read loop (db_bench's Benchmark::ReadRandom, ledgerbench's
# micro::read_random; each thread's own calls, the loop's key, clock and
# histogram included in both) with its cache simulation on: instructions,
# first-level data misses and last-level misses per GET. READS
# (environment; default NUM) GETs a thread: the same state read for
# less (the fill and overwrite run instrumented, 20-30x slower than
# alone; the read loop simulated, about 100x).
set -euo pipefail
cd "$(dirname "$0")/.."
NUM=${1:-100000}
THREADS=${2:-1}
OUT=${3:-}
LOOP=${LOOP:-}
READS=${READS:-$NUM}
[[ "$READS" =~ ^[0-9]+$ && "$READS" -gt 0 ]] || { echo "dbbench-instructions: READS is a positive count, not $READS" >&2; exit 2; }
[[ -z "$LOOP" || "$LOOP" == readrandom ]] || { echo "dbbench-instructions: LOOP is readrandom or unset, not $LOOP" >&2; exit 2; }
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
    mount -t tmpfs -o size="$(((num * THREADS * 116 * 8 >> 20) + 2048))m" ledgerbench-instructions "$work/mnt"
    local vg=(valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$work/$name/callgrind.%p")
    local reads=$num
    if [[ -n "$LOOP" ]]; then
        reads=$READS
        local loop='ledgerbench_driver::micro::read_random'
        [[ "$tool" == db_bench ]] && loop='rocksdb::Benchmark::ReadRandom(*'
        vg+=(--collect-atstart=no "--toggle-collect=$loop" --cache-sim=yes)
    fi
    if [[ "$tool" == db_bench ]]; then
        dbbench_opts "$num" "$THREADS"
        "${vg[@]}" "$DB_BENCH" "${DBB_OPTS[@]}" --reads="$reads" --db="$work/mnt/db" --benchmarks="$benchmarks" > "$work/$name/log" 2>&1
    else
        "${vg[@]}" "$BIN" run micro --backends rocksdb-leveled --benchmarks "$benchmarks" --num "$num" --reads "$reads" --threads "$THREADS" \
            --engine-memory 128MiB --device none --out "$work/mnt/ledgerbench" > "$work/$name/log" 2>&1
    fi
    umount "$work/mnt"
    # callgrind's last line of a profile: `totals: <instructions>`.
    cat "$work/$name"/callgrind.* | awk '/^totals:/ { n += $2 } END { printf "%.0f\n", n }'
}

# Every event callgrind counted in run $1, summed over its processes, as
# `NAME=COUNT` words (Ir, D1mr, DLmr and the rest of its `events:` line).
events() {
    awk '/^events:/ { for (i = 2; i <= NF; i++) name[i] = $i }
        /^totals:/ { for (i = 2; i <= NF; i++) n[name[i]] += $i }
        END { for (e in n) printf "%s=%.0f ", e, n[e]; print "" }' "$work/$1"/callgrind.*
}

# LOOP: one run a tool, the read loop's events per GET.
read_loop() {
    echo "== the read loop alone (callgrind, cache simulation), --num $NUM, --reads $READS, --threads $THREADS; db_bench $("$DB_BENCH" --version 2> /dev/null | head -1 || true), ledgerbench $BIN"
    echo "| tool | GETs | instructions / GET | data reads / GET | D1 misses / GET | last-level misses / GET |"
    echo "|---|---:|---:|---:|---:|---:|"
    for tool in db_bench ledgerbench; do
        # Nothing collected: the loop's function was not entered by name
        # (renamed, or inlined into its caller), so every count would be 0.
        local ir
        ir=$(counted "$tool-loop" "$tool" "$NUM" fillrandom,overwrite,readrandom)
        if [[ "$ir" == 0 ]]; then
            echo "dbbench-instructions: callgrind counted nothing in $tool's read loop: its function was renamed or inlined (see counted() in this script)" >&2
            exit 1
        fi
        events "$tool-loop" | awk -v tool="$tool" -v gets="$((READS * THREADS))" '{
            for (i = 1; i <= NF; i++) { split($i, kv, "="); n[kv[1]] = kv[2] }
            printf "| %s | %d | %.0f | %.0f | %.1f | %.2f |\n", tool, gets, n["Ir"] / gets, n["Dr"] / gets,
                (n["D1mr"] + n["D1mw"]) / gets, (n["DLmr"] + n["DLmw"]) / gets }'
    done
}

# Four runs a tool; a benchmark's instructions per operation are the
# difference of two.
by_difference() {
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
}

if [[ -n "$LOOP" ]]; then read_loop; else by_difference; fi
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
            # The read loop: where its instructions went, callees included.
            if [[ -n "$LOOP" ]]; then
                callgrind_annotate --inclusive=yes "$f" 2> /dev/null | head -80 > "$OUT/$n/inclusive-${f##*.}.txt" || true
            fi
        done
    done
    echo "kept in $OUT"
fi

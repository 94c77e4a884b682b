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
# shellcheck source=scripts/dbbench-options.sh
source scripts/dbbench-options.sh
dbbench_tools
# OUT (optional): a new directory that keeps both tools' logs and
# ledgerbench's results; ROUNDS (default 4): pairs of runs, each tool first
# in every other round; FS (default loop): where both tools' stores live,
# `loop` (a new ext4 image on a loop device, on this machine's disk) or
# `tmpfs` (a new tmpfs of the same size: no device at all, so what is left
# between the tools is their own CPU path, not the disk's noise).
OUT=${3:-}
ROUNDS=${4:-4}
FS=${5:-loop}
# BENCHES (environment; default fillrandom,overwrite,readrandom): which of
# the three each tool runs, in that order. SCHED=1 (environment) runs each
# tool under scripts/schedstat.py and prints, over the rounds, where each
# tool's threads spent their time: on a CPU, queued for one, or asleep.
BENCHES=${BENCHES:-fillrandom,overwrite,readrandom}
SCHED=${SCHED:-0}
[[ "$BENCHES" =~ ^(fillrandom|overwrite|readrandom)(,(fillrandom|overwrite|readrandom))*$ ]] \
    || { echo "dbbench-throughput: BENCHES lists fillrandom, overwrite, readrandom, not $BENCHES" >&2; exit 2; }
[[ "$SCHED" == 0 || "$SCHED" == 1 ]] || { echo "dbbench-throughput: SCHED is 0 or 1, not $SCHED" >&2; exit 2; }
[[ "$ROUNDS" =~ ^[0-9]+$ && "$ROUNDS" -gt 0 ]] || { echo "dbbench-throughput: ROUNDS is a positive count, not $ROUNDS" >&2; exit 2; }
[[ "$FS" == loop || "$FS" == tmpfs ]] || { echo "dbbench-throughput: FS is loop or tmpfs, not $FS" >&2; exit 2; }
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
# A signal ends the script through its EXIT trap once the command it waits
# on ends (bash runs no EXIT trap on a signal it does not trap): no tmpfs,
# loop device or image left behind. Ctrl-C stops that command too.
trap 'exit 130' INT
trap 'exit 143' TERM

dbbench_opts "$NUM" "$THREADS"

echo "== db_bench $("$DB_BENCH" --version 2> /dev/null | head -1 || true) ($DB_BENCH) and ledgerbench ($BIN): $BENCHES, --num $NUM, --threads $THREADS, $ROUNDS rounds, stores on $FS"
# One round: both tools, each on a new store and device; odd rounds run
# db_bench first, even rounds ledgerbench first, so whatever the first run
# leaves the second (writeback, the host's caches) falls on each tool
# alike. A single pair of runs differs by 10-30% on reads right after a
# write burst whichever tool runs them: use at least 4 rounds.
# Both tools on one device setup: a new ext4 image of the same size on a
# loop device (direct IO to the image), made here; ledgerbench writes there
# with --device none rather than making a device of its own.
new_fs() {
    local mib=$(((NUM * 116 * (6 + 2 * THREADS) >> 20) + 1024))
    if [[ "$FS" == tmpfs ]]; then
        mkdir -p "$work/mnt" && mount -t tmpfs -o size="${mib}m" ledgerbench-parity "$work/mnt"
        return
    fi
    truncate -s "${mib}M" "$work/img"
    dev=$(losetup --find --show --direct-io=on "$work/img")
    mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0,nodiscard "$dev"
    mkdir -p "$work/mnt" && mount -o noatime "$dev" "$work/mnt"
}
drop_fs() {
    umount "$work/mnt"
    [[ -n "$dev" ]] && losetup -d "$dev"
    dev=""; rm -f "$work/img"
}
# The command prefix that runs a tool under scripts/schedstat.py, writing
# its rows to $1; nothing when SCHED is 0. (Paths here have no spaces.)
sched() {
    [[ "$SCHED" == 1 ]] && echo "python3 scripts/schedstat.py --json $1 --"
    return 0
}
dbbench_round() {
    local rd=$1
    new_fs
    # One process and one open store, as ledgerbench's run: the reads see
    # what the writes left (memtables, files, compactions under way), not
    # a store reopened. Within a process db_bench seeds each benchmark's
    # threads apart, so readrandom reads an independent random sequence.
    # shellcheck disable=SC2046 # the prefix is words, or none
    $(sched "$rd/sched-dbb.json") "$DB_BENCH" "${DBB_OPTS[@]}" --db="$work/mnt/db" --benchmarks="$BENCHES" > "$rd/dbb.log" 2>&1
    drop_fs
}
ledgerbench_round() {
    local rd=$1
    new_fs
    # shellcheck disable=SC2046 # the prefix is words, or none
    $(sched "$rd/sched-kv.json") "$BIN" run micro --backends rocksdb-leveled --benchmarks "$BENCHES" \
        --num "$NUM" --threads "$THREADS" --engine-memory 128MiB --device none --out "$work/mnt/ledgerbench" > "$rd/kv.log" 2>&1 \
        || { cat "$rd/kv.log"; exit 2; }
    mkdir -p "$rd/ledgerbench" && cp "$work/mnt/ledgerbench/results.json" "$rd/ledgerbench/"
    drop_fs
}
for r in $(seq 1 "$ROUNDS"); do
    rd="$work/round-$r"
    mkdir -p "$rd"
    if (( r % 2 == 1 )); then
        dbbench_round "$rd"; ledgerbench_round "$rd"
    else
        ledgerbench_round "$rd"; dbbench_round "$rd"
    fi
    echo "round $r:"
    grep -hE "^(fillrandom|overwrite|readrandom) " "$rd/dbb.log" | sed 's/^/  db_bench    /'
    grep -hE "^\[rocksdb-leveled\] (fillrandom|overwrite|readrandom) " "$rd/kv.log" | sed 's/^\[rocksdb-leveled\] /  ledgerbench /'
done

echo
# Medians over the rounds, and the spread of the per-round ratios.
python3 - "$work" "$ROUNDS" "$NUM" "$THREADS" "$BENCHES" "$SCHED" <<'PY'
import json, re, statistics, sys
work, rounds, num, threads = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
benches, sched = sys.argv[5].split(","), sys.argv[6] == "1"
print(f"| --num {num}, --threads {threads}, {rounds} rounds | db_bench ops/s (median) | ledgerbench ops/s (median) | ledgerbench / db_bench (median) | per round |")
print("|---|---:|---:|---:|---|")
for b in benches:
    d, k = [], []
    for r in range(1, rounds + 1):
        log = open(f"{work}/round-{r}/dbb.log").read()
        d.append(float(re.search(rf"^{b} .*? ([0-9]+) ops/sec", log, re.M).group(1)))
        runs = json.load(open(f"{work}/round-{r}/ledgerbench/results.json"))["runs"][0]["benchmarks"]
        k.append([x for x in runs if x["name"] == b][0]["ops_per_sec"])
    ratios = [x / y for x, y in zip(k, d)]
    each = ", ".join(f"{x:.3f}" for x in ratios)
    print(f"| {b} | {statistics.median(d):.0f} | {statistics.median(k):.0f} | {statistics.median(ratios):.3f} | {each} |")
# How the commits grouped, from RocksDB's own tickers in each tool (both
# count over the whole process: fill, overwrite, reads): a commit is
# written by its own thread (a group's leader) or in another's group.
# Absent where a tool did not record them (ledgerbench before 2026-11-29).
def dbb_ticker(log, name):
    m = re.search(rf"^rocksdb\.{re.escape(name)} COUNT : ([0-9]+)", log, re.M)
    return int(m.group(1)) if m else None
rows = []
for r in range(1, rounds + 1):
    log = open(f"{work}/round-{r}/dbb.log").read()
    last = json.load(open(f"{work}/round-{r}/ledgerbench/results.json"))["runs"][0]["benchmarks"][-1]
    extra = (last.get("engine") or {}).get("extra", {})
    d = (dbb_ticker(log, "write.self"), dbb_ticker(log, "write.other"))
    k = (extra.get("writes_done_by_self"), extra.get("writes_done_by_other"))
    rows.append((r, d, k))
def per_group(s, o):
    return f"{(s + o) / s:.2f}" if s and o is not None else "n/a"
print()
print("| round | db_bench commits per group | ledgerbench commits per group |")
print("|---|---:|---:|")
for r, d, k in rows:
    print(f"| {r} | {per_group(*d)} | {per_group(*k)} |")
# Where each tool's threads spent the run, a thread group a row (RocksDB's
# pools one row each), means over the rounds (scripts/schedstat.py).
if sched:
    print()
    print("| tool | process | threads | n | CPU s | user s | system s | queued s | asleep s | voluntary switches | involuntary switches | minor faults |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for tool, f in [("db_bench", "sched-dbb.json"), ("ledgerbench", "sched-kv.json")]:
        groups = {}
        for r in range(1, rounds + 1):
            for row in json.load(open(f"{work}/round-{r}/{f}"))["rows"]:
                groups.setdefault((row["process"], row["thread"]), []).append(row)
        for (p, t), rs in sorted(groups.items()):
            m = lambda k: sum(x[k] for x in rs) / rounds
            print(f"| {tool} | {p} | {t} | {m('threads'):.0f} | {m('cpu_secs'):.2f} | {m('user_secs'):.2f} "
                  f"| {m('system_secs'):.2f} | {m('runqueue_secs'):.2f} | {m('asleep_secs'):.2f} "
                  f"| {m('voluntary_switches'):.0f} | {m('involuntary_switches'):.0f} | {m('minor_faults'):.0f} |")
PY
if [[ -n "$OUT" ]]; then
    for r in $(seq 1 "$ROUNDS"); do
        mkdir -p "$OUT/round-$r"
        cp "$work/round-$r"/dbb.log "$work/round-$r"/kv.log "$OUT/round-$r"/
        [[ "$SCHED" == 0 ]] || cp "$work/round-$r"/sched-*.json "$OUT/round-$r"/
        cp "$work/round-$r/ledgerbench/results.json" "$OUT/round-$r/"
    done
    echo "kept in $OUT"
fi

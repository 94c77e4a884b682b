#!/usr/bin/env bash
# A benchmark, not a test: RocksDB's own db_bench (the distribution's
# rocksdb-tools) and ledgerbench's rocksdb-leveled on the same data shape, the
# same options, the same kind of private device and the same memory limit,
# side by side; prints device reads per GET, KiB per GET and write
# amplification of each (from RocksDB's own tickers, which both read, and
# at the device), and ledgerbench / db_bench.
#
#   scripts/dbbench-compare.sh [KEYS] [LIMIT] [READS] [IO]
#   scripts/dbbench-compare.sh throughput [NUM] [THREADS] [OUT] [ROUNDS] [loop|tmpfs]
#
# `throughput` runs db_bench's fillrandom, overwrite and readrandom (16-byte
# keys, 100-byte values, one put a commit, NUM writes or reads per thread)
# in db_bench 11.8.1 built from the sources the rocksdb backends link
# (scripts/build-dbbench.sh) and in `ledgerbench run micro` on
# rocksdb-leveled with the same options, each on its own loop device, and
# prints ops/s of each and ledgerbench / db_bench: what the Rust binding
# and the harness cost, as medians of ROUNDS alternating pairs of runs
# (scripts/dbbench-throughput.sh).
#     KEYS   keys loaded (default 20000000: the IO-per-GET study's shape)
#     LIMIT  memory cgroup of the reads (default 256MiB)
#     READS  random existing keys read (default 20000)
#     IO     buffered (default) or direct
#
# Both load every key once in random order (db_bench `filluniquerandom`;
# `fillrandom` draws keys with repeats, which would load fewer distinct
# keys than ledgerbench), with background compaction off, then compact fully,
# then read random existing keys after dropping the page cache, inside a
# memory cgroup of LIMIT. Each tool gets its own ext4 image on a loop device
# attached with direct I/O, read-ahead as the kernel leaves it. Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == throughput ]]; then
    exec scripts/dbbench-throughput.sh "${@:2}"
fi
KEYS=${1:-20000000}
LIMIT=${2:-256MiB}
READS=${3:-20000}
IO=${4:-buffered}
[[ $EUID -eq 0 ]] || { echo "dbbench-compare: needs root (loop devices, cgroups, drop_caches)" >&2; exit 2; }
case "$IO" in buffered) DIRECT=0 ;; direct) DIRECT=1 ;; *) echo "dbbench-compare: IO is buffered or direct, not $IO" >&2; exit 2 ;; esac
if ! command -v db_bench > /dev/null; then
    echo "dbbench-compare: installing rocksdb-tools (db_bench)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rocksdb-tools > /dev/null
fi
limit_bytes=$(numfmt --from=iec-i "${LIMIT%B}")
cargo build --release --workspace --locked --quiet
source scripts/bin.sh
BIN="$(ledgerbench_bin)"

work=$(mktemp -d /var/tmp/ledgerbench-dbbench.XXXXXX)
dev="" cg=""
cleanup() {
    mountpoint -q "$work/mnt" && umount "$work/mnt"
    [[ -n "$dev" ]] && losetup -d "$dev" 2> /dev/null
    [[ -n "$cg" && -d "$cg" ]] && rmdir "$cg" 2> /dev/null
    rm -rf "$work"
}
trap cleanup EXIT
# A signal ends the script through its EXIT trap once the command it waits
# on ends (bash runs no EXIT trap on a signal it does not trap): no tmpfs,
# loop device or image left behind. Ctrl-C stops that command too.
trap 'exit 130' INT
trap 'exit 143' TERM

# ledgerbench's rocksdb-leveled at --engine-memory 128MiB, as point-reads runs
# it: memtables of 128 MiB / 6, a 32 MiB block cache, 4 background jobs,
# 4 KiB blocks, 10-bit bloom filters, no compression, WAL on and unsynced,
# background compaction off during the load.
wbs=$(( (128 << 20) / 6 ))
DBB_OPTS=(--key_size=32 --value_size=110 --num="$KEYS" --compression_type=none
    --write_buffer_size="$wbs" --max_write_buffer_number=6 --level0_file_num_compaction_trigger=50
    --max_background_jobs=4 --open_files=5000 --cache_size=$((32 << 20)) --block_size=4096
    --bloom_bits=10 --disable_wal=0 --sync=0 --use_direct_reads="$DIRECT"
    --statistics=0 --histogram=1 --seed=42 --threads=1)

echo "== db_bench $(db_bench --version 2> /dev/null | head -1 || true): $KEYS keys, limit $LIMIT, $READS reads, $IO"
truncate -s $((KEYS * 142 * 4 + (1 << 30))) "$work/img"
dev=$(losetup --find --show --direct-io=on "$work/img")
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0,nodiscard "$dev"
mkdir "$work/mnt" && mount -o noatime "$dev" "$work/mnt"
name=${dev#/dev/}
ra=$(cat "/sys/block/$name/queue/read_ahead_kb")
stat() { awk -v f="$1" '{print $f}' "/sys/block/$name/stat"; }
w0=$(stat 7)
db_bench "${DBB_OPTS[@]}" --db="$work/mnt/db" --benchmarks=filluniquerandom,compact \
    --disable_auto_compactions=1 --batch_size=1000 --statistics=1 > "$work/load.log" 2>&1
sync -f "$work/mnt"
w1=$(stat 7)
sync; echo 3 > /proc/sys/vm/drop_caches
if [[ -d /sys/fs/cgroup/memory ]]; then
    cg=/sys/fs/cgroup/memory/ledgerbench-dbbench-$$
    mkdir "$cg"; echo "$limit_bytes" > "$cg/memory.limit_in_bytes"
else
    cg=/sys/fs/cgroup/ledgerbench-dbbench-$$
    mkdir "$cg"; echo "$limit_bytes" > "$cg/memory.max"
fi
r0=$(stat 1); s0=$(stat 3)
sh -c "echo \$\$ > $cg/cgroup.procs && exec db_bench $(printf '%q ' "${DBB_OPTS[@]}") --db=$work/mnt/db \
    --use_existing_db=1 --benchmarks=readrandom --reads=$READS --disable_auto_compactions=1" > "$work/read.log" 2>&1
r1=$(stat 1); s1=$(stat 3)
rmdir "$cg"; cg=""
umount "$work/mnt"; losetup -d "$dev"; dev=""
db_reads=$(awk -v a="$r0" -v b="$r1" -v n="$READS" 'BEGIN{printf "%.3f", (b-a)/n}')
db_kib=$(awk -v a="$s0" -v b="$s1" -v n="$READS" 'BEGIN{printf "%.3f", (b-a)*512/1024/n}')
db_wa=$(awk -v a="$w0" -v b="$w1" -v n="$KEYS" 'BEGIN{printf "%.3f", (b-a)*512/(n*142)}')
# RocksDB's tickers, as ledgerbench reads them: WAL + flush + compaction bytes.
ticker() { awk -v t="rocksdb.$1" '$1 == t {print $4}' "$work/load.log"; }
db_ewa=$(awk -v w="$(ticker wal.bytes)" -v f="$(ticker flush.write.bytes)" -v c="$(ticker compact.write.bytes)" \
    -v n="$KEYS" 'BEGIN{printf "%.3f", (w+f+c)/(n*142)}')
grep -E "^readrandom" "$work/read.log" || true

echo "== ledgerbench point-reads (rocksdb-leveled): the same shape"
kvio=(); [[ "$IO" == direct ]] && kvio=(--io direct)
"$BIN" run point-reads --keys "$KEYS" --reads "$READS" --missing-reads 0 --memory-limit "$LIMIT" \
    --cache limited --backends rocksdb-leveled --engine-memory 128MiB "${kvio[@]}" \
    --out "$work/kv" > "$work/kv.log" 2>&1 || { cat "$work/kv.log"; exit 2; }
read -r kv_reads kv_kib kv_wa kv_ra kv_ewa < <(python3 - "$work/kv/results.json" "$KEYS" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
m = [x for x in r["measurements"] if x["phase"] == "after-compaction" and x["cache"] == "limited"][0]["cost"]
wa = (r["load_device_write_bytes"] + r["compact_device_write_bytes"]) / r["logical_bytes"]
eng = sum(s.get(k, 0) for s in (r["engine_after_load"], r["engine_after_compaction"])
          for k in ("wal_bytes", "flush_write_bytes", "compaction_write_bytes"))
print(f'{m["device_reads_per_get"]:.3f} {m["device_bytes_per_get"] / 1024:.3f} {wa:.3f} '
      f'{r["read_path"].get("read_ahead_kb")} {eng / r["logical_bytes"]:.3f}')
EOF
)

echo
echo "| $KEYS keys, $LIMIT, $IO | db_bench | ledgerbench | ledgerbench / db_bench |"
echo "|---|---:|---:|---:|"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.3f", a/b; else print "n/a" }'; }
echo "| device reads / GET (after full compaction) | $db_reads | $kv_reads | $(ratio "$kv_reads" "$db_reads") |"
echo "| device KiB / GET | $db_kib | $kv_kib | $(ratio "$kv_kib" "$db_kib") |"
echo "| write amplification, RocksDB tickers (WAL + flush + compaction) | $db_ewa | $kv_ewa | $(ratio "$kv_ewa" "$db_ewa") |"
echo "| write amplification at the device (load + compaction) | $db_wa | $kv_wa | $(ratio "$kv_wa" "$db_wa") |"
echo "| read-ahead KiB | $ra | $kv_ra | |"
echo
echo "The device figure depends on the kernel's writeback: WAL files deleted once"
echo "their memtable is flushed never reach the device if still dirty, so it"
echo "varies with load speed; the tickers count what each engine wrote."

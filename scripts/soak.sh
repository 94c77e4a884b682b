#!/usr/bin/env bash
# The soaks of results/soak-*: two hours each, one engine per run directory
# under RUNS, one after the other. A soak cannot go on from where it
# stopped (the restart would be a step in every series), so run it again
# after a stop: a finished soak is skipped, an unfinished one is moved
# aside (RUNS/NAME.unfinished-TIME, nothing is deleted) and starts again,
# the rest start.
#
#   scripts/soak.sh BIN_DIR RUNS [NAME...]
#
# BIN_DIR holds the release `ledgerbench` of a clean commit (and its Go
# library and sidecar); RUNS is where the run directories go (its disk
# needs 50 GiB free: a device image is sparse, but the ext4 inside does
# not return freed blocks, so a churning store's image grows to its full
# size). NAME picks some of the soaks below; default: all. Each takes 2
# hours and must have the machine to itself.
#
# LittDB's blob shape, scaled to this machine (results/soak-blobs-2026-11-28/
# README.md says why): 1 MiB blobs, 8 a batch, 8 of the live ones read
# back a batch; one batch a second in steady state (--op-rate 25: 8 puts,
# 8 deletes, 9 gets), so 8 MiB/s written; a blob lives 1,800 batches (30
# minutes, a quarter of the run), 14 GiB live. FIFO's cap is the live set
# plus an eighth: FIFO expires by size, so its cap is how a user gives it
# a TTL.
#
# The Solana blockstore (the `contrast` preset: leveled with range purges
# against FIFO, 512 MiB), one inserter at half the slower engine's
# capacity: a 5-minute closed-loop probe (results/soak-solana-2026-11-28/
# probe/) held 232,577 ops/s on leveled and 330,843 on FIFO, so
# --op-rate 116288: about 316 slots a second, 52 MiB/s written. A
# 30-minute retention at that rate is 570,000 slots, 44 GB of data shreds
# and as much of coding shreds: more than this disk. So the disk sets the
# retention instead: 50,000 slots kept (2.6 minutes; 3.9 GB of data
# shreds, 3.9 GB of coding shreds), turned over about 45 times in the
# run; FIFO's cap is a store's share of that plus an eighth (4.4 GB).
# Three stores, each on a 16 GiB device (three images fit the disk at
# their full size).
set -euo pipefail
# shellcheck source=scripts/bin.sh
source "$(dirname "$0")/bin.sh"
usage="usage: scripts/soak.sh BIN_DIR RUNS [NAME...]"
bin="${1:?$usage}/ledgerbench"
runs="${2:?$usage}"
shift 2
mkdir -p "$runs"

common=(--duration 2h --interval 10s --durability process)
blobs=(soak blobs --op-rate 25 --param ttl_batches=1800 "${common[@]}" --memory-limit 2GiB
  --device-size 48GiB)
solana=(soak solana --preset contrast --threads 1 --op-rate 116288 --param slots=100000000
  --param keep_slots=50000 "${common[@]}" --device-size 16GiB)

# name | flags after `run`
soaks=(
  "blobs-rocksdb-fifo|${blobs[*]} --backends rocksdb-fifo --set rocksdb-fifo.compaction.max_table_files_size=17000000000"
  "blobs-rocksdb-leveled|${blobs[*]} --backends rocksdb-leveled"
  "blobs-badger|${blobs[*]} --backends badger"
  "blobs-fjall|${blobs[*]} --backends fjall"
  "blobs-mdbx|${blobs[*]} --backends mdbx"
  "solana-rocksdb-leveled|${solana[*]} --backends rocksdb-leveled"
  "solana-rocksdb-fifo|${solana[*]} --backends rocksdb-fifo --set rocksdb-fifo.compaction.max_table_files_size=4400000000"
)

for s in "${soaks[@]}"; do
  name="${s%%|*}"
  flags="${s#*|}"
  wanted "$name" "$@" || continue
  # shellcheck disable=SC2086 # the flags are words
  fresh_run soak "$name" "$runs/$name" "$bin" run $flags
done

#!/usr/bin/env bash
# The soaks of results/soak-*: two hours of LittDB's blob shape on five
# engines, one engine per run directory under RUNS, one after the other. A soak
# cannot go on from where it stopped (the restart would be a step in every
# series), so run it again after a stop: a finished soak is skipped, an
# unfinished one is moved aside (RUNS/NAME.unfinished-TIME, nothing is
# deleted) and starts again, the rest start.
#
#   scripts/soak.sh BIN_DIR RUNS [NAME...]
#
# BIN_DIR holds the release `ledgerbench` of a clean commit (and its Go
# library and sidecar); RUNS is where the run directories go (its disk
# needs 50 GiB free: each store's device image is sparse, but a churning
# LSM fills most of its 48 GiB).
# NAME picks some of the soaks below; default: all. Each takes 2 hours and
# must have the machine to itself.
#
# The blobs shape, scaled to this machine (results/soak-blobs-2026-11-28/
# README.md says why):
# 1 MiB blobs, 8 a batch, 8 of the live ones read back a batch; one batch
# a second in steady state (--op-rate 25: 8 puts, 8 deletes, 9 gets), so
# 8 MiB/s written; a blob lives 1,800 batches (30 minutes, a quarter of
# the run), 14 GiB live. FIFO's cap is the live set plus an eighth: FIFO
# expires by size, so its cap is how a user gives it a TTL.
set -euo pipefail
# shellcheck source=scripts/bin.sh
source "$(dirname "$0")/bin.sh"
usage="usage: scripts/soak.sh BIN_DIR RUNS [NAME...]"
bin="${1:?$usage}/ledgerbench"
runs="${2:?$usage}"
shift 2
mkdir -p "$runs"

common=(--duration 2h --interval 10s --memory-limit 2GiB --durability process
  --device-size 48GiB)
blobs=(soak blobs --op-rate 25 --param ttl_batches=1800)

# name | flags after `run`
soaks=(
  "blobs-rocksdb-fifo|${blobs[*]} --backends rocksdb-fifo --set rocksdb-fifo.compaction.max_table_files_size=17000000000"
  "blobs-rocksdb-leveled|${blobs[*]} --backends rocksdb-leveled"
  "blobs-badger|${blobs[*]} --backends badger"
  "blobs-fjall|${blobs[*]} --backends fjall"
  "blobs-mdbx|${blobs[*]} --backends mdbx"
)
# The Solana soaks (leveled with range purges against FIFO) join the list
# once a probe has set their rate: half the slower engine's capacity.

for s in "${soaks[@]}"; do
  name="${s%%|*}"
  flags="${s#*|}"
  wanted "$name" "$@" || continue
  dir="$runs/$name"
  if [ -f "$dir/summary.md" ]; then
    echo "soak: $name is done ($dir)"
    continue
  fi
  if [ -e "$dir" ]; then
    aside="$dir.unfinished-$(date -u +%Y%m%dT%H%M%S)"
    echo "soak: $name did not finish; moved to $aside"
    mv "$dir" "$aside"
  fi
  echo "soak: $name $(date -u +%H:%M:%S)"
  # shellcheck disable=SC2086 # the flags are words
  "$bin" run $flags "${common[@]}" --out "$dir" || echo "soak: $name exited $?"
done

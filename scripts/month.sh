#!/usr/bin/env bash
# The month runs of results/stellar-month-*: the report's 234 batches
# (`--preset month`) on the leading designs, one after the other, each in
# its own run directory under RUNS. Run it again after a stop (Ctrl-C, a
# reboot, the end of a session): a finished design is skipped, a stopped
# one goes on from its last batch (`run stellar --resume`), the rest start.
#
#   scripts/month.sh BIN_DIR RUNS [DESIGN...]
#
# BIN_DIR holds the release `ledgerbench` of a clean commit (and its Go
# library); RUNS is where the run directories go (its disk needs ~26 GiB
# free). DESIGN names pick some of the designs below; default: all.
set -euo pipefail
# shellcheck source=scripts/bin.sh
source "$(dirname "$0")/bin.sh"
bin="${1:?usage: scripts/month.sh BIN_DIR RUNS [DESIGN...]}/ledgerbench"
runs="${2:?usage: scripts/month.sh BIN_DIR RUNS [DESIGN...]}"
shift 2
mkdir -p "$runs"

# name | flags after `run stellar --preset month`
designs=(
  "partitioned-filters-in-heap|--backends rocksdb-partitioned --set rocksdb-partitioned.base.cache_index_and_filter_blocks=false"
  "background-leveled|--backends rocksdb-leveled --compaction background"
  "manual-leveled|--backends rocksdb-leveled"
  "mdbx|--backends mdbx"
  "partitioned-filters-in-heap-i4i|--backends rocksdb-partitioned --set rocksdb-partitioned.base.cache_index_and_filter_blocks=false --ratio i4i"
  "mdbx-i4i|--backends mdbx --ratio i4i"
)

for d in "${designs[@]}"; do
  name="${d%%|*}"
  flags="${d#*|}"
  wanted "$name" "$@" || continue
  dir="$runs/$name"
  if [ -f "$dir/results.json" ] && [ ! -f "$dir/.ledgerbench-checkpoint" ] \
    && [ -f "$dir/summary.md" ]; then
    echo "month: $name is done ($dir)"
    continue
  fi
  echo "month: $name $(date -u +%H:%M:%S)"
  if [ -f "$dir/.ledgerbench-checkpoint" ]; then
    "$bin" run stellar --resume "$dir"
  else
    # shellcheck disable=SC2086 # the flags are words
    "$bin" run stellar --preset month $flags --out "$dir"
  fi
done

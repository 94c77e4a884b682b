#!/usr/bin/env bash
# The runs of results/cosmos-*: the hand-written Cosmos-SDK model
# (examples/workloads/cosmos.toml, `run synth --preset cosmos`: goleveldb,
# Pebble, RocksDB and MDBX; a block of 5,000 updates every 6 s from one
# writer, four RPC readers; 10.5 million keys loaded first, 10x its 128 MiB
# limit), then the capacity search on a store prefilled as large: how many
# random 32-byte-key rows of 100 bytes a second each engine persists at a
# 6 s block time. One run directory each under RUNS, one after the other;
# run it again after a stop: a finished run is skipped, an unfinished one
# is moved aside (RUNS/NAME.unfinished-TIME, nothing is deleted) and
# starts again.
#
#   scripts/cosmos.sh BIN_DIR RUNS [NAME...]
#
# BIN_DIR holds the release `ledgerbench` of a clean commit (and its Go
# library and sidecar); NAME picks `synth` or `capacity`; default: both.
# A benchmark: run it alone on the machine.
#
# PERIODS (default 50: five minutes of blocks an engine after its load)
# and PROBES (default 6) trade the runs' length against what they resolve;
# each engine's 1.25 GiB is loaded once and kept in RUNS/states (a worker
# after an OOM kill, or the run started again, starts from it), and each
# probe opens a cold copy. MDBX's load (32 minutes) goes first, so a run
# stopped early has kept it.
set -euo pipefail
# shellcheck source=scripts/bin.sh
source "$(dirname "$0")/bin.sh"
usage="usage: scripts/cosmos.sh BIN_DIR RUNS [NAME...]"
bin="${1:?$usage}/ledgerbench"
runs="${2:?$usage}"
shift 2
[[ -x "$bin" ]] || { echo "cosmos: no ledgerbench in ${bin%/*}" >&2; exit 2; }
periods=${PERIODS:-50}
probes=${PROBES:-6}
mkdir -p "$runs"

# name | flags after `run`
cosmos=(
  "synth|synth --preset cosmos --param periods=$periods"
  "capacity|capacity --rows tx-hash --value-bytes 100 --close-interval 6s --prefill 1280MiB --memory-limit 128MiB --min-rate 1000 --max-rate 400000 --probes $probes --backends mdbx,goleveldb,pebble,rocksdb-leveled --state-cache $runs/states"
)

for c in "${cosmos[@]}"; do
  name="${c%%|*}"
  flags="${c#*|}"
  wanted "$name" "$@" || continue
  # shellcheck disable=SC2086 # the flags are words
  fresh_run cosmos "$name" "$runs/$name" "$bin" run $flags
done

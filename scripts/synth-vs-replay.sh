#!/usr/bin/env bash
# The runs of results/stellar-synth-*: the Stellar quick preset played as
# it is (`run stellar --preset quick`) and as the model `fit` made of its
# trace (`run synth --preset stellar`, fixtures/models/stellar.toml), on
# the same engines (the synth preset's: rocksdb-leveled, rocksdb-fifo,
# lmdb, mdbx), memory limit (512 MiB), engine budget and durability; then
# scripts/synth-vs-replay.py puts them side by side, store by store. One
# run directory each under RUNS; run it again after a stop: a finished run
# is skipped, an unfinished one is moved aside and starts again.
#
#   scripts/synth-vs-replay.sh BIN_DIR RUNS
#
# A segment of the synth run is as many operations as a batch of the
# quick preset (1,000 ledgers and 262,756 transactions in 10 batches: a
# ledger and two rows a transaction, 52,651 operations), so batch and
# segment are the same amount of work. A benchmark: run it alone.
set -euo pipefail
# shellcheck source=scripts/bin.sh
source "$(dirname "$0")/bin.sh"
usage="usage: scripts/synth-vs-replay.sh BIN_DIR RUNS"
bin="${1:?$usage}/ledgerbench"
runs="${2:?$usage}"
[[ -x "$bin" ]] || { echo "synth-vs-replay: no ledgerbench in ${bin%/*}" >&2; exit 2; }
mkdir -p "$runs"
same=(--backends rocksdb-leveled,rocksdb-fifo,lmdb,mdbx --memory-limit 512MiB --engine-memory 64MiB
  --durability process)
fresh_run synth-vs-replay replay "$runs/replay" "$bin" run stellar --preset quick "${same[@]}"
fresh_run synth-vs-replay synth "$runs/synth" "$bin" run synth --preset stellar \
  --param ops_per_segment=52651 "${same[@]}"
python3 "$(dirname "$0")/synth-vs-replay.py" "$runs/replay/results.json" "$runs/synth/results.json" \
  | tee "$runs/side-by-side.md"

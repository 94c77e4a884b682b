#!/usr/bin/env bash
# The main job: Stellar ingestion on the four default backends, preset `quick`.
# Extra arguments go to `ledgerbench run stellar` (e.g. --preset month-scaled).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --workspace --locked
source scripts/bin.sh
BIN="$(ledgerbench_bin)"
# `quick` unless the arguments choose a preset or a run file (which names
# its own): clap refuses a flag given twice.
preset=(--preset quick)
for a in "$@"; do
  case "$a" in --preset | --preset=* | --config | --config=*) preset=() ;; esac
done
exec "$BIN" run stellar "${preset[@]}" "$@"

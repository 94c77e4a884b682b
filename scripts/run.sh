#!/usr/bin/env bash
# The main job: Stellar ingestion on the four default backends, preset `quick`.
# Extra arguments go to `ledgerbench run stellar` (e.g. --preset month-scaled).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --workspace --locked
source scripts/bin.sh
BIN="$(ledgerbench_bin)"
exec "$BIN" run stellar --preset quick "$@"

#!/usr/bin/env bash
# The main job: Stellar ingestion on the four default backends, preset `quick`.
# Extra arguments go to `ledgerbench run stellar` (e.g. --preset month-scaled).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --workspace --locked
target_dir="${CARGO_TARGET_DIR:-target}"
exec "$target_dir/release/ledgerbench" run stellar --preset quick "$@"

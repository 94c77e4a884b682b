#!/usr/bin/env bash
# Regression gate: a small deterministic benchmark (the smoke preset on all
# four default backends, stores on the build machine's filesystem) compared
# with the baseline committed in results/baselines/ci-smoke on the counters
# that do not flake (engine bytes, write and space amplification, logical
# bytes, entries, mismatches). Timings are not gated here: one run on a
# shared 2-core machine cannot tell noise from a regression.
#
# Exit 0: within thresholds; 1: a counter regressed; 2: the gate could not run.
# After an intended change of these counters, refresh the baseline with
#   scripts/gate.sh --update
set -euo pipefail
cd "$(dirname "$0")/.."
BASELINE=results/baselines/ci-smoke
cargo build --release --workspace --locked --quiet
BIN="${CARGO_TARGET_DIR:-target}/release/kvbench"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$BIN" run stellar --preset smoke --device none --out "$work/run" > "$work/run.log" 2>&1 || {
    cat "$work/run.log"; echo "gate: the benchmark run failed" >&2; exit 2; }
if [[ "${1:-}" == "--update" ]]; then
    mkdir -p "$BASELINE"
    cp "$work/run/results.json" "$BASELINE/results.json"
    echo "gate: baseline updated in $BASELINE"
    exit 0
fi
"$BIN" compare --baseline "$BASELINE" --current "$work/run" --only counter,exact \
    --json "$work/compare.json" > "$work/compare.md" || rc=$?
rc=${rc:-0}
sed -n '1,/<details>/p' "$work/compare.md"
echo "gate: kvbench compare exited $rc"
exit "$rc"

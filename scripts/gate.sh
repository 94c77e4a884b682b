#!/usr/bin/env bash
# Regression gate: a small deterministic benchmark (the smoke preset on all
# four default backends) compared with the baselines committed in
# results/baselines/ on the counters that do not flake (engine bytes, write
# and space amplification, logical bytes, entries, mismatches, every batch's
# engine counters). Counters fail in both directions: a meter that stops
# counting reads low. Timings are not gated here: one run on a shared 2-core
# machine cannot tell noise from a regression.
#
# Two runs: `ci-smoke` with stores on the build machine's filesystem, and,
# where loop devices work (root, a loop driver), `ci-smoke-devices` with a
# private ext4 loop device per store, so the device meters are gated too.
#
# Exit 0: within thresholds; 1: a counter regressed, fell or vanished;
# 2: the gate could not run. After an intended change of these counters,
# refresh the baselines with
#   scripts/gate.sh --update
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --workspace --locked --quiet
source scripts/bin.sh
BIN="$(ledgerbench_bin)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# gate NAME DEVICE: runs the smoke preset with --device DEVICE and compares
# it with results/baselines/NAME (or replaces that baseline with --update).
gate() {
    local name=$1 device=$2 base="results/baselines/$1" rc=0
    "$BIN" run stellar --preset smoke --device "$device" --out "$work/$name" \
        > "$work/$name.log" 2>&1 || {
        cat "$work/$name.log"; echo "gate: the $name benchmark run failed" >&2; exit 2; }
    if [[ "$UPDATE" == 1 ]]; then
        mkdir -p "$base"
        cp "$work/$name/results.json" "$base/results.json"
        echo "gate: baseline updated in $base"
        return 0
    fi
    "$BIN" compare --baseline "$base" --current "$work/$name" --only counter,exact \
        --json "$work/$name.json" > "$work/$name.md" || rc=$?
    echo "### $name (--device $device)"
    sed -n '1,/<details>/p' "$work/$name.md"
    echo "gate: $name: ledgerbench compare exited $rc"
    return "$rc"
}

UPDATE=0
[[ "${1:-}" == "--update" ]] && UPDATE=1
status=0
gate ci-smoke none || status=$?
if [[ $EUID -eq 0 && -e /dev/loop-control ]] && command -v losetup mkfs.ext4 > /dev/null; then
    gate ci-smoke-devices loop || { rc=$?; (( rc > status )) && status=$rc; }
else
    echo "gate: device meters not gated: loop devices need root and a loop driver here"
fi
exit "$status"

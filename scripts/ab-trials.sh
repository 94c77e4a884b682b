#!/usr/bin/env bash
# Measures the timing gate on this machine: how often `ledgerbench ab` calls
# a planted 5% slowdown worse (it should, at least 19 times in 20) and how
# often it calls the same code changed (at most once in 20).
#
#   scripts/ab-trials.sh OUT [TRIALS] [PERCENT] [-- AB FLAGS...]
#
# Each trial is one `ledgerbench ab` with its defaults (20 rounds, alpha
# 0.01, the small Stellar workload) and the AB FLAGS given (the CI gate's
# are `-- --noise-target summary.batch_secs=2.5 --max-rounds 60`):
# "planted" compares this build with itself under
# LEDGERBENCH_PLANT_SLOWDOWN_PCT=PERCENT (every store call that much
# longer), "same" with itself. Trials alternate planted and same,
# so the machine's drift reaches both. Each trial's ab.json (each run's
# judged timings and the judgements) is kept in OUT/<kind>-<n>.json, its runs are
# removed (their stores on tmpfs where there is room, as in the gate);
# OUT/summary.md counts the verdicts per metric (scripts/ab-summary.sh);
# OUT/trials.args records the build, percent and flags (an unfinished set
# is resumed when run again with the same).
# Needs a quiet machine: anything else running is noise the gate will see.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/ab-trials.sh OUT [TRIALS] [PERCENT] [-- AB FLAGS...]"
out=${1:?$usage}
shift
trials=20 pct=5
[[ $# -gt 0 && $1 != -* ]] && { trials=$1; shift; }
[[ $# -gt 0 && $1 != -* ]] && { pct=$1; shift; }
[[ $# -gt 0 && $1 == -- ]] && shift
[[ $# -eq 0 || $1 == -* ]] || { echo "ab-trials: $1: AB FLAGS go after --; $usage" >&2; exit 2; }
[[ $trials =~ ^[1-9][0-9]*$ ]] || { echo "ab-trials: TRIALS $trials: give a count, e.g. 20; $usage" >&2; exit 2; }
[[ $pct =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "ab-trials: PERCENT $pct: give a number, e.g. 5; $usage" >&2; exit 2; }
# (AB FLAGS must not name --out, --json, --baseline or --current: each
# trial sets them.)
# A set of trials can take hours on a noisy machine: an unfinished one
# (no summary.md yet) of this build, percent and flags is resumed, its
# kept trials left as they are; anything else in OUT is refused.
dirty=$(git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
want=$(printf 'commit %s%s\npercent %s\nab flags %s' "$(git rev-parse --short=12 HEAD)" "$dirty" "$pct" "$*")
if [[ -e "$out" ]] && [[ -n "$(ls -A "$out")" ]]; then
    if [[ -f "$out/trials.args" && ! -e "$out/summary.md" && "$(cat "$out/trials.args")" == "$want" ]]; then
        echo "ab-trials: resuming the unfinished trials in $out" >&2
    else
        echo "ab-trials: $out holds files, not an unfinished set of this build, percent and flags; give a new or empty directory" >&2
        exit 2
    fi
fi
cargo build --release --workspace --locked --quiet
source scripts/bin.sh
mkdir -p "$out"
[[ -f "$out/trials.args" ]] || printf '%s\n' "$want" > "$out/trials.args"
work=$(mktemp -d)
scratch=""
trap 'rm -rf "$work" ${scratch:+"$scratch"}' EXIT
cp "$(ledgerbench_bin)" "$work/ledgerbench"
printf '#!/bin/sh\nLEDGERBENCH_PLANT_SLOWDOWN_PCT=%s exec "%s" "$@"\n' "$pct" "$work/ledgerbench" > "$work/planted"
chmod +x "$work/planted"
bin="$work/ledgerbench"
for i in $(seq 1 "$trials"); do
    for kind in planted same; do
        if [[ -e "$out/$kind-$i.json" ]]; then
            echo "ab-trials: $kind $i/$trials: kept from before"
            continue
        fi
        cur="$bin"
        [[ $kind == planted ]] && cur="$work/planted"
        rc=0
        scratch=$(ab_scratch "$work")
        "$bin" ab --baseline "$bin" --current "$cur" --out "$scratch/ab" "$@" > "$work/$kind-$i.md" 2> "$work/$kind-$i.log" || rc=$?
        if [[ $rc -ge 2 ]]; then
            cat "$work/$kind-$i.log" >&2
            rm -rf "$scratch"
            exit 2
        fi
        # The runs' paths in ab.json name the scratch directory, now gone;
        # a planted trial says how much was planted.
        if [[ $kind == planted ]]; then
            jq --argjson p "$pct" '.planted_slowdown_pct = $p' "$scratch/ab/ab.json" > "$out/$kind-$i.json"
        else
            cp "$scratch/ab/ab.json" "$out/$kind-$i.json"
        fi
        rm -rf "$scratch"
        echo "ab-trials: $kind $i/$trials: exit $rc"
    done
done
scripts/ab-summary.sh "$out" > "$out/summary.md"
cat "$out/summary.md"

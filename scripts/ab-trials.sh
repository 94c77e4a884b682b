#!/usr/bin/env bash
# Measures the timing gate on this machine: how often `ledgerbench ab` calls
# a planted 5% slowdown worse (it should, at least 19 times in 20) and how
# often it calls the same code changed (at most once in 20).
#
#   scripts/ab-trials.sh OUT [TRIALS] [PERCENT] [-- AB FLAGS...]
#
# Each trial is one `ledgerbench ab` with its defaults (20 rounds, alpha
# 0.01, the small Stellar workload) and the AB FLAGS given (`-- gate`:
# the CI gate's batch-time comparison, as scripts/gate-ab.sh has it):
# "planted" compares this build with itself under
# LEDGERBENCH_PLANT_SLOWDOWN_PCT=PERCENT (every store call that much
# longer), "same" with itself. Trials alternate planted and same,
# so the machine's drift reaches both. Each trial's ab.json (each run's
# judged timings and the judgements) is kept in OUT/<kind>-<n>.json, its runs are
# removed (their stores on tmpfs where there is room, as in the gate);
# OUT/summary.md counts the verdicts per metric (scripts/ab-summary.sh);
# OUT/trials.args records the build, percent and flags; the build's binary
# is kept under $LEDGERBENCH_AB_TRIALS_BINS (default
# /var/tmp/ledgerbench-ab-trials; removed when the set is done), so an
# unfinished set is resumed with the very binary it began with, by
# running the script again with the same OUT, percent and flags, even
# after the tree has moved on.
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
if [[ $# -eq 1 && $1 == gate ]]; then
    source scripts/gate-ab.sh
    set -- "${GATE_AB_BATCH[@]}"
fi
[[ $# -eq 0 || $1 == -* ]] || { echo "ab-trials: $1: AB FLAGS go after --; $usage" >&2; exit 2; }
[[ $trials =~ ^[1-9][0-9]*$ ]] || { echo "ab-trials: TRIALS $trials: give a count, e.g. 20; $usage" >&2; exit 2; }
[[ $pct =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "ab-trials: PERCENT $pct: give a number, e.g. 5; $usage" >&2; exit 2; }
# (AB FLAGS must not name --out, --json, --baseline or --current: each
# trial sets them.)
# A set of trials can take hours on a noisy machine: an unfinished one
# (no summary.md yet) with this percent and flags is resumed, its kept
# trials left as they are, by the binary that ran them; anything else in
# OUT is refused.
source scripts/bin.sh
# Kept per set (named by OUT's path), so finishing one set cannot take the
# binary of another.
mkdir -p "$out"
keep=${LEDGERBENCH_AB_TRIALS_BINS:-/var/tmp/ledgerbench-ab-trials}/$(realpath "$out" | sha256sum | cut -c1-16)
args=$(printf 'percent %s\nab flags %s' "$pct" "$*")
if [[ -n "$(ls -A "$out")" ]]; then
    recorded=$(cat "$out/trials.args" 2>/dev/null || true)
    if [[ -e "$out/summary.md" || "${recorded#*$'\n'}" != "$args" || $recorded != commit\ * ]]; then
        echo "ab-trials: $out holds files, not an unfinished set of this percent and flags; give a new or empty directory" >&2
        exit 2
    fi
    commit=$(head -n 1 <<< "$recorded")
    commit=${commit#commit }
    if [[ ! -x "$keep/ledgerbench" ]]; then
        # (A new machine, or /var/tmp cleared.) The commit builds again to
        # the same code and label, if not the same bytes. A copy of this tree's target directory spares
        # RocksDB's C++; sharing the directory itself would not do: cargo
        # keys a workspace's crates by their path inside the workspace and
        # their files' times, so two checkouts building into one directory
        # take each other's builds for fresh (here a build of main after
        # one of an older commit's worktree kept the older code).
        if [[ $commit == *-dirty ]]; then
            # A build of a dirty tree cannot be made again.
            echo "ab-trials: $out was begun by a build of uncommitted changes ($commit), whose binary $keep/ledgerbench is gone; give a new directory" >&2
            exit 2
        fi
        t=$(printf %q "$(target_dir)") w=$(printf %q "/tmp/ab-trials-$commit") k=$(printf %q "$keep")
        echo "ab-trials: $out was begun by commit $commit, whose binary $keep/ledgerbench is gone; copy a release build of $commit there and run again, or give a new directory. To build one:" >&2
        echo "  rm -rf $w $w.target && git worktree prune && git worktree add $w $commit && { [ ! -d $t ] || cp -a $t $w.target; } && (cd $w && CARGO_TARGET_DIR=$w.target cargo build --release --workspace --locked) && mkdir -p $k && cp $w.target/release/ledgerbench $k/ && git worktree remove --force $w && rm -rf $w.target" >&2
        exit 2
    fi
    echo "ab-trials: resuming the unfinished trials in $out with the binary of commit $commit" >&2
else
    dirty=$(git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
    commit=$(git rev-parse --short=12 HEAD)$dirty
    cargo build --release --workspace --locked --quiet
    mkdir -p "$keep"
    cp "$(ledgerbench_bin)" "$keep/ledgerbench"
    printf 'commit %s\n%s\n' "$commit" "$args" > "$out/trials.args"
fi
work=$(mktemp -d)
scratch=""
trap 'rm -rf "$work" ${scratch:+"$scratch"}' EXIT
cp "$keep/ledgerbench" "$work/ledgerbench"
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
# The set is done: its binary was kept only to resume it.
rm -rf "$keep"

#!/usr/bin/env bash
# What a gate of fewer rounds would have called on the same runs: every
# trial of a set made by scripts/ab-trials.sh judged again on its first N
# rounds only (`ledgerbench ab --rejudge` of its samples cut to N rounds),
# counted per metric as scripts/ab-summary.sh counts the whole trials.
#
#   scripts/ab-prefix.sh DIR N
#
# A set run with --noise-target ran 20 rounds, and more while noisy; cut
# to 20 it shows what the fixed 20-round gate would have called.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/ab-prefix.sh DIR N"
dir=${1:?$usage}
n=${2:?$usage}
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "ab-prefix: N $n: give a number of rounds, e.g. 20; $usage" >&2; exit 2; }
[[ -e "$dir/planted-1.json" ]] || { echo "ab-prefix: $dir/planted-1.json: no trials of scripts/ab-trials.sh there" >&2; exit 2; }
# The test's own build when it runs this (LEDGERBENCH_BIN), else this tree's.
source scripts/bin.sh
BIN=${LEDGERBENCH_BIN:-$(ledgerbench_bin)}
alpha=$(jq -r .alpha "$dir/planted-1.json")
# As `ab --rounds` refuses: fewer rounds than can reach alpha with the
# exact test (two-sided, all pairs one sign: 2 / 2^N) show nothing.
least=$(awk -v a="$alpha" 'BEGIN { n = 3; while (2 / 2 ^ n >= a) n++; print n }')
(( n >= least )) || { echo "ab-prefix: $n rounds cannot show a change at alpha $alpha; give $least or more" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shopt -s nullglob
for f in "$dir"/planted-*.json "$dir"/same-*.json; do
    kind=$(basename "$f" .json)
    kind=${kind%-*}
    short=$(jq --argjson n "$n" '[.samples.runs[] | select(.[0] < $n)] | length < 2 * $n' "$f") ||
        { echo "ab-prefix: $f: not an ab.json with samples" >&2; exit 2; }
    if [[ $short == true ]]; then
        echo "ab-prefix: $f has fewer than $n rounds" >&2
        exit 2
    fi
    # The cut samples are the first N rounds' runs in the order they ran,
    # so they pair and judge as an N-round `ab` would. (The targets only
    # add a note on the noise, of the cut rather than of the trial.)
    jq --argjson n "$n" '.samples.runs |= map(select(.[0] < $n)) | del(.noise_targets)' "$f" > "$tmp/cut.json"
    rm -f "$tmp/j.json"
    if ! "$BIN" ab --rejudge "$tmp/cut.json" --alpha "$alpha" --json "$tmp/j.json" > /dev/null 2> "$tmp/log"; then
        # Exit 1 is a verdict (worse), not a failure.
        [[ -s "$tmp/j.json" ]] || { cat "$tmp/log" >&2; echo "ab-prefix: $f: ledgerbench ab --rejudge failed on its first $n rounds" >&2; exit 2; }
    fi
    jq -r --arg k "$kind" '.[] | [$k, .metric, .verdict] | @tsv' "$tmp/j.json" >> "$tmp/verdicts.tsv"
done
planted=$(find "$dir" -maxdepth 1 -name 'planted-*.json' | wc -l)
same=$(find "$dir" -maxdepth 1 -name 'same-*.json' | wc -l)
echo "Judged on the first $n rounds of $planted planted and $same same-code trials:"
echo
echo "| metric | planted: worse | planted: better | same: worse | same: better |"
echo "|---|---:|---:|---:|---:|"
cut -f2 "$tmp/verdicts.tsv" | awk '!seen[$0]++' | while read -r m; do
    count() { awk -F'\t' -v k="$1" -v m="$m" -v v="$2" '$1 == k && $2 == m && $3 == v' "$tmp/verdicts.tsv" | wc -l; }
    echo "| $m | $(count planted worse) | $(count planted better) | $(count same worse) | $(count same better) |"
done

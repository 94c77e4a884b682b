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
source scripts/bin.sh
BIN="$(ledgerbench_bin)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$dir"/planted-*.json "$dir"/same-*.json; do
    kind=$(basename "$f" .json)
    kind=${kind%-*}
    short=$(jq --argjson n "$n" '[.samples.runs[] | select(.[0] < $n)] | length < 2 * $n' "$f")
    if [[ $short == true ]]; then
        echo "ab-prefix: $f has fewer than $n rounds" >&2
        exit 2
    fi
    # The cut samples, without the targets (they would judge the noise of
    # the cut, not what the trial did).
    jq --argjson n "$n" '.samples.runs |= map(select(.[0] < $n)) | del(.noise_targets)' "$f" > "$tmp/cut.json"
    rm -f "$tmp/j.json"
    "$BIN" ab --rejudge "$tmp/cut.json" --alpha "$(jq -r .alpha "$f")" --json "$tmp/j.json" > /dev/null 2>&1 || true
    [[ -s "$tmp/j.json" ]] || { echo "ab-prefix: $f: ledgerbench ab --rejudge failed on its first $n rounds" >&2; exit 2; }
    jq -r --arg k "$kind" '.[] | [$k, .metric, .verdict] | @tsv' "$tmp/j.json" >> "$tmp/verdicts.tsv"
done
planted=$(find "$dir" -name 'planted-*.json' | wc -l)
same=$(find "$dir" -name 'same-*.json' | wc -l)
echo "Judged on the first $n rounds of $planted planted and $same same-code trials:"
echo
echo "| metric | planted: worse | planted: better | same: worse | same: better |"
echo "|---|---:|---:|---:|---:|"
cut -f2 "$tmp/verdicts.tsv" | awk '!seen[$0]++' | while read -r m; do
    count() { awk -F'\t' -v k="$1" -v m="$m" -v v="$2" '$1 == k && $2 == m && $3 == v' "$tmp/verdicts.tsv" | wc -l; }
    echo "| $m | $(count planted worse) | $(count planted better) | $(count same worse) | $(count same better) |"
done

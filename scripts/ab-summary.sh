#!/usr/bin/env bash
# The summary of `scripts/ab-trials.sh`'s trials, from their kept ab.json
# files alone: per metric, how often the planted slowdown and the same code
# were called worse or better.
#
#   scripts/ab-summary.sh DIR PERCENT           print it
#   scripts/ab-summary.sh DIR PERCENT --check   also judge every trial again
#                                               from its samples (ledgerbench
#                                               ab --rejudge) and check the
#                                               verdicts and DIR/summary.md
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/ab-summary.sh DIR PERCENT [--check]}
pct=${2:?usage: scripts/ab-summary.sh DIR PERCENT [--check]}
summary() {
    local trials commits
    trials=$(find "$dir" -name 'planted-*.json' | wc -l)
    commits=$(jq -r '.commit' "$dir"/*-*.json | sort -u | paste -sd, -)
    echo "# ledgerbench ab on this machine: $trials trials each"
    echo
    echo "Planted: every store call ${pct}% longer (LEDGERBENCH_PLANT_SLOWDOWN_PCT=$pct); same: the build against itself."
    echo "Each trial: \`ledgerbench ab\` with its defaults ($(jq -r '.samples.runs | length / 2' "$dir/planted-1.json") rounds, alpha $(jq -r .alpha "$dir/planted-1.json"), \`ledgerbench $(jq -r .command "$dir/planted-1.json")\`), build $commits."
    echo
    echo "| metric | planted: worse | planted: better | same: worse | same: better | median effect, planted | median noise band, same |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    jq -r '.judgements[].metric' "$dir/planted-1.json" | while read -r m; do
        count() { jq -r --arg m "$m" '.judgements[] | select(.metric == $m) | .verdict' "$dir"/"$1"-*.json | grep -c "^$2\$" || true; }
        med() { jq -r --arg m "$m" ".judgements[] | select(.metric == \$m) | .$2" "$dir"/"$1"-*.json | sort -g | awk '{v[NR]=$1} END {printf "%+.2f%%", (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
        echo "| $m | $(count planted worse) | $(count planted better) | $(count same worse) | $(count same better) | $(med planted effect_pct) | ±$(med same band_pct | tr -d +) |"
    done
}
if [[ "${3:-}" != --check ]]; then
    summary
    exit 0
fi
source scripts/bin.sh
BIN="$(ledgerbench_bin)"
status=0
for f in "$dir"/*-*.json; do
    again=$("$BIN" ab --rejudge "$f" --alpha "$(jq -r .alpha "$f")" 2>/dev/null | awk -F' [|] ' '/^\| [a-z]/ {print $8}' | tr -d ' |' || true)
    kept=$(jq -r '.judgements[].verdict' "$f" | tr -d ' ')
    if [[ "$again" != "$kept" ]]; then
        echo "ab-summary: $f: judged again from its samples, the verdicts differ from the kept ones" >&2
        status=1
    fi
done
if ! diff <(summary) "$dir/summary.md" > /dev/null; then
    echo "ab-summary: $dir/summary.md differs from its trials (scripts/ab-summary.sh $dir $pct > $dir/summary.md)" >&2
    status=1
fi
[[ $status == 0 ]] && echo "ab-summary: $dir: every trial's verdicts and the summary re-derive from the kept samples"
exit "$status"

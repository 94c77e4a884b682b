#!/usr/bin/env bash
# The summary of `scripts/ab-trials.sh`'s trials, from their kept ab.json
# files alone: per metric, how often the planted slowdown and the same code
# were called worse or better.
#
#   scripts/ab-summary.sh DIR           print it
#   scripts/ab-summary.sh DIR --check   also judge every trial again from its
#                                       samples (ledgerbench ab --rejudge)
#                                       and check the verdicts and
#                                       DIR/summary.md
#
# The planted slowdown is the planted trials' `planted_slowdown_pct`.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/ab-summary.sh DIR [--check]}
check=${2:-}
pct=$(jq -r '.planted_slowdown_pct // empty' "$dir/planted-1.json")
[[ -n "$pct" ]] || { echo "ab-summary: $dir/planted-1.json does not say the planted slowdown" >&2; exit 2; }
# The trials' rounds: one number, or their range and median when a band
# target made some trials longer (then the target too).
rounds() {
    local r t
    r=$(jq -s -r 'map(.samples.runs | length / 2) | sort
        | if .[0] == .[-1] then "\(.[0])"
          else "\(.[0])-\(.[-1]), median \((.[(length - 1) / 2 | floor] + .[length / 2 | floor]) / 2)" end' "$dir"/*-*.json)
    t=$(jq -r '. as $j | [(.noise_targets // [])[] | "more while \(.metric)\u0027s noise > ±\(.pct)%, up to \($j.max_rounds)"] | join("; ")' "$dir/planted-1.json")
    echo "$r${t:+; $t}"
}
summary() {
    local planted same commits judged
    planted=$(find "$dir" -name 'planted-*.json' | wc -l)
    same=$(find "$dir" -name 'same-*.json' | wc -l)
    commits=$(jq -r '.commit' "$dir"/*-*.json | sort -u | paste -sd, -)
    judged=$(jq -r '.judged_by // .commit' "$dir"/*-*.json | sort -u | paste -sd, -)
    echo "# ledgerbench ab on this machine: $planted planted and $same same-code trials"
    echo
    echo "Planted: every store call ${pct}% longer (LEDGERBENCH_PLANT_SLOWDOWN_PCT=$pct); same: the build against itself."
    echo "Each trial: \`ledgerbench ab\` ($(rounds) rounds, alpha $(jq -r .alpha "$dir/planted-1.json"), \`ledgerbench $(jq -r .command "$dir/planted-1.json")\`); runs by build $commits, judged by $judged."
    echo
    echo "| metric | planted: worse | planted: better | same: worse | same: better | median effect, planted | median noise band, same |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    jq -r '.judgements[].metric' "$dir/planted-1.json" | while read -r m; do
        count() { jq -r --arg m "$m" '.judgements[] | select(.metric == $m) | .verdict' "$dir"/"$1"-*.json | grep -c "^$2\$" || true; }
        med() { jq -r --arg m "$m" ".judgements[] | select(.metric == \$m) | .$2" "$dir"/"$1"-*.json | sort -g | awk '{v[NR]=$1} END {printf "%+.2f%%", (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
        echo "| $m | $(count planted worse) | $(count planted better) | $(count same worse) | $(count same better) | $(med planted effect_pct) | ±$(med same band_pct | tr -d +) |"
    done
}
if [[ "$check" != --check ]]; then
    summary
    exit 0
fi
source scripts/bin.sh
BIN="$(ledgerbench_bin)"
status=0
for f in "$dir"/*-*.json; do
    again=$("$BIN" ab --rejudge "$f" --alpha "$(jq -r .alpha "$f")" 2>/dev/null | awk -F' [|] ' '/^\| [a-z]/ && !/^\| metric/ {print $8}' | tr -d ' |' || true)
    kept=$(jq -r '.judgements[].verdict' "$f" | tr -d ' ')
    if [[ "$again" != "$kept" ]]; then
        echo "ab-summary: $f: judged again from its samples, the verdicts differ from the kept ones" >&2
        status=1
    fi
done
if ! diff <(summary) "$dir/summary.md" > /dev/null; then
    echo "ab-summary: $dir/summary.md differs from its trials (scripts/ab-summary.sh $dir > $dir/summary.md)" >&2
    status=1
fi
[[ $status == 0 ]] && echo "ab-summary: $dir: every trial's verdicts and the summary re-derive from the kept samples"
exit "$status"

#!/usr/bin/env bash
# Re-renders every published report from its committed results and fails
# on any difference, so a change to the renderer either keeps the published
# reports or updates them in the same commit; then checks that the generated
# blocks of the README and the guide are what `ledgerbench report --summary`
# prints for their results, and that every results folder's provenance
# table, the results index and every screenshot are current
# (scripts/provenance.py).
#
# A published report is a folder under results/ with a `report.args` file:
# the results (run directories or files, relative to the folder) given to
# `ledgerbench report`, and `--html` where the report has an HTML page too. Its report.md, charts/ and CSV files must be exactly
# what `ledgerbench report $(cat report.args) --out .` writes there.
#
#   scripts/republish.sh            check (exit 1 on a difference)
#   scripts/republish.sh --update   render every report (and the README
#                                   block) again in place
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --workspace --locked --quiet
source scripts/bin.sh
BIN="$(ledgerbench_bin)"
UPDATE=0
[[ "${1:-}" == "--update" ]] && UPDATE=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
n=0
while IFS= read -r args_file; do
    dir=$(dirname "$args_file")
    read -r -a inputs < "$args_file"
    n=$((n + 1))
    if [[ $UPDATE == 1 ]]; then
        rm -rf "$dir/charts"
        (cd "$dir" && "$BIN" report "${inputs[@]}" --out . --overwrite 2>/dev/null)
        echo "republish: rendered $dir"
        continue
    fi
    out="$work/$n"
    (cd "$dir" && "$BIN" report "${inputs[@]}" --out "$out" 2>/dev/null)
    # Every file the renderer writes must match the committed one, and every
    # committed chart must still be one the renderer writes.
    while IFS= read -r f; do
        rel=${f#"$out"/}
        if ! cmp -s "$f" "$dir/$rel"; then
            echo "republish: $dir/$rel differs from a fresh render (scripts/republish.sh --update, then review)" >&2
            status=1
        fi
    done < <(find "$out" -type f | sort)
    if [[ -d "$dir/charts" ]]; then
        while IFS= read -r f; do
            rel=${f#"$dir"/}
            [[ -e "$out/$rel" ]] || { echo "republish: $dir/$rel is no longer rendered" >&2; status=1; }
        done < <(find "$dir/charts" -type f | sort)
    fi
done < <(find results -name report.args | sort)
[[ $n -gt 0 ]] || { echo "republish: no results/*/report.args found" >&2; exit 2; }

# The generated blocks of the README and the guide: each is what
# `ledgerbench report --summary` prints for a published folder's results
# (the verdict of the sweeps, in brief on the README; the durability
# matrix of the crash runs).
doc_block() {
    local file=$1 name=$2 folder=$3
    shift 3
    local begin="<!-- $name:begin -->" end="<!-- $name:end -->"
    local inputs args=() summary block current
    read -r -a inputs < "$folder/report.args"
    for a in "${inputs[@]}"; do [[ "$a" == --html ]] || args+=("$a"); done
    summary=$(cd "$folder" && "$BIN" report "${args[@]}" --summary "$@")
    block=$(printf '%s\n%s\n%s' "$begin" "$summary" "$end")
    if [[ $UPDATE == 1 ]]; then
        python3 - "$file" "$name" "$block" <<'PY'
import re, sys
path, name, block = sys.argv[1], sys.argv[2], sys.argv[3]
s = open(path).read()
pat = r"<!-- %s:begin -->.*?<!-- %s:end -->" % (name, name)
s2 = re.sub(pat, lambda _: block, s, count=1, flags=re.S)
if s2 == s and block not in s:
    sys.exit("republish: %s has no %s markers" % (path, name))
open(path, "w").write(s2)
PY
        echo "republish: $file $name block rendered"
    else
        current=$(sed -n "/^$begin\$/,/^$end\$/p" "$file")
        if [[ "$current" != "$block" ]]; then
            echo "republish: $file's $name block differs from \`ledgerbench report --summary\` of $folder (scripts/republish.sh --update)" >&2
            diff <(echo "$current") <(echo "$block") >&2 || true
            status=1
        fi
    fi
}
doc_block README.md verdict-brief results/verdict-sweeps-2026-11-22 --brief
doc_block docs/src/verdict.md verdict results/verdict-sweeps-2026-11-22
doc_block docs/src/durability.md durability results/crash-matrix-2026-11-24
# The timing gate's published trials: every verdict judged again from the
# kept samples, and each summary derived again from its trials.
while IFS= read -r summary; do
    scripts/ab-summary.sh "$(dirname "$summary")" --check || status=1
done < <(find results -path 'results/ab-*' -name summary.md | sort)
# The drift verdict's published trials: each table printed again by the
# command beside it in drift-trials.args (`FILE ARGS...` a line); seeded, so equal.
while IFS= read -r args_file; do
    dir=$(dirname "$args_file")
    while read -r file args; do
        # shellcheck disable=SC2086 # the arguments are words on purpose
        if [[ $UPDATE == 1 ]]; then
            "$BIN" $args > "$dir/$file"
        elif ! cmp -s <("$BIN" $args) "$dir/$file"; then
            echo "republish: $dir/$file differs from \`ledgerbench $args\` (scripts/republish.sh --update, then review)" >&2
            status=1
        fi
    done < "$args_file"
done < <(find results -name drift-trials.args | sort)
# Every results folder's provenance table and the results index, generated
# from the results files; every screenshot taken from the page it shows.
if [[ $UPDATE == 1 ]]; then
    python3 scripts/provenance.py --update
else
    python3 scripts/provenance.py || status=1
fi
[[ $status == 0 ]] && echo "republish: $n published reports, the generated blocks of the README and the guide, the provenance tables and the results index match their committed results"
exit "$status"

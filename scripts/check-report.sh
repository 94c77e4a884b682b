#!/usr/bin/env bash
# Opens the HTML report of a committed result in a real browser (headless
# Chromium) and fails on a JavaScript error, a script that did not finish,
# or a blank page. Writes the screenshot it took.
#
#   scripts/check-report.sh [RESULTS_DIR] [SCREENSHOT]
#
# RESULTS_DIR is a folder under results/ with a report.args (default: the
# verdict sweeps); SCREENSHOT defaults to a temporary file. Exit 0 when the
# page is fine, 1 when it is not, 2 when it could not be checked.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-results/verdict-sweeps-2026-11-22}
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
    echo "check-report: no chromium here (scripts/setup.sh installs it for CI: CI=true)" >&2
    exit 2
fi
cargo build --release --workspace --locked --quiet
source scripts/bin.sh
BIN="$(ledgerbench_bin)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
shot=${2:-$work/shot.png}
read -r -a inputs < "$dir/report.args"
args=()
for a in "${inputs[@]}"; do [[ "$a" == --html ]] || args+=("$a"); done
(cd "$dir" && "$BIN" report "${args[@]}" --html --out "$work/report" 2>/dev/null)
page="file://$work/report/report.html"
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0)
# The DOM after the script ran: it sets data-ready="1" on <body> as its
# last step, so an error before that leaves it unset.
timeout 120 "$browser" "${flags[@]}" --dump-dom "$page" > "$work/dom.html" 2> "$work/console.log" || true
timeout 120 "$browser" "${flags[@]}" --window-size=1280,1800 --screenshot="$shot" "$page" 2>> "$work/console.log" || true
status=0
if grep -E "Uncaught|SyntaxError|TypeError|ReferenceError" "$work/console.log" >&2; then
    echo "check-report: JavaScript error on the page" >&2
    status=1
fi
grep -q 'data-ready="1"' "$work/dom.html" || { echo "check-report: the page's script did not finish" >&2; status=1; }
grep -q 'id="answer"' "$work/dom.html" || { echo "check-report: no answer section on the page" >&2; status=1; }
rows=$(grep -o '<tr>' "$work/dom.html" | wc -l)
[[ $rows -gt 10 ]] || { echo "check-report: only $rows table rows" >&2; status=1; }
# A blank page compresses to a few KiB; the report's first screen does not.
size=$(stat -c %s "$shot" 2>/dev/null || echo 0)
[[ $size -gt 50000 ]] || { echo "check-report: screenshot of $size bytes: a blank page?" >&2; status=1; }
[[ $status == 0 ]] && echo "check-report: $dir opens in $(basename "$browser") with $rows table rows, no script error; screenshot $shot ($size bytes)"
exit "$status"

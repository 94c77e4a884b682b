#!/usr/bin/env bash
# Builds the guide (docs/, mdBook) and fails on any warning or error it
# prints, then opens its front page in headless Chromium and fails on a
# blank page or one without its chapters. The links and anchors of the
# guide, and the commands in it, are checked by crates/cli/tests/docs.rs.
#
#   scripts/docs.sh            build docs/book and check it
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v mdbook > /dev/null; then
    echo "docs: mdbook is missing: cargo install --locked mdbook --version 0.5.4 (scripts/setup.sh does, with CI=true)" >&2
    exit 2
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! mdbook build docs > "$log" 2>&1; then
    cat "$log" >&2
    echo "docs: mdbook build failed" >&2
    exit 1
fi
if grep -E 'WARN|ERROR' "$log" >&2; then
    echo "docs: mdbook build printed warnings: fix them (CI treats them as errors)" >&2
    exit 1
fi
chapters=$(grep -c '^ *- \[' docs/src/SUMMARY.md)
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
    echo "docs: no chromium here, the front page was not opened (scripts/setup.sh installs it: CI=true)" >&2
    exit 2
fi
work=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$work"' EXIT
page="file://$PWD/docs/book/index.html"
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0)
timeout 120 "$browser" "${flags[@]}" --dump-dom "$page" > "$work/dom.html" 2> "$work/console.log" || true
shot=${DOCS_SCREENSHOT:-$work/front.png}
timeout 120 "$browser" "${flags[@]}" --window-size=1280,900 --screenshot="$shot" "$page" 2>> "$work/console.log" || true
status=0
grep -q 'The ledgerbench guide' "$work/dom.html" || { echo "docs: the front page has no title" >&2; status=1; }
links=$(grep -o 'href="[a-z-]*\.html"' "$work/dom.html" | sort -u | wc -l)
[[ $links -ge $chapters ]] || { echo "docs: the front page links $links chapters, SUMMARY.md lists $chapters" >&2; status=1; }
size=$(stat -c %s "$shot" 2>/dev/null || echo 0)
[[ $size -gt 20000 ]] || { echo "docs: screenshot of $size bytes: a blank page?" >&2; status=1; }
[[ $status == 0 ]] && echo "docs: the guide built without a warning; its front page opens in $(basename "$browser") with $links chapter links (screenshot $shot, $size bytes)"
exit "$status"

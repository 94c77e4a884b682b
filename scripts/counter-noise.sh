#!/usr/bin/env bash
# Which counters vary between identical runs, engine by engine: each
# engine runs the gate's workload (`run stellar --preset smoke`) ten
# times in one results file, which `ledgerbench compare` then compares with
# itself; every counter whose ten runs differ is written, with its
# largest relative spread, to crates/report/src/compare/counter-noise.json.
# (Fewer were too few: two sets of three disagreed on fjall's space
# amplification, and five identical fjall runs left out the bytes its
# background work writes into a batch, which two single runs then showed
# 52% apart.)
# `compare` then shows such a counter unjudged when a side has one run, and
# judges it by the bootstrap interval of its runs with three a side
# (docs/src/reports.md, "Counters that vary").
#
#   scripts/counter-noise.sh BIN_DIR [ENGINE...]
#
# BIN_DIR holds the release `ledgerbench` of a clean commit (its Go library
# and sidecar beside it); ENGINE picks some engines (default: every one that
# stores, i.e. all but the null references). A benchmark, not a test: run it
# alone on the machine; the file names the command and the commit.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/counter-noise.sh BIN_DIR [ENGINE...]"
bin="${1:?$usage}/ledgerbench"
shift
[[ -x "$bin" ]] || { echo "counter-noise: no ledgerbench in ${bin%/*}" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ $# -gt 0 ]]; then
    engines=("$@")
else
    mapfile -t engines < <("$bin" list --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("\n".join(b for b in d["backends"] if b not in d["discard_writes"]))')
fi
flags=(--preset smoke --repeat 10)
for e in "${engines[@]}"; do
    echo "counter-noise: $e $(date -u +%H:%M:%S)"
    "$bin" run stellar "${flags[@]}" --backends "$e" --out "$work/$e" > "$work/$e.log" 2>&1 || {
        cat "$work/$e.log"; echo "counter-noise: the $e runs failed" >&2; exit 2; }
    # Exit 1 (something not the same) is expected: the rows are what we want.
    "$bin" compare --baseline "$work/$e" --current "$work/$e" --json "$work/$e.json" \
        > /dev/null || [[ $? -eq 1 ]]
done
python3 - "$work" "${flags[*]}" "${engines[@]}" <<'EOF'
import json, re, sys
work, flags, engines = sys.argv[1], sys.argv[2], sys.argv[3:]
env = json.load(open(f"{work}/{engines[0]}/results.json"))["env"]
commit = env.get("git_commit", "?")  # "-dirty" when built with changes
out = {
    "command": f"ledgerbench run stellar {flags} --backends ENGINE, at {commit}",
    "engines": {},
}
for e in engines:
    rows = json.load(open(f"{work}/{e}.json"))
    seen = {}
    for r in rows:
        if r.get("class") != "counter" or not r.get("spread"):
            continue
        lo, hi = r["spread"]
        if lo <= 0:
            continue
        name = re.sub(r"^batches\.[^.]+\.", "batches.*.", r["name"])
        # Three significant digits: a spread of a few bytes in a large
        # count is small but not zero.
        pct = float(f"{100.0 * (hi - lo) / lo:.3g}")
        seen[name] = max(seen.get(name, 0.0), pct)
    if seen:
        out["engines"][e] = [{"metric": m, "pct": p} for m, p in sorted(seen.items())]
    print(f"counter-noise: {e}: {len(seen)} counter(s) vary")
path = "crates/report/src/compare/counter-noise.json"
with open(path, "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
print(f"counter-noise: wrote {path}")
EOF

#!/usr/bin/env bash
# Which counters vary between identical runs, engine by engine: each
# engine runs the gate's workload (`run stellar --preset smoke`) ten
# times in one results file, which `ledgerbench compare` then compares with
# itself, and once in each of six separate processes, each compared with
# the first (as the gate compares two runs); every counter that
# differs in either way is written, with its largest relative spread, to
# crates/report/src/compare/counter-noise.json.
# (Fewer were too few: two sets of three disagreed on fjall's space
# amplification; and ten identical fjall runs in one process left out
# the bytes its background work writes into a batch, which separate runs
# then showed up to 100% apart: a process's first run is not its repeats.)
# `compare` then holds such a counter, with fewer than three runs a side,
# to its threshold plus twice the spread measured here, and judges it by
# the bootstrap interval of its runs with three a side
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
flags=(--preset smoke)
repeats=10
processes=6
for e in "${engines[@]}"; do
    echo "counter-noise: $e $(date -u +%H:%M:%S)"
    mkdir -p "$work/$e"
    "$bin" run stellar "${flags[@]}" --repeat "$repeats" --backends "$e" --out "$work/$e/in" \
        > "$work/$e/in.log" 2>&1 || {
        cat "$work/$e/in.log"; echo "counter-noise: the $e runs failed" >&2; exit 2; }
    # Exit 1 (something not the same) is expected: the rows are what we want.
    "$bin" compare --baseline "$work/$e/in" --current "$work/$e/in" --json "$work/$e/in.json" \
        > /dev/null || [[ $? -eq 1 ]]
    for k in $(seq 1 "$processes"); do
        "$bin" run stellar "${flags[@]}" --backends "$e" --out "$work/$e/p$k" \
            > "$work/$e/p$k.log" 2>&1 || {
            cat "$work/$e/p$k.log"; echo "counter-noise: the $e run $k failed" >&2; exit 2; }
        [[ $k -eq 1 ]] && continue
        "$bin" compare --baseline "$work/$e/p1" --current "$work/$e/p$k" --json "$work/$e/p$k.json" \
            > /dev/null || [[ $? -eq 1 ]]
    done
done
python3 - "$work" "${flags[*]}" "$repeats" "$processes" "${engines[@]}" <<'EOF'
import glob, json, re, sys
work, flags, repeats, processes, engines = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
env = json.load(open(f"{work}/{engines[0]}/in/results.json"))["env"]
commit = env.get("git_commit", "?")  # "-dirty" when built with changes
out = {
    "command": f"ledgerbench run stellar {flags} --backends ENGINE, --repeat {repeats} in one process"
    f" and once in each of {processes} processes, at {commit}",
    "engines": {},
}


def general(name):
    return re.sub(r"^batches\.[^.]+\.", "batches.*.", name)


def pct(lo, hi):
    # Three significant digits: a spread of a few bytes in a large count is
    # small but not zero.
    return float(f"{100.0 * (hi - lo) / lo:.3g}")


for e in engines:
    seen = {}
    # Within one process: the spread of the repeats, as compare gives it.
    for r in json.load(open(f"{work}/{e}/in.json")):
        if r.get("class") != "counter" or not r.get("spread"):
            continue
        lo, hi = r["spread"]
        if lo > 0:
            name = general(r["name"])
            seen[name] = max(seen.get(name, 0.0), pct(lo, hi))
    # Across processes: every value each counter took in the separate runs.
    values = {}
    for f in sorted(glob.glob(f"{work}/{e}/p*.json")):
        for r in json.load(open(f)):
            if r.get("class") != "counter":
                continue
            for side in ("baseline", "current"):
                if r.get(side) is not None:
                    values.setdefault(r["name"], set()).add(r[side])
    for n, vs in values.items():
        lo, hi = min(vs), max(vs)
        if lo > 0 and hi > lo:
            name = general(n)
            seen[name] = max(seen.get(name, 0.0), pct(lo, hi))
    if seen:
        out["engines"][e] = [{"metric": m, "pct": p} for m, p in sorted(seen.items())]
    print(f"counter-noise: {e}: {len(seen)} counter(s) vary")
path = "crates/report/src/compare/counter-noise.json"
with open(path, "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
print(f"counter-noise: wrote {path}")
EOF

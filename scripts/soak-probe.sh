#!/usr/bin/env bash
# The rate of a soak. Issue #48 runs a soak at half the slowest engine's
# capacity (LittDB's method: a load every engine holds with room to spare,
# so a drift is the engine's, not a queue's). This runs the soak's workload
# closed loop (no --op-rate) for DURATION on each backend in turn and
# prints each one's capacity, the median of its intervals' operations a
# second over the run's second half (set DURATION and the workload's
# retention so that half is past the ramp), and half the slowest.
#
#   scripts/soak-probe.sh BIN_DIR OUT DURATION WORKLOAD [FLAGS...]
#
# BIN_DIR holds the release `ledgerbench` of a clean commit; OUT is a new
# directory that keeps the probe's results; FLAGS are `run soak
# WORKLOAD`'s (--backends, --param, --memory-limit, ...). A benchmark, not
# a test: run it alone on the machine.
set -euo pipefail
usage="usage: scripts/soak-probe.sh BIN_DIR OUT DURATION WORKLOAD [FLAGS...]"
bin="${1:?$usage}/ledgerbench"
out="${2:?$usage}"
duration="${3:?$usage}"
workload="${4:?$usage}"
shift 4
[[ -x "$bin" ]] || { echo "soak-probe: no ledgerbench in ${bin%/*}" >&2; exit 2; }
[[ ! -e "$out" ]] || { echo "soak-probe: $out exists; name a new directory" >&2; exit 2; }
for a in "$@"; do
    [[ "$a" != --op-rate* ]] || { echo "soak-probe: the probe runs closed loop; leave out --op-rate" >&2; exit 2; }
done
echo "soak-probe: $workload closed loop for $duration $(date -u +%H:%M:%S)"
# A backend that fails (a full disk, the watchdog) has its intervals until
# then; the summary says how many it had.
"$bin" run soak "$workload" --duration "$duration" "$@" --out "$out" > "$out.log" 2>&1 ||
    echo "soak-probe: the run exited $? (log: $out.log)"
if [[ ! -f "$out/segments.jsonl" ]]; then
    # Refused before it ran (bad flags): its own message says why.
    tail -n 5 "$out.log" >&2
    exit 2
fi
mv "$out.log" "$out/probe.log"
python3 - "$out" <<'EOF'
import json, statistics, sys
out = sys.argv[1]
rates = {}
for line in open(f"{out}/segments.jsonl"):
    s = json.loads(line)
    if s.get("total_secs"):
        rates.setdefault(s["label"], []).append(s["ops"] / s["total_secs"])
if not rates:
    sys.exit("soak-probe: no interval was recorded (see probe.log)")
print("| backend | intervals | capacity, ops/s (median of the second half) |")
print("|---|---:|---:|")
cap = {}
for label, r in rates.items():
    half = r[len(r) // 2:]
    cap[label] = statistics.median(half)
    print(f"| {label} | {len(r)} | {cap[label]:,.1f} |")
slow = min(cap, key=cap.get)
print(f"\nhalf the slowest ({slow}): --op-rate {cap[slow] / 2:.1f}")
EOF

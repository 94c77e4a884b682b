#!/usr/bin/env python3
"""Splits a run folder's segments into a file a run, for publishing.

Builds before the driver's `ops::Kept` (2026-11-29) kept every segment
of a run of operations that is not a soak twice: in results.json
(`replay.segments`) and, a line each, in segments.jsonl beside it (at 10x
a mixgraph run's results.json is 15 MB); newer builds keep them in
segments.jsonl alone
(`segments_file`), a file of every run's lines that still outgrows what a
repository should hold. This keeps each run's lines of segments.jsonl,
verbatim, in a file of its own (`segments-LABEL.jsonl`), and in
results.json points the run at it (`segments_file`) with its list
emptied; reports read the segments from there. Nothing else in
results.json changes (it is written back as ledgerbench wrote it). It
refuses unless a run's lines are exactly its listed segments (where it
lists them), and removes segments.jsonl only once every line is in a
run's file.

    python3 scripts/segments-out.py FOLDER
"""
import json
import os
import sys


def main(folder):
    path = os.path.join(folder, "results.json")
    with open(path) as f:
        results = json.load(f)
    lines = {}
    if not os.path.exists(os.path.join(folder, "segments.jsonl")):
        sys.exit(f"segments-out: {folder} has no segments.jsonl: nothing to split")
    with open(os.path.join(folder, "segments.jsonl")) as f:
        for line in f:
            lines.setdefault(json.loads(line)["label"], []).append(line)
    moved, files = 0, {}
    for run in results["runs"]:
        replay, label = run.get("replay"), run["label"]
        if not replay or replay.get("segments_file") not in (None, "segments.jsonl"):
            continue
        mine = lines.get(label, [])
        kept = [{k: v for k, v in json.loads(l).items() if k != "label"} for l in mine]
        if replay.get("segments_file") is None and kept != replay["segments"]:
            sys.exit(f"segments-out: {label}'s lines in segments.jsonl are not its segments; nothing changed")
        if replay.get("segments_file") and replay["segments"]:
            sys.exit(f"segments-out: {label} lists segments and names segments.jsonl too; nothing changed")
        name = f"segments-{label}.jsonl"
        files[name] = mine
        replay["segments"], replay["segments_file"] = [], name
        moved += len(mine)
    if moved != sum(len(v) for v in lines.values()):
        sys.exit("segments-out: segments.jsonl holds lines of no listed run; nothing changed")
    for name, mine in files.items():
        with open(os.path.join(folder, name), "w") as f:
            f.writelines(mine)
    with open(path, "w") as f:
        f.write(json.dumps(results, indent=2, ensure_ascii=False))
    os.remove(os.path.join(folder, "segments.jsonl"))
    print(f"segments-out: {moved} segments of {len(results['runs'])} runs moved to segments-LABEL.jsonl in {folder}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])

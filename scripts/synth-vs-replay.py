#!/usr/bin/env python3
"""A fitted model's run beside the run it was fitted from, store by store.

    scripts/synth-vs-replay.py REPLAY/results.json SYNTH/results.json

REPLAY is a Stellar run (`run stellar`) or a replay, SYNTH a `run synth` of
the model `fit` made from its trace, on the same backends, memory limit and
durability. Per backend and store it prints, over the batches (SYNTH's
segments after its `load` mark): the store's seconds (write + flush +
compaction) per 1,000 entries written, the engine's and the device's
write amplification (bytes the engine and the device wrote per logical
byte), and each figure's ratio synth / replay. A figure a run did not
measure is shown as n/a, never 0.
"""
import json
import os
import statistics
import sys


def segments_of(results_path):
    """A synth run's segments by backend label, from the segments.jsonl
    beside its results.json (synth records segments there, not batches)."""
    path = os.path.join(os.path.dirname(results_path), "segments.jsonl")
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip():
                    seg = json.loads(line)
                    out.setdefault(seg["label"], []).append(seg)
    return out


def batches(run, segments=()):
    """The run's batches (a synth run's segments), leaving out the
    initial-state load and a last segment shorter than the others (the
    operations' remainder: 2 of 526,512 in the Stellar model), which is
    not a batch's worth of work."""
    rows = run.get("batches") or list(segments)
    rows = [b for b in rows if b.get("mark") != "load"]
    if len(rows) > 1 and rows[-1].get("ops", 0) < rows[0].get("ops", 0):
        rows = rows[:-1]
    return rows


def totals(run, segments=()):
    """Per store: entries, secs, logical, engine and device bytes."""
    out = {}
    for b in batches(run, segments):
        for s in b.get("stores", []):
            t = out.setdefault(s["store"], {"batches": 0, "entries": 0, "secs": 0.0,
                                            "logical": 0, "engine": 0, "device": 0,
                                            "device_seen": True, "per_batch": []})
            secs = s.get("write_secs", 0.0) + s.get("flush_secs", 0.0) + s.get("compact_secs", 0.0)
            t["batches"] += 1
            t["entries"] += s.get("entries", 0)
            t["secs"] += secs
            t["logical"] += s.get("logical_bytes", 0)
            t["engine"] += s.get("engine_write_bytes", 0)
            if "device_write_bytes" in s:
                t["device"] += s["device_write_bytes"]
            else:
                t["device_seen"] = False
            if s.get("entries"):
                t["per_batch"].append(1000.0 * secs / s["entries"])
    return out


def fmt(x, digits=3):
    return "n/a" if x is None else f"{x:.{digits}g}"


def ratio(a, b):
    return None if a is None or b is None or a == 0 else b / a


def figures(t):
    """Seconds per 1k entries (total and median batch), engine WA, device WA."""
    if not t or not t["entries"] or not t["logical"]:
        return None, None, None, None
    per_k = 1000.0 * t["secs"] / t["entries"]
    med = statistics.median(t["per_batch"]) if t["per_batch"] else None
    wa_engine = t["engine"] / t["logical"] if t["engine"] else None
    wa_device = t["device"] / t["logical"] if t["device_seen"] and t["device"] else None
    return per_k, med, wa_engine, wa_device


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    replay, synth = (json.load(open(p)) for p in sys.argv[1:])
    segments = segments_of(sys.argv[2])
    by_label = {r["label"]: r for r in synth["runs"]}
    print(f"replay: `{replay.get('command', '?')}` (seed {replay.get('seed', '?')})")
    print(f"synth: `{synth.get('command', '?')}` (seed {synth.get('seed', '?')})\n")
    print("| backend | store | batches r / s | s per 1k entries r / s (ratio) "
          "| a batch's median s per 1k r / s (ratio) | engine WA r / s (ratio) | device WA r / s (ratio) |")
    print("|---|---|---|---|---|---|---|")
    for r in replay["runs"]:
        s = by_label.get(r["label"])
        if s is None:
            print(f"| {r['label']} | | no synth run of this backend | | | | |")
            continue
        rt, st = totals(r), totals(s, segments.get(s["label"], ()))
        for store in rt:
            a, b = figures(rt[store]), figures(st.get(store))
            cells = [f"{fmt(x)} / {fmt(y)} ({fmt(ratio(x, y), 2)})" for x, y in zip(a, b)]
            nb = f"{rt[store]['batches']} / {st.get(store, {}).get('batches', 0)}"
            print(f"| {r['label']} | {store} | {nb} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

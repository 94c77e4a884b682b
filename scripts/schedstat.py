#!/usr/bin/env python3
"""Where a command's threads spend their time: on a CPU, runnable but
waiting for one, or asleep (blocked on a lock, a futex, IO).

    scripts/schedstat.py [--every SECS] [--json FILE] -- CMD [ARG...]

Runs CMD and, every SECS (default 0.02), reads each thread's
/proc/PID/task/TID/schedstat (nanoseconds on a CPU, nanoseconds runnable
on a run queue, time slices), stat (user and system CPU time in clock
ticks, minor page faults) and status (voluntary and involuntary context
switches) for CMD and every process it starts, keeping each
thread's last reading. At the end it prints, per process name and thread
name, the threads' summed seconds on a CPU (and its user and system
split, to a clock tick), waiting for one, asleep (its life minus both),
their context switches and minor faults; --json writes the same rows.

Why: two tools can run the same instructions in the same CPU time and
still differ in throughput when one's threads sleep more (a lock handed
over badly, a condition variable woken late) or wait longer for a CPU
(more runnable threads than cores). This tells which.

Limits: a thread that ends between two readings loses up to SECS of its
figures; the polling itself costs a little CPU, alike for whatever runs
under it. Needs a kernel with schedstats (/proc/self/schedstat).
"""

import argparse
import json
import os
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def boot_secs():
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])


def children(pid):
    """pid and every process below it, each with its depth below pid,
    from the kernel's child lists."""
    out, todo = [], [(pid, 0)]
    while todo:
        p, depth = todo.pop()
        out.append((p, depth))
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend((int(c), depth + 1) for c in f.read().split())
        except OSError:
            continue
    return out


def read_task(pid, tid):
    base = f"/proc/{pid}/task/{tid}"
    with open(f"{base}/schedstat") as f:
        run, wait, slices = (int(x) for x in f.read().split()[:3])
    with open(f"{base}/comm") as f:
        comm = f.read().strip()
    with open(f"{base}/stat") as f:
        # The name in parentheses may hold spaces: fields follow the last
        # ')', the first of them proc(5)'s field 3.
        st = f.read().rsplit(")", 1)[1].split()
    minflt, user, system = int(st[7]), int(st[11]) / TICK, int(st[12]) / TICK
    start = int(st[19]) / TICK
    vol = invol = 0
    with open(f"{base}/status") as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches"):
                vol = int(line.split()[1])
            elif line.startswith("nonvoluntary_ctxt_switches"):
                invol = int(line.split()[1])
    return comm, start, run, wait, slices, vol, invol, user, system, minflt


def poll(seen, root):
    now = boot_secs()
    for pid, depth in children(root):
        try:
            with open(f"/proc/{pid}/comm") as f:
                proc = f.read().strip()
            # A process its parent started under the same name (ledgerbench's
            # worker under its supervisor) is a row of its own.
            if depth:
                proc = f"{proc} (child {depth})"
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                task = read_task(pid, tid)
            except (OSError, ValueError, IndexError):
                continue
            seen[(pid, int(tid))] = (proc, now, task)


def rows(seen):
    groups = {}
    for proc, last, task in seen.values():
        comm, start, run, wait, slices, vol, invol, user, system, minflt = task
        # RocksDB names its pool threads by pool and number (rocksdb:low3),
        # ledgerbench its clients lb-client-N: one row a pool.
        name = comm.rstrip("0123456789")
        g = groups.setdefault((proc, name), [0, 0.0, 0.0, 0.0, 0, 0, 0, 0.0, 0.0, 0])
        life = max(last - start, 0.0)
        on, queued = run / 1e9, wait / 1e9
        g[0] += 1
        g[1] += on
        g[2] += queued
        g[3] += max(life - on - queued, 0.0)
        g[4] += slices
        g[5] += vol
        g[6] += invol
        g[7] += user
        g[8] += system
        g[9] += minflt
    return [
        {
            "process": p,
            "thread": t,
            "threads": g[0],
            "cpu_secs": round(g[1], 3),
            "runqueue_secs": round(g[2], 3),
            "asleep_secs": round(g[3], 3),
            "slices": g[4],
            "voluntary_switches": g[5],
            "involuntary_switches": g[6],
            "user_secs": round(g[7], 2),
            "system_secs": round(g[8], 2),
            "minor_faults": g[9],
        }
        for (p, t), g in sorted(groups.items())
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--every", type=float, default=0.02, help="seconds between readings")
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD [ARG...]")
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        ap.error("give the command to run after --")
    if a.every <= 0:
        ap.error(f"--every is a positive number of seconds, not {a.every}")
    if not os.path.exists("/proc/self/schedstat"):
        sys.exit("schedstat.py: this kernel keeps no schedstats (/proc/self/schedstat)")
    seen = {}
    started = time.monotonic()
    child = subprocess.Popen(cmd)
    while child.poll() is None:
        poll(seen, child.pid)
        time.sleep(a.every)
    wall = time.monotonic() - started
    out = rows(seen)
    print(f"schedstat: {' '.join(cmd[:1])} exited {child.returncode} after {wall:.2f} s wall")
    print(
        f"{'process':<24} {'thread':<16} {'n':>3} {'cpu s':>8} {'user s':>7} {'sys s':>7} "
        f"{'queued s':>9} {'asleep s':>9} {'vol sw':>9} {'invol sw':>9} {'minflt':>8}"
    )
    for r in out:
        print(
            f"{r['process']:<24} {r['thread']:<16} {r['threads']:>3} {r['cpu_secs']:>8.2f} "
            f"{r['user_secs']:>7.2f} {r['system_secs']:>7.2f} "
            f"{r['runqueue_secs']:>9.2f} {r['asleep_secs']:>9.2f} "
            f"{r['voluntary_switches']:>9} {r['involuntary_switches']:>9} {r['minor_faults']:>8}"
        )
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"command": cmd, "wall_secs": round(wall, 3), "rows": out}, f, indent=1)
    sys.exit(child.returncode)


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# Stops the one-node cluster scripts/slurm-up.sh started in DIR and removes
# DIR: cancels its jobs and waits for them, stops slurmd, slurmctld and
# munged, ends any process still using DIR (a job's slurmstepd outlives
# slurmd), then deletes the directory. Refuses a directory slurm-up.sh did
# not make (no marker file), so it never removes what it did not create.
#
#   scripts/slurm-down.sh DIR
set -uo pipefail
dir=${1:?usage: scripts/slurm-down.sh DIR (the directory scripts/slurm-up.sh printed)}
say() { echo "slurm-down: $*" >&2; }
if [[ ! -f "$dir/.ledgerbench-slurm" ]]; then
    say "$dir was not made by scripts/slurm-up.sh (no .ledgerbench-slurm in it); nothing done"
    exit 2
fi
dir=$(cd "$dir" && pwd)
export SLURM_CONF="$dir/slurm.conf"
# Jobs first, while slurmctld and slurmd can still end them cleanly.
if [[ -f "$dir/slurmctld.pid" ]] && command -v scancel > /dev/null; then
    scancel --quiet --full --user="$(id -un)" 2> /dev/null
    for _ in $(seq 1 30); do
        [[ -z "$(squeue -h -o %i 2> /dev/null)" ]] && break
        sleep 1
    done
fi
# pid_of NAME: the daemon's pid, if it still runs.
pid_of() {
    local p
    p=$(cat "$dir/$1.pid" 2> /dev/null) || return 1
    [[ -n "$p" ]] && kill -0 "$p" 2> /dev/null && echo "$p"
}
for daemon in slurmd slurmctld munged; do
    p=$(pid_of "$daemon") || continue
    kill "$p" 2> /dev/null
    for _ in $(seq 1 50); do
        kill -0 "$p" 2> /dev/null || break
        sleep 0.1
    done
    kill -0 "$p" 2> /dev/null && { say "$daemon ($p) did not stop on SIGTERM; killing it"; kill -9 "$p"; }
done
# Whatever still has a file open, or its working directory, under DIR.
for proc in /proc/[0-9]*; do
    p=${proc#/proc/}
    [[ $p == "$$" ]] && continue
    if [[ "$(readlink "$proc/cwd" 2> /dev/null)" == "$dir"* ]] ||
        find "$proc/fd" -maxdepth 1 -lname "$dir/*" 2> /dev/null | grep -q .; then
        say "ending pid $p ($(tr '\0' ' ' < "$proc/cmdline" 2> /dev/null | cut -c1-60)), still using $dir"
        kill -9 "$p" 2> /dev/null
    fi
done
rm -rf "$dir"
say "stopped; $dir removed"

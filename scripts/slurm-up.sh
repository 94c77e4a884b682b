#!/usr/bin/env bash
# Starts a one-node Slurm cluster on this host: munged, slurmctld and slurmd
# as processes this script starts, with every file they use (config, munge
# key and socket, state, spool, logs, pid files) in one new directory.
# Nothing under /etc, /run or /var is written, so a real cluster's
# configuration on the same host is not touched. For the sweep test
# (crates/cli/tests/slurm.rs) and for trying examples/slurm/ by hand:
#
#   dir=$(scripts/slurm-up.sh)          prints the cluster's directory
#   export SLURM_CONF=$dir/slurm.conf   what sbatch, squeue, sinfo read
#   scripts/slurm-down.sh "$dir"        stops it, removes the directory
#
# The node is this host, with the CPUs and memory slurmd finds on it
# (`slurmd -C`), select/cons_tres, one partition `bench`. Needs root
# (slurmd runs each job as its user; ledgerbench's cells need root for
# loop devices and cgroups) and installs slurm-wlm and munge when missing.
# Exit 2, saying why and leaving nothing behind, when it cannot start.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "slurm-up: $*" >&2; }
if [[ $(id -u) != 0 ]]; then
    say "needs root: slurmd runs jobs as their users"
    exit 2
fi
if ! command -v slurmctld > /dev/null || ! command -v munged > /dev/null; then
    say "installing slurm-wlm and munge"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq slurm-wlm munge > /dev/null; } ||
        { say "could not install slurm-wlm and munge"; exit 2; }
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/ledgerbench-slurm.XXXXXX")
# slurm-down.sh removes only a directory that carries this marker.
touch "$dir/.ledgerbench-slurm"
chmod 755 "$dir"
fail() {
    say "$*"
    for log in munged slurmctld slurmd; do
        [[ -s "$dir/$log.log" ]] && { say "last lines of $log.log:"; tail -5 "$dir/$log.log" >&2; }
    done
    scripts/slurm-down.sh "$dir" > /dev/null || true
    exit 2
}
# Two free TCP ports on the loopback for slurmctld and slurmd.
read -r ctld_port d_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

mungekey --create --keyfile="$dir/munge.key" || fail "mungekey could not make a key"
munged --force --key-file="$dir/munge.key" --socket="$dir/munge.socket" \
    --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
    --seed-file="$dir/munged.seed" || fail "munged did not start"

host=$(hostname -s)
# slurmd's own view of the node (CPUs, sockets, cores, threads, memory), so
# the node is never drained for claiming more than it has.
node=$(slurmd -C | head -1) || fail "slurmd -C could not describe this host"
mkdir -p "$dir/state" "$dir/spool"
cat > "$dir/slurm.conf" << EOF
# A one-node cluster written by scripts/slurm-up.sh; every path is in $dir.
ClusterName=ledgerbench
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
# No cgroup plugins: ledgerbench makes its own memory cgroups per run.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
MaxArraySize=1001
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=bench Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start"
for _ in $(seq 1 60); do
    state=$(sinfo -h -N -o %t 2> /dev/null || true)
    if [[ "$state" == idle ]]; then
        say "one-node cluster up: $host idle ($node); export SLURM_CONF=$dir/slurm.conf"
        echo "$dir"
        exit 0
    fi
    sleep 1
done
fail "the node did not become idle within 60 s (sinfo says: ${state:-nothing})"

#!/bin/sh
# A single-node Slurm for tests, from Debian's slurm-wlm and munge: munged, slurmctld and
# slurmd on this machine, with their key, socket, ports, spool and state under one folder.
#
#   slurm-cluster.sh start DIR   starts them; prints the SLURM_CONF to export; exit 77 (skip)
#                                with the reason where Slurm cannot start here (not root,
#                                packages missing)
#   slurm-cluster.sh stop DIR    stops them
set -eu
cmd=$1
dir=$2
case "$cmd" in
  stop)
    for p in slurmd slurmctld munged; do
      if [ -f "$dir/$p.pid" ]; then
        kill "$(cat "$dir/$p.pid")" 2>/dev/null || true
      fi
    done
    sleep 1
    for p in slurmd slurmctld munged; do
      if [ -f "$dir/$p.pid" ]; then
        kill -9 "$(cat "$dir/$p.pid")" 2>/dev/null || true
        rm -f "$dir/$p.pid"
      fi
    done
    exit 0 ;;
  start) ;;
  *) echo "slurm-cluster.sh: unknown command '$cmd'; valid: start DIR, stop DIR" >&2; exit 2 ;;
esac

skip() { echo "SKIP: $*" >&2; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "Slurm's daemons need root here (running as uid $(id -u))"
for b in munged mungekey slurmctld slurmd sbatch squeue scontrol; do
  command -v "$b" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
  command -v "$b" >/dev/null 2>&1 || skip "$b is missing (scripts/setup.sh installs slurm-wlm and munge)"
done

mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"
mungekey --create --keyfile="$dir/munge/munge.key" --force >/dev/null 2>&1 \
  || dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/seed" \
  || skip "munged did not start ($(tail -1 "$dir/munged.log" 2>/dev/null))"

host=$(hostname -s)
node=$(slurmd -C | head -1)
# ports from the folder's name, so that two test runs on one machine do not collide
base=$((20000 + $(printf '%s' "$dir" | cksum | cut -d' ' -f1) % 20000))
cat >"$dir/slurm.conf" <<CONF
ClusterName=clustersimtest
SlurmctldHost=$host
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
MinJobAge=600
$node State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF" -i >/dev/null 2>&1 || skip "slurmctld did not start ($(tail -1 "$dir/slurmctld.log" 2>/dev/null))"
slurmd -f "$SLURM_CONF" >/dev/null 2>&1 || skip "slurmd did not start ($(tail -1 "$dir/slurmd.log" 2>/dev/null))"
# wait for the node to register
i=0
until sinfo -h -o '%t' 2>/dev/null | grep -q '^idle'; do
  i=$((i + 1))
  if [ $i -gt 60 ]; then
    skip "the node did not come up in 30 s ($(sinfo -h -o '%t %E' 2>&1 | head -1))"
  fi
  sleep 0.5
done
echo "$SLURM_CONF"

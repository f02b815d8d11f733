#!/bin/bash
# Single-node Slurm cluster on localhost with everything under $S (after
# shared/reference/real-clients-and-slurm.md Appendix E). Run as root. Ports 6817/6818.
set -eu
S=${S:?set S to a scratch dir}
chmod 755 $S  # munged needs execute permission on every directory above its socket
mkdir -p $S/munge $S/munge-key $S/state $S/spool $S/log $S/jobs
chmod 755 $S/munge; chmod 700 $S/munge-key
MEM=$(( $(awk '/MemTotal/{print int($2/1024)}' /proc/meminfo) - 2048 ))
[ -f $S/munge-key/munge.key ] || dd if=/dev/urandom of=$S/munge-key/munge.key bs=1 count=1024 status=none
chmod 600 $S/munge-key/munge.key
cat > $S/slurm.conf <<CONF
ClusterName=kltest
SlurmctldHost=localhost
AuthType=auth/munge
AuthInfo=socket=$S/munge/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool/%n
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd-%n.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$S/log/jobcomp.log
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$MEM State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$S/slurm.conf
/usr/sbin/munged --socket=$S/munge/munge.sock --key-file=$S/munge-key/munge.key \
  --pid-file=$S/munge/munged.pid --log-file=$S/log/munged.log --seed-file=$S/munge-key/munged.seed
for i in $(seq 50); do [ -S $S/munge/munge.sock ] && break; sleep 0.1; done
/usr/sbin/slurmctld -f $S/slurm.conf
/usr/sbin/slurmd -f $S/slurm.conf -N localhost
for i in $(seq 150); do [ "$(sinfo -h -N -t idle -o %N 2>/dev/null | wc -l)" -ge 1 ] && break; sleep 0.2; done
[ "$(sinfo -h -N -t idle -o %N 2>/dev/null | wc -l)" -ge 1 ] || { echo "slurm up.sh: node never became idle" >&2; sinfo >&2 || true; tail -20 $S/log/slurmctld.log $S/log/slurmd-localhost.log >&2 || true; exit 1; }

#!/bin/sh
# A single-node SLURM on this machine, to run `dllint --probe --launcher "srun -n 2" ...` for real.
#
# FOR A THROWAWAY SINGLE-NODE TEST MACHINE ONLY (a container, a CI box): run as root, it writes
# /etc/slurm/slurm.conf, runs munged, slurmctld and slurmd as root without systemd or cgroups
# (proctrack/linuxproc, task/none) and no accounting. Never on a host that has a real SLURM.
#
#   sh benchmarks/slurm_local.sh          # install (Debian: slurm-wlm, munge) and start; idempotent
#   sh benchmarks/slurm_local.sh stop     # stop the three daemons it started (by their pid files)
#
# Tested with Debian 12's slurm-wlm 22.05.8. Ready when `sinfo` shows the node idle and
# `srun -n 2 hostname` prints the host twice.
set -eu

RUN=/run/slurm-local            # pid files
LOGS=/var/log/slurm-local
CONF=/etc/slurm/slurm.conf

stop() {
    for daemon in slurmd slurmctld munged; do
        pidfile="$RUN/$daemon.pid"
        [ "$daemon" = munged ] && pidfile=/run/munge/munged.pid
        pid=$(cat "$pidfile" 2>/dev/null || true)
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
            kill "$pid" && echo "stopped $daemon ($pid)"
        fi
    done
}

if [ "${1:-start}" = stop ]; then
    stop
    exit 0
fi

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge
fi
mkdir -p "$RUN" "$LOGS" /var/spool/slurmctld /var/spool/slurmd /run/munge /etc/slurm

# munge: a key (the package makes one; make one if it did not), then the daemon as user munge.
if [ ! -s /etc/munge/munge.key ]; then
    /usr/sbin/mungekey --create --keyfile=/etc/munge/munge.key
fi
chown munge:munge /etc/munge/munge.key /run/munge && chmod 0400 /etc/munge/munge.key
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged
fi

# slurm.conf: this host as the only node, with the CPUs and memory slurmd finds.
host=$(hostname -s)
node=$(slurmd -C | head -n 1 | sed "s/^NodeName=[^ ]*/NodeName=$host NodeAddr=127.0.0.1/")
cat >"$CONF" <<EOF
# Written by dllint's benchmarks/slurm_local.sh: a throwaway single-node test cluster.
ClusterName=dllint-local
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
$node State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

if ! scontrol ping 2>/dev/null | grep -q "is UP"; then
    slurmctld
fi
if ! { [ -s "$RUN/slurmd.pid" ] && kill -0 "$(cat "$RUN/slurmd.pid")" 2>/dev/null; }; then
    slurmd
fi

# Wait for the node to register (a few seconds), then say how it stands.
for _ in $(seq 30); do
    sinfo -h -o %t 2>/dev/null | grep -q idle && break
    sleep 1
done
sinfo

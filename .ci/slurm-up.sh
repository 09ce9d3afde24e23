#!/usr/bin/env bash
# A real one-node SLURM cluster on this host for the SLURM tests: Debian's
# slurm-wlm and munge (22.05 on bookworm). Idempotent: installs what is missing, writes a minimal
# slurm.conf for this host, starts munged, slurmctld and slurmd if they are not running, and waits
# until `sinfo` shows the node idle. Needs root (apt-get, daemons). Exits non-zero with the daemons'
# log tails when the node does not come up within SLURM_UP_TIMEOUT seconds (default 120).
#
# No cgroups here, so processes are tracked by parent pid (proctrack/linuxproc) and nothing is
# confined; no accounting (no slurmdbd), so `sacct` is unavailable: job states come from `squeue`
# and `scontrol show job` (finished records are kept MinJobAge seconds).
set -euo pipefail

timeout_s=${SLURM_UP_TIMEOUT:-120}
base=/var/spool/tmcheck-slurm
conf=/etc/slurm/slurm.conf
marker="# written by tmcheck .ci/slurm-up.sh"
host=$(hostname -s)

die() { echo "slurm-up: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (apt-get and the daemons); run it with sudo"

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    echo "slurm-up: installing slurm-wlm and munge"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi

# munge: one key shared by every daemon on this host (the package's postinst usually made one).
if [ ! -s /etc/munge/munge.key ]; then
    mungekey --create --keyfile=/etc/munge/munge.key
fi
chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key
install -d -o munge -g munge -m 0755 /run/munge
install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
if ! munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged
    for _ in $(seq 20); do munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.5; done
    munge -n </dev/null | unmunge >/dev/null || die "munged did not start (see /var/log/munge/munged.log)"
fi

# slurm.conf: this host's real CPUs and memory, as slurmd itself detects them.
if [ -e "$conf" ] && ! grep -qF "$marker" "$conf"; then
    die "$conf exists and was not written by this script; refusing to replace a real cluster's config"
fi
node=$(slurmd -C | head -n 1)
case "$node" in NodeName=*) ;; *) die "slurmd -C printed no node line: $node" ;; esac
install -d -m 0755 "$base" "$base/state" "$base/spool" "$base/log"
new=$(cat <<EOF
$marker
ClusterName=tmcheck
SlurmctldHost=$host
AuthType=auth/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$base/state
SlurmdSpoolDir=$base/spool
SlurmctldPidFile=$base/slurmctld.pid
SlurmdPidFile=$base/slurmd.pid
SlurmctldLogFile=$base/log/slurmctld.log
SlurmdLogFile=$base/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
KillWait=5
MinJobAge=600
InactiveLimit=0
SlurmdTimeout=60
${node%% UpTime=*} State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
)
if [ ! -e "$conf" ] || [ "$(cat "$conf")" != "$new" ]; then
    printf '%s\n' "$new" >"$conf"
    changed=1
else
    changed=0
fi

running() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
if [ "$changed" = 1 ]; then
    for pidf in "$base/slurmd.pid" "$base/slurmctld.pid"; do
        if running "$pidf"; then kill "$(cat "$pidf")"; sleep 1; fi
    done
fi
running "$base/slurmctld.pid" || /usr/sbin/slurmctld
running "$base/slurmd.pid" || /usr/sbin/slurmd

deadline=$(( $(date +%s) + timeout_s ))
while :; do
    state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
    case "$state" in
        idle|mixed|allocated) break ;;
        down*|drain*) scontrol update NodeName="$host" State=RESUME 2>/dev/null || true ;;
    esac
    if [ "$(date +%s)" -ge "$deadline" ]; then
        echo "slurm-up: node $host not idle after ${timeout_s}s (sinfo: '${state:-no answer}')" >&2
        tail -n 20 "$base/log/slurmctld.log" "$base/log/slurmd.log" >&2 2>/dev/null || true
        exit 1
    fi
    sleep 1
done
echo "slurm-up: node $host $state ($(sinfo --version)), partition debug"

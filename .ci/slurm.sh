#!/usr/bin/env bash
# CI step: bring up a single-node SLURM from Debian's packages (munge, slurmctld, slurmd; no systemd, so the
# daemons are started here and stopped by their PID files), submit the smoke workflow through
# snakemake-executor-plugin-slurm with the project's cluster profile, run the same workflow locally, and check
# with tests/test_slurm.py that every training run was a SLURM job and the two runs' tables agree up to timings.
# Private ports, configuration and state directories, so nothing of the host's own SLURM (if any) is touched.
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/lib.sh
ROOT=$PWD

WORK=$(mktemp -d /var/tmp/effmarl-slurm.XXXXXX)
OUT="${EFFMARL_CI_OUT:-$WORK/out}"
chmod 755 "$WORK"                             # slurmctld runs as the slurm user and must reach its state dir
mkdir -p "$OUT" "$WORK"/{state,spool,log}
export SLURM_CONF=$WORK/slurm.conf ROOT WORK OUT
MUNGE_STARTED=0

stop_pidfile() {  # stop the daemon whose PID file is $1 (only it), waiting up to 10 s for it to end
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
  kill -9 "$pid" 2>/dev/null || true
}
cleanup() {
  stop_step
  scancel --quiet --full "--partition=ci" 2>/dev/null || true
  stop_pidfile "$WORK/slurmd.pid"
  stop_pidfile "$WORK/slurmctld.pid"
  [ "$MUNGE_STARTED" = 1 ] && stop_pidfile /run/munge/munged.pid
  grep -qs "^ClusterName=effmarl-ci$" /etc/slurm/slurm.conf && rm -f /etc/slurm/slurm.conf
  echo "slurm: daemons stopped; logs and outputs kept in $WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step "install slurmctld, slurmd, slurm-client, munge" 600 ensure_packages slurmctld slurmd slurm-client munge
# the slurm user exists only once the packages are installed (a bare CI machine has none before)
chown slurm:slurm "$WORK"/{state,spool,log}

# munge: a key, a run directory owned by munge, the daemon as the munge user (reused if one already answers).
if ! munge -n 2>/dev/null | unmunge > /dev/null 2>&1; then
  [ -s /etc/munge/munge.key ] || { mungekey --create; chown munge:munge /etc/munge/munge.key; }
  install -d -o munge -g munge -m 755 /run/munge
  runuser -u munge -- /usr/sbin/munged
  MUNGE_STARTED=1
fi

NODE=$(hostname -s)
getent hosts "$NODE" > /dev/null || echo "127.0.0.1 $NODE" >> /etc/hosts
MEMORY=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
# CR_Core, not CR_Core_Memory (without a default memory per CPU a job would take the whole node); no
# accounting database, hence --slurm-status-command squeue in the profile and MinJobAge long enough for squeue
# to still show finished jobs.
# Also at Debian's default place: srun inside a batch job does not see SLURM_CONF and falls back to a DNS
# lookup without it. Never over a configuration this script did not write.
if [ -e /etc/slurm/slurm.conf ] && ! grep -q "^ClusterName=effmarl-ci$" /etc/slurm/slurm.conf; then
  echo "FAILED: /etc/slurm/slurm.conf exists and is not this CI's; not touching a real SLURM installation" >&2
  exit 1
fi
cat > "$SLURM_CONF" <<EOF
ClusterName=effmarl-ci
SlurmctldHost=$NODE
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=7200
MpiDefault=none
NodeName=$NODE CPUs=$(nproc) RealMemory=$MEMORY State=UNKNOWN
PartitionName=ci Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
install -D -m 644 "$SLURM_CONF" /etc/slurm/slurm.conf

bring_up() {
  slurmctld -c -f "$SLURM_CONF"
  slurmd -f "$SLURM_CONF"
  until [ "$(sinfo -h -o %t 2>/dev/null)" = idle ]; do sleep 1; done
  sinfo
}
export -f bring_up
step "start slurmctld and slurmd, wait for an idle node" 120 bring_up

# The profile's settings as a user runs them; only the status polling is shortened for a small workflow
# (MinJobAge=7200 s stays well above 3 x 5 s, and above the whole run, so that squeue still lists its first jobs
# when the comparison reads them at the end: at 600 s a run of 888 s on a loaded machine lost its first five).
through_slurm() {
  snakemake --snakefile "$ROOT/Snakefile" --directory "$OUT/slurm" --configfile "$ROOT/configs/smoke.yaml" \
    --workflow-profile "$ROOT/workflow/profiles/slurm" --slurm-init-seconds-before-status-checks 5 \
    --latency-wait 10 --quiet rules > "$OUT/slurm.log" 2>&1 || {
      tail -40 "$OUT/slurm.log"
      # a refused submission (e.g. more memory than the node has) is only in slurmctld's log
      grep -h "_slurm_rpc_submit_batch_job" "$WORK/log/slurmctld.log" | tail -5
      return 1
    }
  squeue --states=all -h -o '%i %k %T' > "$OUT/slurm-jobs.txt"
  echo "SLURM jobs: $(wc -l < "$OUT/slurm-jobs.txt") ($(grep -c COMPLETED "$OUT/slurm-jobs.txt") completed)"
}
locally() {
  snakemake --snakefile "$ROOT/Snakefile" --directory "$OUT/local" --configfile "$ROOT/configs/smoke.yaml" \
    --cores 2 --quiet rules > "$OUT/local.log" 2>&1 || { tail -40 "$OUT/local.log"; return 1; }
}
export -f through_slurm locally
step "smoke workflow through SLURM (executor plugin, cluster profile)" 2400 through_slurm
step "smoke workflow locally, for comparison" 2400 locally
step "compare the SLURM and local outputs" 600 \
  env EFFMARL_SLURM_OUT="$OUT" python -m pytest -q -p no:cacheprovider tests/test_slurm.py

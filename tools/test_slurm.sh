#!/usr/bin/env bash
# The Slurm integration test: a one-node Slurm (slurmctld and slurmd on localhost, their state, spool,
# logs and config in a temporary directory, auth/none) runs the job array that
# `bwsim sweep --emit-slurm` writes; the shards merged with `bwsim merge-csv` must equal the
# one-process sweep's CSV (but for wall_seconds). Bounded: 60 s for the node to come up, 300 s for
# the jobs; the daemons are stopped by their process ids. Usage: test_slurm.sh BWSIM_BINARY
set -euo pipefail
bwsim="$(realpath "${1:?usage: test_slurm.sh BWSIM_BINARY}")"
src="$(cd "$(dirname "$0")/.." && pwd)"
command -v slurmctld > /dev/null && command -v slurmd > /dev/null && command -v sbatch > /dev/null ||
  { echo "test_slurm: slurmctld, slurmd and sbatch are needed (tools/test.sh installs them)" >&2; exit 1; }
work="$(mktemp -d)"
chmod 755 "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2> /dev/null || break; sleep 0.1; done
    kill -9 "$p" 2> /dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

# Free ports for the two daemons (the ephemeral range above the usual Slurm ports).
port=$((20000 + (RANDOM % 20000)))
mkdir -p "$work/state" "$work/spool"
export SLURM_CONF="$work/slurm.conf"
cat > "$SLURM_CONF" <<CONF
ClusterName=bwsimtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/none
CredType=cred/none
SlurmUser=$(id -un)
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF

slurmctld -D -i -f "$SLURM_CONF" > "$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" > "$work/slurmd.out" 2>&1 &
pids+=($!)
show_logs() { tail -n 30 "$work"/slurmctld.log "$work"/slurmd.log "$work"/*.out 2> /dev/null || true; }
for i in $(seq 120); do
  state="$(sinfo -h -n localhost -o %T 2> /dev/null || true)"
  [ "$state" = "idle" ] && break
  [ "$i" -eq 120 ] && { echo "test_slurm: the node did not come up (state '$state')"; show_logs; exit 1; }
  sleep 0.5
done

# The same sweep in one process, and as an array of 3 tasks.
cd "$work"
sweep=(sweep gemm --config "$src/sim_configs/b200.yaml" --param m=128,256 --param k=64,128,192 --n 256)
"$bwsim" "${sweep[@]}" --csv one.csv > /dev/null
"$bwsim" "${sweep[@]}" --emit-slurm sweep.sbatch --shards 3 --csv merged.csv > /dev/null
timeout 300 sbatch --wait --parsable sweep.sbatch > job.txt || { echo "test_slurm: the job array failed"; cat merged.csv.shard-*.log 2> /dev/null; show_logs; exit 1; }
"$bwsim" merge-csv merged.csv merged.csv.shard-*-of-3.csv
# The CSV without its wall_seconds column (the one value that differs between runs); a CSV without
# that column fails the test rather than comparing empty lines.
without_wall() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "wall_seconds") w = i; if (!w) exit 1 } { $w = ""; print }' "$1"
}
without_wall one.csv > one.nowall || { echo "test_slurm: one.csv has no wall_seconds column"; exit 1; }
without_wall merged.csv > merged.nowall || { echo "test_slurm: merged.csv has no wall_seconds column"; exit 1; }
if ! diff one.nowall merged.nowall; then
  echo "test_slurm: the merged shards differ from the one-process sweep"
  exit 1
fi
echo "test_slurm: job $(cat job.txt): 3 array tasks on a one-node Slurm; the merged CSV ($(($(wc -l < merged.csv) - 1)) points) equals the one-process sweep's"

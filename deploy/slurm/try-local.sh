#!/usr/bin/env bash
# Try the Slurm scripts without a cluster: a one-node Slurm cluster on this machine, from the
# distribution's packages (Debian/Ubuntu: apt-get install slurm-wlm munge), private to one folder.
# Its slurm.conf, state, spool, logs, munge key and socket all live there, its ports are free ones
# on loopback: no system configuration is read or changed, and no other cluster is touched.
#
#   deploy/slurm/try-local.sh [--out-dir DIR] [--shards N]
#       brings a cluster up in a temporary folder, runs the bundled example (examples/sgd-mini, the
#       lexical stand-in model on the CPU) through submit.sh --cpu, waits for the merge, prints the
#       report's path and numbers, and takes the cluster down again, whatever happened.
#       The run's files stay in DIR (default: out/slurm-example, wiped first).
#   deploy/slurm/try-local.sh up DIR [--cpus N] [--gpus N]
#       starts a cluster whose files are under DIR (created) and prints the line to export
#       (SLURM_CONF=DIR/slurm.conf): then sbatch, squeue, submit.sh... talk to it. --gpus N makes the
#       node advertise N pretend GPUs (empty files), so the scripts' --gres=gpu:1 is met as written.
#   deploy/slurm/try-local.sh down DIR
#       cancels its jobs, stops its daemons and every process they started, removes DIR.
#
# slurmd must run as root to start jobs as their users, so this must too. Exit 0 on success; 1
# with the reason (and the daemons' last log lines) on stderr when the cluster or the run fails;
# 2 for bad use.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

say() { echo "try-local.sh: $*" >&2; }
usage() {
  say "usage: try-local.sh [--out-dir DIR] [--shards N] | up DIR [--cpus N] [--gpus N] | down DIR"
  exit 2
}

need() {
  local absent=()
  for b in munged slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
    command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || absent+=("$b")
  done
  if [ ${#absent[@]} -gt 0 ]; then
    say "Slurm is not installed here (no ${absent[*]}): apt-get install slurm-wlm munge"
    exit 1
  fi
  if [ "$(id -u)" != 0 ]; then
    say "slurmd must run as root to start jobs: run this as root (sudo)"
    exit 1
  fi
}
PATH=$PATH:/usr/sbin:/sbin

# A free TCP port on loopback (the kernel's pick, released for Slurm to take).
free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{process.stdout.write(String(s.address().port));s.close();})'
}

log_tails() {
  local dir=$1
  for l in slurmctld.log slurmd.log munged.log; do
    [ -f "$dir/log/$l" ] && { echo "--- $l"; tail -n 15 "$dir/log/$l"; }
  done >&2 || true
}

up() {
  local dir=$1 cpus=$2 gpus=$3
  need
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  for sub in state spool log munge; do mkdir -p "$dir/$sub" && chmod 700 "$dir/$sub"; done
  # munged refuses a key others can read.
  head -c 1024 /dev/urandom >"$dir/munge/munge.key"
  chmod 400 "$dir/munge/munge.key"
  chmod 755 "$dir"
  local socket=$dir/munge/munge.socket
  munged --force --socket="$socket" --key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed"
  for _ in $(seq 50); do [ -S "$socket" ] && break; sleep 0.1; done
  [ -S "$socket" ] || { say "munged did not start"; log_tails "$dir"; down "$dir"; exit 1; }

  local host ctld_port slurmd_port gres='' gres_types=''
  host=$(hostname -s)
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  : >"$dir/gres.conf"
  if [ "$gpus" -gt 0 ]; then
    for ((i = 0; i < gpus; i++)); do : >"$dir/gpu$i"; done
    echo "Name=gpu File=$dir/gpu[0-$((gpus - 1))]" >"$dir/gres.conf"
    gres=" Gres=gpu:$gpus"
    gres_types='GresTypes=gpu'
  fi
  cat >"$dir/slurm.conf" <<EOF
ClusterName=todevaltry
# Loopback addresses: nothing depends on how this machine's name resolves.
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# A requeued job may start again once its old credential has expired: 10 s, not 120.
AuthInfo=socket=$socket,cred_expire=10
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
# A killed or requeued task gets SIGKILL 2 s after SIGTERM (default 30).
KillWait=2
MailProg=/bin/true
# The node may claim more CPUs than the machine has: the jobs are light, and run side by side.
SlurmdParameters=config_overrides
$gres_types
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus$gres State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$dir/slurm.conf
  # sbatch options from the caller's environment would change what the scripts ask for.
  unset "${!SBATCH_@}" "${!SQUEUE_@}" "${!SINFO_@}" 2>/dev/null || true
  slurmctld -i
  slurmd
  for _ in $(seq 300); do
    [ "$(sinfo -h -N -o %T 2>/dev/null || true)" = idle ] && {
      echo "export SLURM_CONF=$dir/slurm.conf"
      return 0
    }
    sleep 0.1
  done
  say "Slurm did not start: the node did not come up idle within 30 s"
  log_tails "$dir"
  down "$dir"
  exit 1
}

down() {
  local dir=$1
  [ -d "$dir" ] || return 0
  dir=$(cd "$dir" && pwd)
  local conf=$dir/slurm.conf
  if [ -f "$conf" ]; then
    # Jobs first (their steps end with them), then the daemons, each by its pid file.
    SLURM_CONF=$conf scancel --full --user="$(id -un)" >/dev/null 2>&1 || true
    for _ in $(seq 20); do
      [ -z "$(SLURM_CONF=$conf squeue -h -o %i 2>/dev/null || true)" ] && break
      sleep 0.5
    done
  fi
  local pid
  for f in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  # slurmstepd and job processes detach into sessions of their own: found by this cluster's
  # SLURM_CONF in their environment, and killed by pid.
  for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    [ "$pid" = $$ ] && continue
    if { tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$conf"; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
  rm -rf "$dir"
}

# The bundled example through submit.sh --cpu on a cluster that lives as long as this command.
example() {
  local out=$1 shards=$2
  need
  case "$out" in /*) ;; *) out=$PWD/$out ;; esac
  cd "$repo"
  local bin model
  if [ -f dist/src/cli/main.js ]; then bin="node $repo/bin/todeval.js"; else bin="node --import tsx $repo/src/cli/main.ts"; fi
  local cluster
  cluster=$(mktemp -d "${TMPDIR:-/tmp}/todeval-slurm-XXXXXX")
  # shellcheck disable=SC2064 # the folder is fixed now
  trap "down '$cluster'" EXIT
  trap 'exit 130' INT TERM
  up "$cluster" 4 0 >/dev/null
  export SLURM_CONF=$cluster/slurm.conf
  echo "cluster: one node, up in $cluster (SLURM_CONF=$SLURM_CONF)"

  # The model the example uses without a download: the lexical stand-in (NOT a language model).
  model=${TODEVAL_MODEL:-$repo/.cache/models/lexical-standin-v1}
  if [ ! -e "$model/lexical-standin.json" ] && [ -z "${TODEVAL_MODEL:-}" ]; then
    model=$cluster/lexical-standin
    # shellcheck disable=SC2086 # bin is a command with arguments
    $bin models build-standin lexical --out "$model" >/dev/null
  fi
  rm -rf "$out"
  mkdir -p "$out"
  local mini=$repo/examples/sgd-mini submitted merge
  submitted=$(TODEVAL_RUN_DIR=$out TODEVAL_SHARDS=$shards TODEVAL_INPUT=$mini/predictions.jsonl TODEVAL_BIN=$bin \
    "$here/submit.sh" --cpu score --dataset sgd --dialogues "$mini/dialogues.json" --schema "$mini/schema.json" \
    --model "$model" --threads 1 --progress none)
  echo "$submitted"
  merge=$(sed -n 's/^merge: job \([0-9]*\)$/\1/p' <<<"$submitted")
  for _ in $(seq 1200); do
    [ -z "$(squeue -h -j "$merge" -o %i 2>/dev/null || true)" ] && break
    sleep 0.5
  done
  if [ ! -f "$out/run.json" ]; then
    say "the merge job ended without $out/run.json; the jobs' logs:"
    for l in "$out"/logs/*; do [ -f "$l" ] && { echo "--- $l"; tail -n 20 "$l"; } >&2; done
    log_tails "$cluster"
    exit 1
  fi
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const pct = (x) => (x === null || x === undefined ? "n/a" : x.toFixed(2));
    console.log(`merged: ${r.dataset.turns} turns, SGSAcc ${pct(r.sgsacc.validated && r.sgsacc.validated.all)} (unvalidated ${pct(r.sgsacc.unvalidated.all)}), SER ${pct(r.ser.ser)}; model ${r.signature.model}`);
  ' "$out/run.json"
  echo "cluster: taken down on exit (run.turns.jsonl and the jobs' logs/ are beside run.json)"
}

case "${1:-}" in
  up | down)
    cmd=$1
    shift
    [ -n "${1:-}" ] || usage
    dir=$1
    shift
    if [ "$cmd" = down ]; then
      [ $# -eq 0 ] || usage
      down "$dir"
      exit 0
    fi
    cpus=8 gpus=0
    while [ $# -gt 0 ]; do
      case "$1" in
        --cpus) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || usage; cpus=$2; shift 2 ;;
        --gpus) [[ "${2:-}" =~ ^[0-9]+$ ]] || usage; gpus=$2; shift 2 ;;
        *) usage ;;
      esac
    done
    up "$dir" "$cpus" "$gpus"
    ;;
  *)
    out=$repo/out/slurm-example shards=2
    while [ $# -gt 0 ]; do
      case "$1" in
        --out-dir) [ -n "${2:-}" ] || usage; out=$2; shift 2 ;;
        --shards) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || usage; shards=$2; shift 2 ;;
        *) usage ;;
      esac
    done
    example "$out" "$shards"
    ;;
esac

#!/usr/bin/env bash
# A whole todeval run on a Slurm cluster, in one command: the jobs below, chained with
# --dependency=afterok, so the merge runs once every shard has finished.
#
#   TODEVAL_RUN_DIR=$PWD/runs/sys-a TODEVAL_SHARDS=8 TODEVAL_INPUT=$PWD/sys-a.jsonl \
#     deploy/slurm/submit.sh score --dataset sgd --data-dir /shared/todeval-data
#
#   1. score only: refs.sbatch, the ground truth scored once, which stores the references in
#      TODEVAL_REFERENCES (default: $TODEVAL_RUN_DIR/refs.jsonl; point several runs at one file);
#   2. shard.sbatch as an array of TODEVAL_SHARDS tasks, one shard each (after 1);
#   3. merge.sbatch: $TODEVAL_RUN_DIR/run.json and run.turns.jsonl (after every task of 2).
#
# COMMAND is score, rerank, evaluate (--sgsacc) or gcdf1; ARGS are its flags, less the ones the
# scripts add (-o, --turns, --shard, and for score -i, --references: give the predictions as
# TODEVAL_INPUT, since the references job scores the ground truth with the same ARGS).
# Prints the three job ids. Running the same command again resumes: finished shards rewrite
# their reports from their per-turn files, unfinished ones go on from them. When sbatch refuses a
# job (no controller, a bad partition or account...), its own message is shown, the jobs already
# submitted are named (scancel them, or fix the cause and run the same command again) and
# submit.sh exits 1.
#
# --cpu (before COMMAND): a CPU-only run without editing the scripts: every job is submitted with
# --gres=none, and the shards run --device cpu --dtype fp32 (TODEVAL_DTYPE=q8 for the quantized
# model). Give the tasks more cores in TODEVAL_SBATCH_ARGS (e.g. "--cpus-per-task=16").
#
# Environment: TODEVAL_RUN_DIR, TODEVAL_SHARDS (required); TODEVAL_INPUT, TODEVAL_REFERENCES,
# TODEVAL_DEVICE, TODEVAL_DTYPE, TODEVAL_BIN (see shard.sbatch); TODEVAL_SBATCH_ARGS, options for
# every sbatch (e.g. "--partition=gpu --account=lab"; word-split).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

fail() {
  echo "submit.sh: $*" >&2
  exit 2
}

cpu=0
if [ "${1:-}" = --cpu ]; then
  cpu=1
  shift
fi
command=${1:-}
shift || true
case "$command" in
  score | rerank | evaluate | gcdf1) ;;
  *) fail "usage: submit.sh [--cpu] score|rerank|evaluate|gcdf1 ARGS... (with TODEVAL_RUN_DIR and TODEVAL_SHARDS set)" ;;
esac
[ -n "${TODEVAL_RUN_DIR:-}" ] || fail "TODEVAL_RUN_DIR is not set: the run's folder, on storage every node sees"
[[ "${TODEVAL_SHARDS:-}" =~ ^[1-9][0-9]*$ ]] || fail "TODEVAL_SHARDS must be the number of shards (a positive integer), not '${TODEVAL_SHARDS:-}'"
for arg in "$@"; do
  case "$arg" in
    -o | --output | --output=* | --turns | --turns=* | --shard | --shard=* | --workers | --workers=*)
      fail "$arg: the scripts set it for every shard (see deploy/slurm/submit.sh)" ;;
  esac
  if [ "$command" = score ]; then
    case "$arg" in
      -i | --input | --input=* | --references | --references=*)
        fail "$arg: give score's predictions as TODEVAL_INPUT and its references file as TODEVAL_REFERENCES" ;;
    esac
  fi
done

mkdir -p "$TODEVAL_RUN_DIR/logs"
# Absolute paths: a job's working folder is wherever sbatch was called, which need not be here.
TODEVAL_RUN_DIR=$(cd "$TODEVAL_RUN_DIR" && pwd)
export TODEVAL_RUN_DIR TODEVAL_SHARDS
if [ -n "${TODEVAL_INPUT:-}" ]; then
  [ -e "$TODEVAL_INPUT" ] || fail "TODEVAL_INPUT: $TODEVAL_INPUT: no such file"
  TODEVAL_INPUT=$(cd "$(dirname "$TODEVAL_INPUT")" && pwd)/$(basename "$TODEVAL_INPUT")
  export TODEVAL_INPUT
fi

# shellcheck disable=SC2206 # word-split on purpose: several options in one variable
site=(${TODEVAL_SBATCH_ARGS:-})
if [ "$cpu" = 1 ]; then
  # Before the site's options, so that a --gres there still wins; sbatch's own options override
  # the scripts' #SBATCH --gres=gpu:1 line.
  site=(--gres=none ${site[@]+"${site[@]}"})
  TODEVAL_DEVICE=cpu
  TODEVAL_DTYPE=${TODEVAL_DTYPE:-fp32}
  export TODEVAL_DEVICE TODEVAL_DTYPE
fi

# One sbatch call per job, in this shell (not in $(...), where set -e does not reach): a refused
# submission stops here with sbatch's message above ours, instead of printing an empty job id.
submitted=()
job=
submit() {
  local what=$1 out
  shift
  # --parsable prints "id" or "id;cluster".
  if ! out=$(sbatch --parsable ${site[@]+"${site[@]}"} "$@"); then
    echo "submit.sh: sbatch did not submit the $what job (its message is above)${submitted[0]+; already submitted: ${submitted[*]}}" >&2
    exit 1
  fi
  job=${out%%;*}
  if ! [[ "$job" =~ ^[0-9]+$ ]]; then
    echo "submit.sh: sbatch printed no job id for the $what job ('$out')${submitted[0]+; already submitted: ${submitted[*]}}" >&2
    exit 1
  fi
  submitted+=("$what=$job")
}

after=()
if [ "$command" = score ]; then
  TODEVAL_REFERENCES=${TODEVAL_REFERENCES:-$TODEVAL_RUN_DIR/refs.jsonl}
  mkdir -p "$(dirname "$TODEVAL_REFERENCES")"
  TODEVAL_REFERENCES=$(cd "$(dirname "$TODEVAL_REFERENCES")" && pwd)/$(basename "$TODEVAL_REFERENCES")
  export TODEVAL_REFERENCES
  submit references --output="$TODEVAL_RUN_DIR/logs/%x-%j.out" "$here/refs.sbatch" "$@"
  echo "references: job $job"
  after=(--dependency="afterok:$job")
fi
# --kill-on-invalid-dep: a job whose dependency failed is cancelled instead of waiting forever.
submit shards --array="0-$((TODEVAL_SHARDS - 1))" ${after[@]+"${after[@]}"} --kill-on-invalid-dep=yes \
  --output="$TODEVAL_RUN_DIR/logs/%x-%A_%a.out" "$here/shard.sbatch" "$command" "$@"
shards=$job
echo "shards: job $shards ($TODEVAL_SHARDS tasks)"
submit merge --dependency="afterok:$shards" --kill-on-invalid-dep=yes \
  --output="$TODEVAL_RUN_DIR/logs/%x-%j.out" "$here/merge.sbatch" "$command"
echo "merge: job $job"
echo "report: $TODEVAL_RUN_DIR/run.json (logs in $TODEVAL_RUN_DIR/logs)"

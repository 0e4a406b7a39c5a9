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
# their reports from their per-turn files, unfinished ones go on from them.
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

command=${1:-}
shift || true
case "$command" in
  score | rerank | evaluate | gcdf1) ;;
  *) fail "usage: submit.sh score|rerank|evaluate|gcdf1 ARGS... (with TODEVAL_RUN_DIR and TODEVAL_SHARDS set)" ;;
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
submit() {
  local id
  # --parsable prints "id" or "id;cluster".
  id=$(sbatch --parsable ${site[@]+"${site[@]}"} "$@")
  echo "${id%%;*}"
}

after=()
if [ "$command" = score ]; then
  TODEVAL_REFERENCES=${TODEVAL_REFERENCES:-$TODEVAL_RUN_DIR/refs.jsonl}
  mkdir -p "$(dirname "$TODEVAL_REFERENCES")"
  TODEVAL_REFERENCES=$(cd "$(dirname "$TODEVAL_REFERENCES")" && pwd)/$(basename "$TODEVAL_REFERENCES")
  export TODEVAL_REFERENCES
  refs=$(submit --output="$TODEVAL_RUN_DIR/logs/%x-%j.out" "$here/refs.sbatch" "$@")
  echo "references: job $refs"
  after=(--dependency="afterok:$refs")
fi
# --kill-on-invalid-dep: a job whose dependency failed is cancelled instead of waiting forever.
shards=$(submit --array="0-$((TODEVAL_SHARDS - 1))" ${after[@]+"${after[@]}"} --kill-on-invalid-dep=yes \
  --output="$TODEVAL_RUN_DIR/logs/%x-%A_%a.out" "$here/shard.sbatch" "$command" "$@")
echo "shards: job $shards ($TODEVAL_SHARDS tasks)"
merge=$(submit --dependency="afterok:$shards" --kill-on-invalid-dep=yes \
  --output="$TODEVAL_RUN_DIR/logs/%x-%j.out" "$here/merge.sbatch" "$command")
echo "merge: job $merge"
echo "report: $TODEVAL_RUN_DIR/run.json (logs in $TODEVAL_RUN_DIR/logs)"

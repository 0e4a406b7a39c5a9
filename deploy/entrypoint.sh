#!/usr/bin/env bash
# The container's entry point (deploy/Dockerfile), one of three steps:
#   entrypoint.sh prepare                 data and model into the shared volume, once
#   entrypoint.sh shard score|rerank|evaluate ARGS  one shard of a Kubernetes Indexed Job
#   entrypoint.sh merge                   the shards' reports merged into the run's report
#
# Environment:
#   TODEVAL_RUN_DIR   folder on the shared volume for this run's files (required by shard, merge)
#   TODEVAL_SHARDS    N, the Job's completions (required by shard, merge)
#   JOB_COMPLETION_INDEX  set by Kubernetes for an Indexed Job's pod: 0..N-1 (shard)
#   TODEVAL_REFERENCES=1  score shards also store references; merge joins them (run.refs.jsonl)
#   TODEVAL_DTYPE     weights prepare pulls (default fp16); TODEVAL_DATA, HF_HOME as todeval reads them
#   TODEVAL_BIN       the todeval command (default: todeval)
set -euo pipefail

todeval() {
  # shellcheck disable=SC2086 # TODEVAL_BIN may be a command with arguments (node script.js)
  ${TODEVAL_BIN:-todeval} "$@"
}

need() {
  local name=$1
  if [ -z "${!name:-}" ]; then
    echo "entrypoint: $name is not set (see deploy/entrypoint.sh)" >&2
    exit 2
  fi
}

step=${1:-}
shift || true
case "$step" in
  prepare)
    # One pod, before the shards: they then read the same files instead of each downloading them.
    todeval data pull ${TODEVAL_DATA_ONLY:+--only "$TODEVAL_DATA_ONLY"}
    todeval models pull --dtype "${TODEVAL_DTYPE:-fp16}"
    ;;
  shard)
    need TODEVAL_RUN_DIR
    need TODEVAL_SHARDS
    need JOB_COMPLETION_INDEX
    command=${1:-}
    shift || true
    if [ "$command" != score ] && [ "$command" != rerank ] && [ "$command" != evaluate ]; then
      echo "entrypoint: shard runs score, rerank or evaluate (--sgsacc), not '${command}'" >&2
      exit 2
    fi
    # Kubernetes counts completions from 0, --shard from 1.
    k=$((JOB_COMPLETION_INDEX + 1))
    n=$TODEVAL_SHARDS
    part="$TODEVAL_RUN_DIR/part-$k-of-$n"
    mkdir -p "$TODEVAL_RUN_DIR"
    extra=()
    # A pod restarted after a node failure resumes from its per-turn (per-item) file.
    if [ "$command" != evaluate ]; then extra+=(--turns "$part.turns.jsonl"); fi
    if [ "$command" = score ] && [ "${TODEVAL_REFERENCES:-0}" = 1 ]; then extra+=(--references "$part.refs.jsonl"); fi
    exec ${TODEVAL_BIN:-todeval} "$command" "$@" --shard "$k/$n" -o "$part.json" ${extra[@]+"${extra[@]}"}
    ;;
  merge)
    need TODEVAL_RUN_DIR
    need TODEVAL_SHARDS
    n=$TODEVAL_SHARDS
    parts=()
    for ((k = 1; k <= n; k++)); do parts+=("$TODEVAL_RUN_DIR/part-$k-of-$n.json"); done
    extra=()
    # score and rerank shards keep per-turn files (evaluate shards have none): join them too.
    if [ -e "$TODEVAL_RUN_DIR/part-1-of-$n.turns.jsonl" ]; then extra+=(--turns "$TODEVAL_RUN_DIR/run.turns.jsonl"); fi
    if [ "${TODEVAL_REFERENCES:-0}" = 1 ]; then extra+=(--references "$TODEVAL_RUN_DIR/run.refs.jsonl"); fi
    # merge names any missing part in one line (exit 2): a shard that never finished.
    exec ${TODEVAL_BIN:-todeval} merge "${parts[@]}" -o "$TODEVAL_RUN_DIR/run.json" ${extra[@]+"${extra[@]}"}
    ;;
  *)
    echo "usage: entrypoint.sh prepare | shard score|rerank|evaluate ARGS... | merge" >&2
    exit 2
    ;;
esac

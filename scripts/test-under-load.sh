#!/usr/bin/env bash
# The test suite while CPU hogs keep the machine busy (a CI box shared with other work): reports the
# suite's exit code, any unhandled errors vitest printed (e.g. `Timeout calling "onTaskUpdate"`, a
# worker that could not answer its RPC) and the wall time, with the load average before and after.
#
#   scripts/test-under-load.sh [--hogs N] [--target-load L] [-- VITEST_ARGS...]
#
# N busy loops (default: 8 + the number of cores) run at normal priority beside `npm test` (or
# `npx vitest run VITEST_ARGS...` when given), and the script waits for the 1-minute load to reach L
# (default 8) before starting the suite. The hogs are this script's own children, killed by PID at
# the end whatever happens. The full log is kept in test-under-load.log in the working folder, and
# the event-loop-lag monitor's report (test/helpers/event-loop-lag.ts: each stretch of >= 1 s during
# which a worker's event loop ran no timer, with its CPU) in test-under-load.lag.log; the script
# prints its ten worst by CPU.
set -uo pipefail
cd "$(dirname "$0")/.."
hogs=$(( $(nproc) + 8 ))
target=8
vitest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --hogs) hogs="$2"; shift 2 ;;
    --target-load) target="$2"; shift 2 ;;
    --) shift; vitest_args=("$@"); break ;;
    *) echo "test-under-load: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
log=test-under-load.log
lag=test-under-load.lag.log
rm -f "$lag"
export TODEVAL_LAG_REPORT="$PWD/$lag"
load1() { cut -d' ' -f1 /proc/loadavg; }

pids=()
stop_hogs() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait "${pids[@]}" 2>/dev/null; }
trap stop_hogs EXIT
for _ in $(seq "$hogs"); do
  ( while :; do :; done ) &
  pids+=("$!")
done
echo "test-under-load: $hogs CPU hogs started; waiting for the 1-minute load to reach $target (now $(load1))"
for _ in $(seq 120); do
  awk -v l="$(load1)" -v t="$target" 'BEGIN { exit !(l >= t) }' && break
  sleep 5
done
before=$(cat /proc/loadavg)
echo "test-under-load: load before: $before"
start=$(date +%s.%N)
if [ ${#vitest_args[@]} -gt 0 ]; then
  npx vitest run "${vitest_args[@]}" >"$log" 2>&1
else
  npm test >"$log" 2>&1
fi
code=$?
end=$(date +%s.%N)
after=$(cat /proc/loadavg)
stop_hogs
trap - EXIT
# The lag monitor's own warnings name the RPC timeout they warn of: they are not errors of the run.
unhandled=$(grep -E 'Unhandled (Error|Rejection)|Timeout calling "onTaskUpdate"' "$log" | grep -vc '^event-loop-lag:')
echo "test-under-load: exit code $code; unhandled errors: $unhandled; wall $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s"
echo "test-under-load: load after: $after"
grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1
grep -E 'Unhandled|Timeout calling' "$log" | grep -v '^event-loop-lag:' | head -5
if [ -s "$lag" ]; then
  echo "test-under-load: the longest blocked event loops, by the worker's CPU (wall_s own_cpu_s children_cpu_s file test):"
  sort -t$'\t' -k2,2 -rn "$lag" | head -10
fi
echo "test-under-load: full log in $log"
exit "$code"

#!/usr/bin/env bash
# `npm test`: the type-check of src/, scripts/ and test/ (`npm run typecheck`) runs beside the tests
# instead of before them, and the build is the tests' own: vitest's global setup rebuilds dist/ when
# src/ is newer (test/helpers/build-setup.ts) and costs one walk of modification times when dist/ is
# current. Before, `npm run build` and the type-check ran side by side ahead of vitest: on a clean
# checkout (CI: `npm install` runs no `prepare`, .npmrc) the tests waited for the slower of the two
# (the type-check, ~20 s of one core against the build's ~15), and on a built one for a second tsc
# program that re-parsed every file to emit nothing (4.7 CPU-s). Now the tests start when dist/ is
# built, and the type-check's tail shares the cores with them. Its output is held back and printed
# after the tests', so its errors are not lost among the test lines.
# The type-check is incremental (its build info in .cache/, ignored by git): on a checkout that was
# checked before, it re-checks what changed since (a run with no edit: ~6 CPU-s instead of ~24).
# Exits with the tests' code, else the type-check's: either failing fails `npm test`. Arguments go to `vitest run`.
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp "${TMPDIR:-/tmp}/typecheck-XXXXXX.log")
trap 'rm -f "$log"' EXIT
npm run --silent typecheck >"$log" 2>&1 &
typecheck=$!
vitest run "$@"
tests=$?
wait "$typecheck"
typed=$?
if [ "$typed" -ne 0 ]; then
  cat "$log" >&2
  echo "npm test: the type-check failed (npm run typecheck, exit $typed)" >&2
fi
[ "$tests" -ne 0 ] && exit "$tests"
exit "$typed"

#!/usr/bin/env bash
# Runs a test filter back to back under three CPU busy loops (bounded by `timeout`), for
# SECONDS, and prints one line per run and a summary: how often the tests fail on a loaded
# machine (issue #20). Build first (swift build --build-tests); this runs --skip-build.
#   scripts/flake-under-load.sh [SECONDS] [FILTER]     defaults: 2400 HomeAPITests
set -uo pipefail
cd "$(dirname "$0")/.."
budget=${1:-2400}
filter=${2:-HomeAPITests}
logs=$(mktemp -d)
loops=()
for _ in 1 2 3; do
  timeout $((budget + 900)) bash -c 'while :; do :; done' &
  loops+=($!)
done
trap 'kill "${loops[@]}" 2>/dev/null' EXIT
start=$(date +%s)
runs=0
failed=0
while (($(date +%s) - start < budget)); do
  runs=$((runs + 1))
  t0=$(date +%s)
  swift test --skip-build --no-parallel --filter "$filter" >"$logs/run-$runs.log" 2>&1
  rc=$?
  ((rc == 0)) || failed=$((failed + 1))
  echo "run $runs: rc=$rc, $(($(date +%s) - t0)) s, $(grep -c '✘ Test' "$logs/run-$runs.log") failing test(s); log $logs/run-$runs.log"
done
echo "flake-under-load: $filter, $runs runs under three busy loops, $failed failed"

#!/usr/bin/env bash
# flake-under-load.sh: runs tests back to back on a loaded machine, for SECONDS (then stops by
# itself), and prints one line per run and a summary: how often they fail under load.
#
#   scripts/flake-under-load.sh [--busy N] [--lans N] [--runs N] SECONDS FILTER   swift test --filter
#   scripts/flake-under-load.sh [--busy N] [--lans N] [--runs N] SECONDS --job JOB [ARGUMENTS...]
#                                                                 a harness job (scripts/run)
#
# --runs N stops after N runs even within SECONDS.
# The load: N CPU busy loops (default 3) and N other fake LANs (default 0) that are brought up,
# given their Avahi daemons and taken down again in a loop, as a second fake-LAN check would.
# Every load process is bounded by `timeout` and stopped on exit. Build first (swift build
# --build-tests): test filters run with --skip-build. Needs root for --lans and for jobs that
# use fake LANs.
. "$(dirname "$0")/lib/common.sh"
BUSY=3; LANS=0; MAX_RUNS=0
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) MAX_RUNS="$2"; shift 2 ;;
    --busy) BUSY="$2"; shift 2 ;;
    --lans) LANS="$2"; shift 2 ;;
    *) break ;;
  esac
done
budget="${1:-2400}"; shift || true
[[ "$budget" =~ ^[0-9]+$ ]] || die "SECONDS must be a number, not '$budget'"
[[ "$BUSY" =~ ^[0-9]+$ && "$LANS" =~ ^[0-9]+$ && "$MAX_RUNS" =~ ^[0-9]+$ ]] || die "--busy, --lans and --runs take a count"
if [ "${1:-}" = --job ]; then
  shift; [ $# -gt 0 ] || die "--job needs a job name (scripts/run lists them)"
  label="job $*"; run_once() { "$ROOT/scripts/run" "$@"; }
else
  filter="${1:-HomeAPITests}"; set -- "$filter"
  label="$filter"; run_once() { swift test --skip-build --no-parallel --filter "$1"; }
fi
logs="$(mktemp -d /tmp/flake-under-load.XXXXXX)"
load=()
on_exit 'kill "${load[@]}" 2>/dev/null; wait 2>/dev/null'
for ((i = 0; i < BUSY; i++)); do
  timeout $((budget + 900)) bash -c 'while :; do :; done' &
  load+=($!)
done
# Other fake LANs churning: each its own up, Avahi on two hosts, a second, then down.
for ((i = 0; i < LANS; i++)); do
  timeout $((budget + 900)) bash -c '
    lan="flfl$1x$$"; lan="${lan:0:12}"
    trap "\"$0\" down \"\$lan\" >/dev/null 2>&1; exit 0" EXIT TERM INT
    while :; do
      "$0" up "$lan" a b >/dev/null 2>&1 && "$0" avahi "$lan" a b >/dev/null 2>&1 || echo "load LAN $lan: failed to start" >&2
      sleep 1
      "$0" down "$lan" >/dev/null 2>&1
    done' "$FAKELAN" "$i" 2>>"$logs/load-lans.log" &
  load+=($!)
done
start=$SECONDS; runs=0; failed=0
while ((SECONDS - start < budget)) && ((MAX_RUNS == 0 || runs < MAX_RUNS)); do
  runs=$((runs + 1)); t0=$SECONDS
  rc=0; run_once "$@" >"$logs/run-$runs.log" 2>&1 || rc=$?
  ((rc == 0)) || failed=$((failed + 1))
  echo "run $runs: rc=$rc, $((SECONDS - t0)) s; log $logs/run-$runs.log"
done
starts="$(grep -c 'failed to start' "$logs/load-lans.log" 2>/dev/null || true)"
echo "flake-under-load: $label, $runs runs under $BUSY busy loops and $LANS churning fake LANs ($starts load LAN starts failed), $failed failed"
((failed == 0))

#!/usr/bin/env bash
# relay-idle-bench.sh: do idle connections slow other homes' commands? (issue #17 item 5)
# Runs a matter-relay server on loopback, measures one home's command latency (p50/p99)
# without, then with IDLE authenticated but idle device connections of other homes, and
# prints both on a summary line.
#
#   scripts/relay-idle-bench.sh [IDLE] [SECONDS] [BINARY]
#
# Defaults: 2000 idle connections, 20 s of load per measurement. The measured home has 10
# devices and one controller sending 100 Toggle commands/s (within the relay's default
# frame-rate limits, which stay on). The idle devices are registered through the admin API
# in homes of 100 and connect with real relay clients that only answer pings. BINARY
# defaults to the matter-relay under .build (release if there is one, else debug).
# Everything stays on 127.0.0.1 and stops by itself.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
IDLE="${1:-2000}"
SECONDS_OF_LOAD="${2:-20}"
BIN="${3:-}"
DEVICES=10
RATE=100
if [ -z "$BIN" ]; then
  for candidate in "$HERE/../.build/release/matter-relay" "$HERE/../.build/debug/matter-relay"; do
    if [ -x "$candidate" ]; then BIN="$candidate"; break; fi
  done
fi
[ -n "$BIN" ] && [ -x "$BIN" ] || { echo "relay-idle-bench: no matter-relay (swift build -c release --product matter-relay)" >&2; exit 2; }

# Each idle connection is a socket in the relay and one in the bench (both inherit this limit).
NEEDED=$((IDLE + DEVICES + 1024))
if [ "$(ulimit -n)" != "unlimited" ] && [ "$(ulimit -n)" -lt "$NEEDED" ]; then
  ulimit -n 65536 2>/dev/null || ulimit -n "$NEEDED" 2>/dev/null ||
    { echo "relay-idle-bench: ulimit -n $(ulimit -n) is below $NEEDED and cannot be raised" >&2; exit 2; }
fi
echo "file descriptors: ulimit -n $(ulimit -n)"

WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

ADMIN_TOKEN="bench-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
printf '%s\n' "$ADMIN_TOKEN" > "$WORK/admin-token"
# Every connection comes from 127.0.0.1: let one address hold them all.
"$BIN" serve --host 127.0.0.1 --port 0 --database "$WORK/relay.sqlite" --admin-token-file "$WORK/admin-token" \
  --max-connections-per-address $((IDLE + DEVICES + 64)) --log-level error > "$WORK/serve.log" 2>&1 &
SERVER_PID=$!

PORT=""
for _ in $(seq 1 100); do
  PORT="$(sed -n 's/^matter-relay listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORK/serve.log" | head -n1)"
  [ -n "$PORT" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/serve.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$PORT" ] || { echo "relay-idle-bench: the relay did not start" >&2; cat "$WORK/serve.log" >&2; exit 1; }
echo "relay (pid $SERVER_PID) on 127.0.0.1:$PORT"

"$BIN" bench --relay "ws://127.0.0.1:$PORT" --admin-token "$ADMIN_TOKEN" \
  --devices "$DEVICES" --rate "$RATE" --duration "$SECONDS_OF_LOAD" --idle "$IDLE"

echo
echo "relay metrics:"
curl --noproxy '*' -fsS "http://127.0.0.1:$PORT/metrics" 2>/dev/null | grep -E '^relay_(connections|frames_routed_total|rejected_total|exchange_round_trip_seconds_(count|sum))' | grep -v " 0$" || true
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || true
tail -n1 "$WORK/serve.log"

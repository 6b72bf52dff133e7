#!/usr/bin/env bash
# relay-bench.sh: load a matter-relay server on loopback with DEVICES device connections and
# RATE Toggle commands per second for SECONDS seconds, and print p50/p90/p99 latency.
#
#   scripts/relay-bench.sh [DEVICES] [RATE] [SECONDS] [BINARY]
#   RELAY_BENCH_IDLE=N scripts/relay-bench.sh ...   (the same, without then with N idle
#                                                    connections of other homes)
#   RELAY_BENCH_FLOOD=N [RELAY_BENCH_FLOOD_RATE=R] scripts/relay-bench.sh ...
#                                                   (the same, without, while and after N
#                                                    connections of another home each send R
#                                                    frames/s, default 900; issue #37 item 7)
#
# Defaults: 1000 devices, 500 commands/s, 20 s. BINARY defaults to the matter-relay built
# under .build (release if there is one, else debug): `swift build -c release --product
# matter-relay`. The relay runs as its own process (`matter-relay serve`) on 127.0.0.1 with
# a temporary SQLite database; `matter-relay bench` registers the devices through the admin
# API, connects them (each served by a real InteractionServer), and sends exactly
# RATE x SECONDS commands through one controller connection. Latency is measured at the
# controller: invoke sent -> relay -> device -> relay -> InvokeResponse back. That one
# controller connection sends every command, so past the relay's per-connection frame-rate
# defaults (1,000/s, bursts of 4,000) the limits are raised to twice and four times RATE;
# below them they stay as a home has them. Everything stays on loopback and stops by itself.
# `scripts/run relay-idle-bench [IDLE] [SECONDS]` is the idle-connection measurement with its own
# defaults: one home of 10 devices at 100 commands/s, without then with IDLE idle connections.
. "$(dirname "$0")/lib/common.sh"
HERE="$ROOT/scripts"
DEVICES="${1:-1000}"
RATE="${2:-500}"
SECONDS_OF_LOAD="${3:-20}"
BIN="${4:-}"
IDLE="${RELAY_BENCH_IDLE:-0}"
FLOOD="${RELAY_BENCH_FLOOD:-0}"
FLOOD_RATE="${RELAY_BENCH_FLOOD_RATE:-900}"
if [ -z "$BIN" ]; then
  for candidate in "$HERE/../.build/release/matter-relay" "$HERE/../.build/debug/matter-relay"; do
    if [ -x "$candidate" ]; then BIN="$candidate"; break; fi
  done
fi
[ -n "$BIN" ] && [ -x "$BIN" ] || { echo "relay-bench: no matter-relay (swift build -c release --product matter-relay)" >&2; exit 2; }

# Each connection is a socket in the relay and one in the bench (both inherit this limit).
NEEDED=$((DEVICES + IDLE + FLOOD + 1024))
if [ "$(ulimit -n)" != "unlimited" ] && [ "$(ulimit -n)" -lt "$NEEDED" ]; then
  ulimit -n 65536 2>/dev/null || ulimit -n "$NEEDED" 2>/dev/null ||
    { echo "relay-bench: ulimit -n $(ulimit -n) is below $NEEDED and cannot be raised" >&2; exit 2; }
fi

WORK="$(mktemp -d)"
SERVER_PID=""
SAMPLER_PID=""
cleanup() {
  [ -z "$SAMPLER_PID" ] || kill "$SAMPLER_PID" 2>/dev/null || true
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
on_exit cleanup

ADMIN_TOKEN="bench-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
printf '%s\n' "$ADMIN_TOKEN" > "$WORK/admin-token"
# Every connection comes from 127.0.0.1: let one address hold them all.
limits=(--max-connections-per-address $((DEVICES + IDLE + FLOOD + 64)))
[ $((RATE * 2)) -le 1000 ] || limits+=(--max-frames-per-second $((RATE * 2)))
[ $((RATE * 4)) -le 4000 ] || limits+=(--frame-burst $((RATE * 4)))
# The bench home's commands and answers together, and everything from loopback, with room to spare.
[ $((RATE * 4)) -le 2000 ] || limits+=(--max-frames-per-second-per-home $((RATE * 4)))
if [ "$FLOOD" -gt 0 ]; then
  # The flooding home is another tenant: on loopback it shares the bench home's address, which
  # a real one would not, so the address limits are lifted and the home's limits are measured.
  limits+=(--max-frames-per-second-per-address 1000000 --max-bytes-per-second-per-address 1073741824)
else
  [ $((RATE * 8)) -le 5000 ] || limits+=(--max-frames-per-second-per-address $((RATE * 8)))
fi
"$BIN" serve --host 127.0.0.1 --port 0 --database "$WORK/relay.sqlite" --admin-token-file "$WORK/admin-token" \
  "${limits[@]}" --log-level error > "$WORK/serve.log" 2>&1 &
SERVER_PID=$!

PORT=""
for _ in $(seq 1 100); do
  PORT="$(sed -n 's/^matter-relay listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORK/serve.log" | head -n1)"
  [ -n "$PORT" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/serve.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$PORT" ] || { echo "relay-bench: the relay did not start" >&2; cat "$WORK/serve.log" >&2; exit 1; }
echo "relay (pid $SERVER_PID) on 127.0.0.1:$PORT"

# The relay's CPU, one figure a second (percent of one core), from its /proc ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat" 2>/dev/null || echo 0; }
(
  previous="$(cpu_ticks)"
  while kill -0 "$SERVER_PID" 2>/dev/null; do
    sleep 1
    now="$(cpu_ticks)"
    echo $(((now - previous) * 100 / $(getconf CLK_TCK)))
    previous="$now"
  done
) > "$WORK/cpu" &
SAMPLER_PID=$!

bench=(--devices "$DEVICES" --rate "$RATE" --duration "$SECONDS_OF_LOAD")
if [ "$FLOOD" -gt 0 ]; then bench+=(--flood-connections "$FLOOD" --flood-rate "$FLOOD_RATE"); else bench+=(--idle "$IDLE"); fi
MATTER_RELAY_ADMIN_TOKEN="$ADMIN_TOKEN" "$BIN" bench --relay "ws://127.0.0.1:$PORT" "${bench[@]}"
echo
echo "relay CPU, % of one core, each second of the run: $(tr '\n' ' ' < "$WORK/cpu")"

echo
echo "relay metrics:"
curl --noproxy '*' -fsS "http://127.0.0.1:$PORT/metrics" 2>/dev/null | grep -E '^relay_(connections|frames_routed_total|rejected_total|exchange_round_trip_seconds_(count|sum))' | grep -v " 0$" || true
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || true
tail -n1 "$WORK/serve.log"

#!/usr/bin/env bash
# relay-scale.sh: the cloud relay scaled out (issue #42), all on loopback with random ports:
# PostgreSQL 15 (its own data directory), two `matter-relay serve --database postgres://…`
# instances, and HAProxy in front (WebSocket-aware, health checks on /health).
#   1. `matter-relay migrate` moves an SQLite relay's home into PostgreSQL, and both instances see it;
#   2. a device connected to instance B is removed through instance A: the time until B closes
#      its connection is printed;
#   3. `matter-relay bench` holds DEVICES device connections and one controller through the
#      balancer and sends RATE commands/s for SECONDS s; KILL_AFTER s in, instance A is
#      SIGKILLed. Printed: the time until every device is connected again (through the balancer,
#      to B) and until the next command succeeds (goal: 5 s or less), and then whether the
#      dead instance's connection records are gone.
#
#   scripts/relay-scale.sh [--short] [DEVICES [RATE [SECONDS]]]
#       defaults 200 devices, 100 commands/s, 15 s; --short: 20, 20, 8 (the test command's form)
. "$(dirname "$0")/lib/common.sh"
. "$ROOT/scripts/lib/postgres.sh"
. "$ROOT/scripts/lib/relays.sh"
SHORT=""
if [ "${1:-}" = --short ]; then SHORT=1; shift; fi
DEVICES="${1:-$([ -n "$SHORT" ] && echo 20 || echo 200)}"
RATE="${2:-$([ -n "$SHORT" ] && echo 20 || echo 100)}"
SECONDS_OF_LOAD="${3:-$([ -n "$SHORT" ] && echo 8 || echo 15)}"
KILL_AFTER=3
build_products matter-relay
"$ROOT/scripts/apt-install.sh" haproxy postgresql-15
# Each connection is a socket in the balancer, one in a relay and one in the bench.
ulimit -n 65536 2>/dev/null || true

STATE="$(mktemp -d /tmp/relay-scale.XXXXXX)"
on_exit "rm -rf '$STATE'"
chmod 711 "$STATE"  # the server's user passes through to its own directory; the files here stay 0600
start_postgres "$STATE/pg"
echo "relay-scale: PostgreSQL on 127.0.0.1:$PG_PORT"
# 1. An SQLite relay's registrations into PostgreSQL.
"$BIN/matter-relay" home add "Moved Home" --database "$STATE/old.sqlite" >/dev/null
"$BIN/matter-relay" migrate --from "$STATE/old.sqlite" --to "$PG_URL"
"$BIN/matter-relay" home list --database "$PG_URL" | grep -q "Moved Home" || die "the migrated home is not in PostgreSQL"

ADMIN_TOKEN="scale-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
(umask 077; printf '%s\n' "$ADMIN_TOKEN" >"$STATE/admin-token")
relay_args=(--database "$PG_URL" --admin-token-file "$STATE/admin-token" --max-connections-per-address $((DEVICES + 256)) --log-level error)
start_relay "$BIN/matter-relay" "$STATE/a.log" "${relay_args[@]}"; PORT_A=$RELAY_PORT; PID_A=$RELAY_PID
start_relay "$BIN/matter-relay" "$STATE/b.log" "${relay_args[@]}"; PORT_B=$RELAY_PORT
echo "relay-scale: instances a (pid $PID_A) on 127.0.0.1:$PORT_A and b on 127.0.0.1:$PORT_B"

start_balancer "$STATE" $((DEVICES + 500)) "$PORT_A" "$PORT_B"
PORT_LB=$LB_PORT
echo "relay-scale: HAProxy on 127.0.0.1:$PORT_LB"
"$BIN/matter-relay" home list --database "$PG_URL" | grep -q "Moved Home"

# 2. A revocation through A closes a connection held by B.
MATTER_RELAY_ADMIN_TOKEN="$ADMIN_TOKEN" "$BIN/matter-relay" bench --relay "ws://127.0.0.1:$PORT_B" \
  --revoke-through "http://127.0.0.1:$PORT_A" --devices 1 --rate 1 --duration 2 >"$STATE/revocation.out" 2>&1 ||
  { cat "$STATE/revocation.out" >&2; die "the revocation check failed"; }
grep '^revocation:' "$STATE/revocation.out"

# 3. Load through the balancer, instance A SIGKILLed mid-traffic.
MATTER_RELAY_ADMIN_TOKEN="$ADMIN_TOKEN" "$BIN/matter-relay" bench --relay "ws://127.0.0.1:$PORT_LB" \
  --devices "$DEVICES" --rate "$RATE" --duration "$SECONDS_OF_LOAD" --kill-pid "$PID_A" --kill-after "$KILL_AFTER" \
  >"$STATE/bench.out" 2>&1 || { cat "$STATE/bench.out" >&2; die "the bench failed"; }
grep -E '^(commands:|latency |failover:)' "$STATE/bench.out"
failover="$(grep '^failover:' "$STATE/bench.out")"
case "$failover" in
  *"more than 60 s"*|*"succeeded after never"*|"") die "the home did not come back after the kill" ;;
esac
awk '{ for (i = 1; i < NF; i++) if ($i == "after") { v = $(i + 1); u = $(i + 2); s = (u ~ /^ms/) ? v / 1000 : v; if (s > m) m = s } }
     END { printf "relay-scale: failover goal (5 s or less): %s (slowest %.2f s)\n", (m <= 5 ? "met" : "missed"), m }' <<<"$failover"

# The dead instance's records: no device shows online through it.
stale="$(psql "$PG_URL" -Atc "SELECT COUNT(*) FROM relay_connection c JOIN relay_instance i ON i.id = c.instanceID
  WHERE i.heartbeatAt < now() - interval '3 seconds'")"
instances="$(psql "$PG_URL" -Atc "SELECT COUNT(*) FROM relay_instance")"
echo "relay-scale: after the kill: $instances live instance(s), $stale connection record(s) of a dead one"
[ "$stale" = 0 ] && [ "$instances" = 1 ] || die "the killed instance's records were not cleaned up"
echo "relay-scale: ok"

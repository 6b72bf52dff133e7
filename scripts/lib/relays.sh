# scripts/lib/relays.sh: `matter-relay serve` instances and an HAProxy in front of them, for a
# script, on loopback with random ports (issue #42: relay-scale.sh, relay-bench.sh). Source it
# after common.sh and postgres.sh (its free_port; start_postgres for the shared store):
#
#     . "$ROOT/scripts/lib/relays.sh"
#     start_relay BIN LOG ARGS...   `BIN serve --host 127.0.0.1 --port 0 ARGS...`, its output in LOG;
#                                   waits (bounded: 10 s) for its port. Sets RELAY_PORT, RELAY_PID.
#     start_balancer DIR MAXCONN PORT...
#                                   HAProxy (WebSocket-aware, leastconn, health checks on /health)
#                                   on 127.0.0.1 in front of relays on 127.0.0.1:PORT..., config and
#                                   logs in DIR; waits (bounded: 10 s) until it answers /health.
#                                   HAProxy holds two descriptors a connection, so past what one
#                                   process may open (ulimit -n) it runs as several processes on
#                                   the same port (SO_REUSEPORT, HAProxy's default on Linux: the
#                                   kernel spreads the connections); each is waited for on a
#                                   port of its own. Sets LB_PORT, and RELAYS_BALANCER (their pids).
#     stop_relays                   SIGTERM to every relay started here (SIGKILL after 5 s), so they
#                                   print their summaries; the balancers get SIGKILL.
# Whatever is still running when the script ends is SIGKILLed. Needs Debian's haproxy.
RELAYS_PIDS=()
RELAYS_BALANCER=""
# Registered with the first process, so it runs before the cleanups registered earlier (the
# database's stop, the state directory's removal).
_relays_started() {
  RELAYS_PIDS+=("$1")
  [ "${#RELAYS_PIDS[@]}" -gt 1 ] ||
    on_exit 'for pid in "${RELAYS_PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true'
}

start_relay() {
  local bin="$1" log="$2"
  shift 2
  "$bin" serve --host 127.0.0.1 --port 0 "$@" >"$log" 2>&1 &
  RELAY_PID=$!
  _relays_started "$RELAY_PID"
  RELAY_PORT=""
  disown "$RELAY_PID"  # may be killed on purpose: no job notice
  for _ in $(seq 100); do  # bounded: 10 s
    RELAY_PORT="$(sed -n 's/^matter-relay listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" | head -n1)"
    [ -n "$RELAY_PORT" ] && return 0
    kill -0 "$RELAY_PID" 2>/dev/null || break
    sleep 0.1
  done
  cat "$log" >&2
  die "relay $(basename "$log" .log) did not start"
}

start_balancer() {
  local dir="$1" maxconn="$2" port servers="" n=0 limit per=$2 count=1 i own
  shift 2
  # Two descriptors a connection and a few of its own: past the hard limit HAProxy refuses to start.
  limit="$(ulimit -n)"
  if [ "$limit" != unlimited ] && [ $((2 * maxconn + 100)) -gt "$limit" ]; then
    per=$(((limit - 100) / 2))
    # The kernel spreads connections by a hash, not evenly: a fifth to spare on each process.
    count=$(((maxconn * 6 / 5 + per - 1) / per))
    echo "$SCRIPT_NAME: HAProxy as $count processes on one port, maxconn $per each (ulimit -n $limit, two descriptors a connection)"
  fi
  for port in "$@"; do
    n=$((n + 1))
    servers+="  server r$n 127.0.0.1:$port"$'\n'
  done
  LB_PORT="$(free_port)"
  RELAYS_BALANCER=""
  for i in $(seq "$count"); do
    own="$(free_port)"
    cat >"$dir/haproxy-$i.cfg" <<CFG
global
  maxconn $per
defaults
  mode http
  timeout connect 1s
  timeout client 60s
  timeout server 60s
  # An upgraded WebSocket is a tunnel: idle up to the relays' pings.
  timeout tunnel 120s
  option redispatch
  retries 3
frontend relay
  bind 127.0.0.1:$LB_PORT
  # This process's own: to know it is up.
  bind 127.0.0.1:$own
  default_backend relays
backend relays
  balance leastconn
  option httpchk
  http-check send meth GET uri /health
  http-check expect status 200
  default-server check inter 500ms fall 2 rise 1
$servers
CFG
    haproxy -f "$dir/haproxy-$i.cfg" -db >"$dir/haproxy-$i.log" 2>&1 &
    RELAYS_BALANCER+="${RELAYS_BALANCER:+ }$!"
    disown $!
    _relays_started $!
    for _ in $(seq 100); do curl -fsS -m 1 -o /dev/null "http://127.0.0.1:$own/health" 2>/dev/null && continue 2; sleep 0.1; done
    cat "$dir/haproxy-$i.log" >&2
    die "haproxy $i of $count did not start"
  done
}

stop_relays() {
  local pid
  for pid in "${RELAYS_PIDS[@]}"; do
    if [[ " $RELAYS_BALANCER " == *" $pid "* ]]; then kill -9 "$pid" 2>/dev/null || true; else kill -TERM "$pid" 2>/dev/null || true; fi
  done
  for _ in $(seq 50); do  # bounded: 5 s
    local alive=""
    for pid in "${RELAYS_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ -n "$alive" ] || return 0
    sleep 0.1
  done
}

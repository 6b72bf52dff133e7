#!/usr/bin/env bash
# relay-bench.sh: load matter-relay on loopback with DEVICES device connections and RATE Toggle
# commands per second for SECONDS seconds, and print p50/p90/p99 latency and where the CPU went.
#
#   scripts/relay-bench.sh [--instances 1|2] [--database sqlite|postgres] [--cross-instance notify|forward]
#                          [--split] [DEVICES [RATE [SECONDS [BINARY]]]]
#       One configuration. Defaults: 1 instance on SQLite, 1000 devices, 500 commands/s, 20 s.
#       --instances 2 (PostgreSQL only): two instances behind HAProxy (leastconn, as
#       relay-scale.sh has them: scripts/lib/relays.sh), so about half the devices sit on the
#       controller's instance and half on the other. --split: no balancer; the controller
#       connects to instance a and every device to instance b, so every frame crosses.
#       --cross-instance: how frames cross (matter-relay serve --cross-instance; default notify).
#   scripts/relay-bench.sh --compare [RATE [SECONDS [BINARY]]]
#       Issue #42's table, each configuration a run of its own, side by side: 1 instance on
#       SQLite, 1 on PostgreSQL, 2 on PostgreSQL behind HAProxy (forwarding; NOTIFY at the
#       smallest size only), at 2,000 and 10,000 device connections ($RELAY_BENCH_SIZES).
#       Defaults: 5000/s for 10 s.
#   scripts/relay-bench.sh --compare-cross [RATE [SECONDS [BINARY]]]
#       NOTIFY against instance-to-instance forwarding, --split (every frame crosses), at 2,000
#       devices ($RELAY_BENCH_SIZES). Defaults: 2000/s for 10 s.
#   RELAY_BENCH_IDLE=N scripts/relay-bench.sh ...   (the same, without then with N idle
#                                                    connections of other homes)
#   RELAY_BENCH_FLOOD=N [RELAY_BENCH_FLOOD_RATE=R] scripts/relay-bench.sh ...
#                                                   (the same, without, while and after N
#                                                    connections of another home each send R
#                                                    frames/s, default 900; issue #37 item 7)
#
# BINARY defaults to the matter-relay built under .build (release if there is one, else debug):
# `swift build -c release --product matter-relay`. The relays run as their own processes
# (`matter-relay serve`) on 127.0.0.1, on a temporary SQLite file or a PostgreSQL 15 of their
# own (scripts/lib/postgres.sh); `matter-relay bench` registers the devices through the admin
# API, connects them (each served by a real InteractionServer), and sends exactly
# RATE x SECONDS commands through one controller connection. Latency is measured at the
# controller: invoke sent -> relay -> device -> relay -> InvokeResponse back. That one
# controller connection sends every command, so past the relay's per-connection frame-rate
# defaults (1,000/s, bursts of 4,000) the limits are raised to twice and four times RATE;
# below them they stay as a home has them. The CPU of the bench, the relays, PostgreSQL and
# HAProxy is sampled each second of the load (% of one core; this machine's whole is
# nproc x 100 %). Everything stays on loopback and stops by itself.
# `scripts/run relay-idle-bench [IDLE] [SECONDS]` is the idle-connection measurement with its own
# defaults: one home of 10 devices at 100 commands/s, without then with IDLE idle connections.
. "$(dirname "$0")/lib/common.sh"
. "$ROOT/scripts/lib/postgres.sh"
. "$ROOT/scripts/lib/relays.sh"
HERE="$ROOT/scripts"
INSTANCES=1
DATABASE=sqlite
CROSS=notify
SPLIT=""
COMPARE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --instances) INSTANCES="${2:-}"; shift 2 ;;
    --database) DATABASE="${2:-}"; shift 2 ;;
    --cross-instance) CROSS="${2:-}"; shift 2 ;;
    --split) SPLIT=1; shift ;;
    --compare) COMPARE=engines; shift ;;
    --compare-cross) COMPARE=cross; shift ;;
    -h|--help) sed -n '2,/^\. /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --*) die "unknown option $1 (see --help)" ;;
    *) break ;;
  esac
done
case "$INSTANCES" in 1|2) ;; *) die "--instances $INSTANCES: expected 1 or 2" ;; esac
case "$DATABASE" in sqlite|postgres) ;; *) die "--database $DATABASE: expected sqlite or postgres" ;; esac
case "$CROSS" in notify|forward) ;; *) die "--cross-instance $CROSS: expected notify or forward" ;; esac
[ "$INSTANCES" = 1 ] || [ "$DATABASE" = postgres ] || die "--instances 2 share a PostgreSQL store: add --database postgres"
[ -z "$SPLIT" ] || [ "$INSTANCES" = 2 ] || die "--split needs --instances 2"

find_binary() {
  BIN="${1:-}"
  if [ -z "$BIN" ]; then
    for candidate in "$HERE/../.build/release/matter-relay" "$HERE/../.build/debug/matter-relay"; do
      if [ -x "$candidate" ]; then BIN="$candidate"; break; fi
    done
  fi
  [ -n "$BIN" ] && [ -x "$BIN" ] || die "no matter-relay (swift build -c release --product matter-relay)"
}

# --- Side by side: each configuration a run of this script of its own, its figures in one table.
if [ -n "$COMPARE" ]; then
  if [ "$COMPARE" = engines ]; then
    RATE="${1:-5000}"; SECONDS_OF_LOAD="${2:-10}"; SIZES="${RELAY_BENCH_SIZES:-2000 10000}"
    CONFIGURATIONS=("1 sqlite notify" "1 postgres notify" "2 postgres notify" "2 postgres forward")
    # NOTIFY carries a few hundred crossing commands/s (--compare-cross): at the smallest size only.
    NOTIFY_SIZE="$(tr ' ' '\n' <<<"$SIZES" | sort -n | head -n1)"
  else
    RATE="${1:-2000}"; SECONDS_OF_LOAD="${2:-10}"; SIZES="${RELAY_BENCH_SIZES:-2000}"
    CONFIGURATIONS=("2 postgres notify split" "2 postgres forward split")
  fi
  find_binary "${3:-}"
  RUNS="$(mktemp -d)"
  on_exit "rm -rf '$RUNS'"
  ROWS=()
  n=0
  for size in $SIZES; do
    for configuration in "${CONFIGURATIONS[@]}"; do
      read -r instances database cross split <<<"$configuration"
      [ "$COMPARE" != engines ] || [ "$instances" = 1 ] || [ "$cross" = forward ] || [ "$size" = "$NOTIFY_SIZE" ] || continue
      n=$((n + 1))
      flags=(--instances "$instances" --database "$database" --cross-instance "$cross")
      [ -z "$split" ] || flags+=(--split)
      echo "relay-bench: run $n: ${flags[*]} $size devices, $RATE/s for $SECONDS_OF_LOAD s"
      started=$SECONDS
      bash "$SCRIPT_PATH" "${flags[@]}" "$size" "$RATE" "$SECONDS_OF_LOAD" "$BIN" >"$RUNS/$n.log" 2>&1 ||
        { echo "relay-bench: run $n failed; its last lines:"; tail -n 15 "$RUNS/$n.log" | sed 's/^/    /'; }
      grep -E '^(devices connected|commands:|latency |cpu during)' "$RUNS/$n.log" | sed 's/^/    /'
      echo "    ($((SECONDS - started)) s)"
      log="$RUNS/$n.log"
      connected="$(sed -n 's/^devices connected: \([0-9]*\) of.*/\1/p' "$log" | head -n1)"
      achieved="$(sed -n 's/^commands: .*(\([0-9.]*\) ok\/s)$/\1/p' "$log" | head -n1)"
      failed="$(sed -n 's/^commands: [0-9]* sent, [0-9]* ok, \([0-9]*\) failed.*/\1/p' "$log" | head -n1)"
      p50="$(sed -n 's/^latency .* p50 \([0-9.]* m\{0,1\}s\) .*/\1/p' "$log" | head -n1)"
      p99="$(sed -n 's/^latency .* p99 \([0-9.]* m\{0,1\}s\) .*/\1/p' "$log" | head -n1)"
      cpu="$(sed -n 's/^cpu during the load[^:]*: //p' "$log" | head -n1)"
      where="$([ "$instances" = 1 ] && echo "1" || { [ -n "$split" ] && echo "2 (controller on a, devices on b)" || echo "2 behind HAProxy"; })"
      ROWS+=("| $where | $([ "$database" = sqlite ] && echo SQLite || echo PostgreSQL) | $([ "$instances" = 1 ] && echo - || echo "$cross") | $size | ${connected:-?} | $RATE | ${achieved:-?} | ${p50:-n/a} | ${p99:-n/a} | ${failed:-?} | ${cpu:-?} |")
    done
  done
  echo
  echo "relay-bench: $RATE commands/s for $SECONDS_OF_LOAD s, one controller connection; $(nproc) cores shared by the bench, the relays, PostgreSQL and HAProxy"
  echo
  echo "| instances | store | cross-instance | device connections | connected | commands/s asked | commands/s achieved | p50 | p99 | failed | CPU, % of one core (bench / relays / postgres / haproxy) |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${ROWS[@]}"
  echo
  echo "Goal (issue #42, 2 instances): 10,000 connections, 5,000 commands/s, p99 < 20 ms."
  if [ "$COMPARE" = cross ]; then
    echo "Default: notify, because it needs nothing but the database every instance already reaches (no port"
    echo "between instances, no address to configure behind 0.0.0.0), and forwarding falls back to it anyway."
    echo "Its price is PostgreSQL's CPU: a transaction per batch and every notification read by every"
    echo "listener. Here it carried about 670 crossing commands/s at most (PostgreSQL at 41 % of a core"
    echo "on the shared 2 cores), forwarding the full 2,000/s with p99 39 ms: a fleet past a few hundred"
    echo "crossing commands/s runs --cross-instance forward (with --link-host behind 0.0.0.0)."
    echo "docs/ARCHITECTURE.md (the relay) has the figures."
  fi
  exit 0
fi

# --- One configuration.
DEVICES="${1:-1000}"
RATE="${2:-500}"
SECONDS_OF_LOAD="${3:-20}"
find_binary "${4:-}"
IDLE="${RELAY_BENCH_IDLE:-0}"
FLOOD="${RELAY_BENCH_FLOOD:-0}"
FLOOD_RATE="${RELAY_BENCH_FLOOD_RATE:-900}"
[ "$INSTANCES" = 1 ] || { [ "$IDLE" = 0 ] && [ "$FLOOD" = 0 ]; } || die "RELAY_BENCH_IDLE and RELAY_BENCH_FLOOD are one-instance runs"

# Each connection is a socket in the relay and one in the bench (both inherit this limit), and two in
# HAProxy: past this limit start_balancer runs it as several processes on one port.
NEEDED=$((DEVICES + IDLE + FLOOD + 1024))
if [ "$(ulimit -n)" != "unlimited" ] && [ "$(ulimit -n)" -lt 65536 ]; then
  ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
fi
if [ "$(ulimit -n)" != "unlimited" ] && [ "$(ulimit -n)" -lt "$NEEDED" ]; then
  echo "relay-bench: ulimit -n $(ulimit -n) is below $NEEDED and cannot be raised" >&2; exit 2
fi
[ "$DATABASE" = sqlite ] || "$ROOT/scripts/apt-install.sh" postgresql-15 >/dev/null
[ "$INSTANCES" = 1 ] || [ -n "$SPLIT" ] || "$ROOT/scripts/apt-install.sh" haproxy >/dev/null

WORK="$(mktemp -d /tmp/relay-bench.XXXXXX)"
on_exit "rm -rf '$WORK'"
chmod 711 "$WORK"  # PostgreSQL's user passes through to its own directory

ADMIN_TOKEN="bench-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
(umask 077; printf '%s\n' "$ADMIN_TOKEN" > "$WORK/admin-token")
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
if [ "$DATABASE" = postgres ]; then
  start_postgres "$WORK/pg"
  echo "PostgreSQL on 127.0.0.1:$PG_PORT"
  relay_args=(--database "$PG_URL" --cross-instance "$CROSS")
else
  relay_args=(--database "$WORK/relay.sqlite")
fi
relay_args+=(--admin-token-file "$WORK/admin-token" "${limits[@]}" --log-level error)
start_relay "$BIN" "$WORK/a.log" "${relay_args[@]}"
RELAY_PIDS=("$RELAY_PID"); RELAY_PORTS=("$RELAY_PORT")
URL="ws://127.0.0.1:$RELAY_PORT"; DEVICE_URL=""
if [ "$INSTANCES" = 2 ]; then
  start_relay "$BIN" "$WORK/b.log" "${relay_args[@]}"
  RELAY_PIDS+=("$RELAY_PID"); RELAY_PORTS+=("$RELAY_PORT")
  if [ -n "$SPLIT" ]; then
    DEVICE_URL="ws://127.0.0.1:$RELAY_PORT"
  else
    start_balancer "$WORK" $((DEVICES + IDLE + FLOOD + 500)) "${RELAY_PORTS[@]}"
    URL="ws://127.0.0.1:$LB_PORT"
    echo "HAProxy (pids $RELAYS_BALANCER) on 127.0.0.1:$LB_PORT"
  fi
fi
echo "relays (pids ${RELAY_PIDS[*]}) on 127.0.0.1:${RELAY_PORTS[*]}, $DATABASE$([ "$DATABASE" = sqlite ] || echo ", cross-instance $CROSS")"

bench=(--relay "$URL" --devices "$DEVICES" --rate "$RATE" --duration "$SECONDS_OF_LOAD")
[ -z "$DEVICE_URL" ] || bench+=(--device-relay "$DEVICE_URL")
if [ "$FLOOD" -gt 0 ]; then bench+=(--flood-connections "$FLOOD" --flood-rate "$FLOOD_RATE"); else bench+=(--idle "$IDLE"); fi
# Line-buffered: the sampler below watches its lines to know when the load runs.
MATTER_RELAY_ADMIN_TOKEN="$ADMIN_TOKEN" stdbuf -oL "$BIN" bench "${bench[@]}" > >(tee "$WORK/bench.out") 2>&1 &
BENCH_PID=$!

# CPU ticks of a set of processes.
ticks() {
  local total=0 pid t
  for pid in "$@"; do
    t="$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null)" || t=0
    total=$((total + ${t:-0}))
  done
  echo "$total"
}
postgres_pids() {
  [ "$DATABASE" = postgres ] || return 0
  local main
  main="$(head -n1 "$WORK/pg/data/postmaster.pid" 2>/dev/null)" || return 0
  echo "$main" $(ps -o pid= --ppid "$main" 2>/dev/null)
}
# Each second of the load (from the bench's "sending" line to its "commands:" line): the
# ticks each group used, summed, over the time those samples took by the clock (a loaded
# machine stretches a "second" of this loop: counted as one, the groups summed past 200 %).
HZ="$(getconf CLK_TCK)"
declare -A USED=([bench]=0 [relays]=0 [postgres]=0 [haproxy]=0)
samples=0
sampled_us=0
microseconds() { echo "${EPOCHREALTIME//[.,]/}"; }
group_ticks() {
  echo "$(ticks "$BENCH_PID") $(ticks "${RELAY_PIDS[@]}") $(ticks $(postgres_pids)) $(ticks ${RELAYS_BALANCER:-})"
}
read -r b0 r0 p0 h0 <<<"$(group_ticks)"
t0="$(microseconds)"
while kill -0 "$BENCH_PID" 2>/dev/null; do
  sleep 1
  read -r b1 r1 p1 h1 <<<"$(group_ticks)"
  t1="$(microseconds)"
  if grep -q '^sending ' "$WORK/bench.out" 2>/dev/null && ! grep -q '^commands:' "$WORK/bench.out" 2>/dev/null; then
    USED[bench]=$((USED[bench] + b1 - b0)); USED[relays]=$((USED[relays] + r1 - r0))
    USED[postgres]=$((USED[postgres] + p1 - p0)); USED[haproxy]=$((USED[haproxy] + h1 - h0))
    samples=$((samples + 1))
    sampled_us=$((sampled_us + t1 - t0))
  fi
  b0=$b1; r0=$r1; p0=$p1; h0=$h1; t0=$t1
done
status=0
wait "$BENCH_PID" || status=$?
echo
if [ "$samples" -gt 0 ] && [ "$sampled_us" -gt 0 ]; then
  pct() { echo $((USED[$1] * 100 * 1000000 / HZ / sampled_us)); }
  echo "cpu during the load (% of one core, mean of $samples samples over $((sampled_us / 100000 / 10)).$((sampled_us / 100000 % 10)) s; $(nproc) cores = $(($(nproc) * 100)) %): $(pct bench) / $(pct relays) / $(pct postgres) / $(pct haproxy)"
  echo "  (bench / relays together / postgres / haproxy)"
fi

for port in "${RELAY_PORTS[@]}"; do
  echo
  echo "relay 127.0.0.1:$port metrics:"
  curl --noproxy '*' -fsS "http://127.0.0.1:$port/metrics" 2>/dev/null |
    grep -E '^relay_(connections|frames_routed_total|frames_written_total|socket_writes_total|rejected_total|exchange_round_trip_seconds_(count|sum)|cluster_(envelopes|forwarded)_total)' |
    grep -v " 0$" || true
done
stop_relays
for log in "$WORK"/[ab].log; do tail -n1 "$log"; done
exit "$status"

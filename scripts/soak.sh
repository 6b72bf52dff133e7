#!/usr/bin/env bash
# soak.sh: a home of NODES dimmable lights run for MINUTES under a controller that never rests
# (#17 item 4). On a private fake LAN: the cloud relay on host 'cloud', the home on 'home'
# (every node linked to the relay), and on 'phone' `homectl soak`: random On/Off/Toggle/
# MoveToLevel commands and reads through HomeAPI, with a subscription per device and route,
# switches to the relay only and back, and the home closed and opened again every 30 s (so
# each minute holds two: the minutes compare). This
# script adds faults at random nodes (LAN down, cloud down, power off; each undone after a
# while) and every 10 s samples each process (home, relay, controller): resident memory,
# open file descriptors, and the sessions, subscriptions and errors each one counts. Every
# minute it prints a row; at the end a table, a PNG plot (matplotlib) and the verdict:
# failure on growth over 5 % after the warm-up (the first third, at least a minute), the rise
# of a least-squares line through the samples, of descriptors, the relay's connections and
# memory (the relay's RSS, the home's heap once its nodes' traffic logs are full, the
# controller's heap with no home open), on sessions or subscriptions over two openings' worth (they churn with each
# reopening and route switch), on a process that died, or on an error no fault explains.
#
#   scripts/soak.sh [MINUTES] [NODES]      (default 3 minutes, 200 nodes)
#
# SOAK_OUT=DIR keeps the samples, the table and soak.png there (default .build/soak).
. "$(dirname "$0")/lib/common.sh"
MINUTES="${1:-3}"; NODES="${2:-200}"
[[ "$MINUTES" =~ ^[0-9]+$ ]] && [ "$MINUTES" -ge 3 ] && [ "$MINUTES" -le 1440 ] || { echo "soak: MINUTES must be 3...1440" >&2; exit 2; }
[[ "$NODES" =~ ^[0-9]+$ ]] && [ "$NODES" -ge 2 ] && [ "$NODES" -le 1000 ] || { echo "soak: NODES must be 2...1000" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "soak: needs root (network namespaces)" >&2; exit 2; }
# The plot's library, in the project's own venv (PyPI's matplotlib).
VENV="$(scripts/lib/venvs.sh soak)"
# gdb shows a stalled home's threads if commissioning fails (a diagnosis, not a requirement).
scripts/apt-install.sh gdb || echo "soak: gdb is not installed; a stalled home's threads will not be shown" >&2
build_products matter-sim homectl matter-relay
OUT="${SOAK_OUT:-.build/soak}"; mkdir -p "$OUT"; OUT="$(cd "$OUT" && pwd)"
STATE="$(mktemp -d /tmp/soak.XXXXXX)"
LAN="flsk$$"; LAN="${LAN:0:12}"
RELAY_PID=""; SIM_PID=""; SOAK_PID=""; FAULTS_PID=""
cleanup() {
  for pid in $FAULTS_PID $SOAK_PID $SIM_PID; do kill -INT "$pid" 2>/dev/null || true; done
  [ -z "$RELAY_PID" ] || kill -INT "$RELAY_PID" 2>/dev/null || true
  pkill -INT -f "$STATE" 2>/dev/null || true
  wait 2>/dev/null || true
  scripts/fakelan.sh down "$LAN" >/dev/null 2>&1 || true
  [ -n "${KEEP_STATE:-}" ] || rm -rf "$STATE"
}
on_exit cleanup
now() { date +%s.%N; }
# The PID of the process named NAME whose command line names this run's state directory.
pid_of() {
  local p
  for p in $(pgrep -x "$1"); do grep -qa "$STATE" "/proc/$p/cmdline" 2>/dev/null && { echo "$p"; return; }; done
  echo ""
}

# Host order gives the addresses: home 10.77.0.2, cloud 10.77.0.3, phone 10.77.0.4.
scripts/fakelan.sh up "$LAN" home cloud phone >/dev/null
scripts/fakelan.sh avahi "$LAN" home phone >/dev/null
DB="$STATE/relay.sqlite"
added="$("$BIN/matter-relay" home add "Soak Home" --database "$DB")"
HOME_ID="$(awk '$1 == "home" { print $2 }' <<<"$added")"; TOKEN="$(awk '$1 == "token" { print $2 }' <<<"$added")"
# The token goes to programs in files (mode 0600), never on a command line where `ps` shows it.
(umask 077; printf '%s\n' "$TOKEN" > "$STATE/home-token"; printf 'Authorization: Bearer %s\n' "$TOKEN" > "$STATE/auth-header")
scripts/fakelan.sh exec "$LAN" cloud -- "$BIN/matter-relay" serve --host 0.0.0.0 --port 8080 --database "$DB" \
  >"$STATE/relay.out" 2>"$STATE/relay.err" &
RELAY_PID=$!
"$BIN/matter-sim" fleet DeviceProfiles/devices/dimmable-light.yaml --count "$NODES" --name "Soak Home" \
  --serial-prefix SOAK --output "$STATE/soak-home.yaml"
scripts/fakelan.sh exec "$LAN" home -- "$BIN/matter-sim" home "$STATE/soak-home.yaml" --state-root "$STATE/home" \
  --relay ws://10.77.0.3:8080 --relay-home-token-file "$STATE/home-token" --control "$STATE/control.sock" \
  --dashboard 127.0.0.1:8090 >"$STATE/home.out" 2>"$STATE/home.err" &
SIM_PID=$!
online() {
  scripts/fakelan.sh exec "$LAN" phone -- curl -s -m 2 -H "@$STATE/auth-header" "http://10.77.0.3:8080/v1/homes/$HOME_ID/devices" 2>/dev/null \
    | python3 -c 'import json, sys
try: print(sum(1 for d in json.load(sys.stdin)["devices"] if d.get("online")))
except Exception: print(0)'
}
for _ in $(seq 240); do [ "$(online)" = "$NODES" ] && break; sleep 0.5; done  # bounded: two minutes
echo "soak: $NODES nodes up, $(online) online through the relay"

TRUST="$STATE/trust"; mkdir -p "$TRUST"
cp DeviceProfiles/credentials/paa/*.pem DeviceProfiles/credentials/Chip-Test-CD-Signing-Cert.pem "$TRUST/"
t0="$(now)"
commission() {  # CONCURRENCY
  scripts/fakelan.sh exec "$LAN" phone -- "$BIN/homectl" commission --home "$STATE/soak-home.yaml" --database "$STATE/phone.sqlite" \
    --paa-trust-store "$TRUST" --host 10.77.0.2 --concurrency "$1" --timeout 30 >"$STATE/commission.out" 2>"$STATE/commission.err"
}
# What the home logged beyond info while commissioning (a stalled node process shows here).
home_warnings() {
  grep -v ' info \| debug \| notice \| trace ' "$STATE/home.err" | tail -n 15 >&2 || true
  echo "soak: UDP sockets in the home's namespace: $(scripts/fakelan.sh exec "$LAN" home -- ss -uan 2>/dev/null | grep -c ':55[0-9][0-9] ' || true) on Matter ports 5500-5599; receive queues over 0:" >&2
  scripts/fakelan.sh exec "$LAN" home -- ss -uan 2>/dev/null | awk 'NR > 1 && $2 > 0' | head -n 10 >&2 || true
  # Every thread's stack: a deadlock shows as threads waiting on a lock forever.
  local pid; pid="$(pid_of matter-sim)"
  if [ -n "$pid" ] && command -v gdb >/dev/null; then
    local stacks="$OUT/home-threads-$attempt.txt"
    timeout 60 gdb -p "$pid" -batch -ex "thread apply all bt 16" >"$stacks" 2>/dev/null || true
    echo "soak: the home's threads ($stacks): $(grep -c '^Thread ' "$stacks" || true), waiting on a mutex: $(grep -c 'pthread_mutex_lock\|__lll_lock_wait' "$stacks" || true), in Avahi: $(grep -c 'avahi_' "$stacks" || true)" >&2
  fi
}
# Another run (fewer at once) commissions what the last could not and leaves the rest be, as a
# person would.
# In two lone-clone CI runs a block of nodes of the one home process (16 of 50, as many as
# were in flight) acknowledged no PASE message in either attempt: a home wedged for good. A
# deadlock that would do so was found and removed from the Avahi publisher (a cancellation
# handler waiting for the poll mutex while the poll thread resumed a task under it; see
# AvahiConnection); it was never reproduced here. The soak measures growth, so it runs on what
# was commissioned when that is at least 90 % of the home, says how many it left out, and
# shows the home's threads (gdb) after a failed attempt.
attempt=1
until commission $((attempt == 1 ? 16 : 4)); do
  failed="$(grep -c ': failed' "$STATE/commission.out" || true)"
  echo "soak: commissioning attempt $attempt left $failed of $NODES devices out:"
  grep ': failed' "$STATE/commission.out" | head -5
  home_warnings
  attempt=$((attempt + 1))
  if [ "$attempt" -gt 3 ]; then
    if [ $((failed * 10)) -le "$NODES" ]; then
      echo "soak: going on with the $((NODES - failed)) devices commissioned ($failed left out, at most 10 % allowed)"
      break
    fi
    echo "soak: commissioning failed $((attempt - 1)) times; $failed of $NODES devices left out" >&2
    tail -5 "$STATE/commission.err" >&2
    exit 1
  fi
  sleep 5
done
echo "soak: the home commissioned over the LAN in $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s"

# The controller.
# SOAK_CONTROLLER_WRAPPER runs the controller under a tool (e.g. "heaptrack -o /tmp/ctl").
# shellcheck disable=SC2086
scripts/fakelan.sh exec "$LAN" phone -- ${SOAK_CONTROLLER_WRAPPER:-} "$BIN/homectl" soak --home "$STATE/phone.sqlite" --minutes "$MINUTES" --reconnect-every "${SOAK_RECONNECT_EVERY:-30}" \
  --relay ws://10.77.0.3:8080 --relay-token-file "$STATE/home-token" --no-dnssd --timeout 10 >"$STATE/controller.jsonl" 2>"$STATE/controller.err" &
SOAK_PID=$!
started="$(now)"; echo "$started" >"$STATE/started"
# Faults: every 15 s one random node loses its LAN, its cloud link or its power for 5-20 s.
mapfile -t names < <(sed -n 's/^ *- name: "\(Node [0-9]*\)"$/\1/p' "$STATE/soak-home.yaml")  # `matter-sim fleet`'s names
[ "${#names[@]}" = "$NODES" ] || { echo "soak: found ${#names[@]} node names in the fleet file, expected $NODES" >&2; exit 1; }
( end=$(( $(date +%s) + MINUTES * 60 - 25 ))
  while [ "$(date +%s)" -lt "$end" ]; do
    sleep 15
    node="${names[RANDOM % ${#names[@]}]}"
    case $((RANDOM % 3)) in 0) down=lan-down up=lan-up ;; 1) down=cloud-down up=cloud-up ;; *) down=power-off up=power-on ;; esac
    hold=$((5 + RANDOM % 16))
    echo "$(now) start $down $node" >>"$STATE/faults.log"
    "$BIN/matter-sim" fault --control "$STATE/control.sock" "$node" "$down" >/dev/null 2>>"$STATE/faults.err" || true
    sleep "$hold"
    "$BIN/matter-sim" fault --control "$STATE/control.sock" "$node" "$up" >/dev/null 2>>"$STATE/faults.err" || true
    echo "$(now) end $down $node" >>"$STATE/faults.log"
  done ) & FAULTS_PID=$!

# Samples every 10 s until the controller ends (bounded by MINUTES plus a minute).
HOME_PID="$(pid_of matter-sim)"; RELAY_REAL="$(pid_of matter-relay)"
for _ in $(seq 50); do CONTROLLER_PID="$(pid_of homectl)"; [ -n "$CONTROLLER_PID" ] && break; sleep 0.1; done
sample() {  # role pid
  local rss=0 fds=0
  if [ -n "$2" ] && [ -d "/proc/$2" ]; then
    rss="$(awk '/^VmRSS:/ { print $2 }' "/proc/$2/status" 2>/dev/null || echo 0)"
    fds="$(ls "/proc/$2/fd" 2>/dev/null | wc -l)"
  fi
  echo "$1 ${rss:-0} $fds"
}
echo "soak: home pid $HOME_PID, relay pid $RELAY_REAL, controller pid ${CONTROLLER_PID:-?}; sampling every 10 s for $MINUTES minutes"
deadline=$(( $(date +%s) + MINUTES * 60 + 60 ))
next_row=60
while kill -0 "$SOAK_PID" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do
  t="$(awk -v a="$started" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')"
  figures="$(scripts/fakelan.sh exec "$LAN" home -- curl -s -m 2 http://127.0.0.1:8090/api/figures 2>/dev/null || echo '{}')"
  metrics="$(scripts/fakelan.sh exec "$LAN" phone -- curl -s -m 2 http://10.77.0.3:8080/metrics 2>/dev/null || true)"
  {
    echo "t $t"
    sample home "$HOME_PID"; sample relay "$RELAY_REAL"; sample controller "$CONTROLLER_PID"
    echo "figures $figures"
    awk '/^relay_connections\{/ { gsub(/.*role="|"}/, "", $1); print "relay_connections", $1, $2 }
         /^relay_rejected_total\{/ { n += $2 } END { print "relay_rejected", n + 0 }' <<<"$metrics"
    echo "errors home $(grep -c -E ' (error|critical) ' "$STATE/home.err" || true)"
    echo "errors relay $(grep -c -E ' (error|critical) ' "$STATE/relay.err" || true)"
    echo "end"
  } >>"$STATE/samples.txt"
  if awk -v t="$t" -v n="$next_row" 'BEGIN { exit !(t >= n) }'; then
    python3 scripts/soak/soak_report.py row "$STATE" || true
    next_row=$((next_row + 60))
  fi
  sleep 10
done
wait "$SOAK_PID" && controller_exit=0 || controller_exit=$?
SOAK_PID=""
kill "$FAULTS_PID" 2>/dev/null || true; wait "$FAULTS_PID" 2>/dev/null || true; FAULTS_PID=""
alive="home=$(kill -0 "$HOME_PID" 2>/dev/null && echo up || echo DEAD) relay=$(kill -0 "$RELAY_REAL" 2>/dev/null && echo up || echo DEAD)"
[ -f "$STATE/faults.log" ] || : >"$STATE/faults.log"
cp "$STATE/samples.txt" "$STATE/controller.jsonl" "$STATE/faults.log" "$STATE/started" "$OUT/" 2>/dev/null || true
"$VENV/bin/python" scripts/soak/soak_report.py final "$STATE" --out "$OUT" --minutes "$MINUTES" --nodes "$NODES" \
  --controller-exit "$controller_exit" --alive "$alive"

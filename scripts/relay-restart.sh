#!/usr/bin/env bash
# relay-restart.sh: the cloud relay killed (SIGKILL) mid-traffic and started again on the same
# database. On a private fake LAN: the relay on host 'cloud', the demo home on 'home' (every
# node linked to the relay), homectl on 'phone' commissioning the home over the LAN and then
# toggling a lamp through the relay only (--policy cloudOnly) every 0.3 s. After the kill and
# restart it measures the time to the relay answering, to every device back online (the
# relay's device list), and to the next command through the relay; and checks that the
# registrations (homes, devices, the home token) are all still there.
#
#   scripts/relay-restart.sh [KILLS]     (default 3)
. "$(dirname "$0")/lib/common.sh"
KILLS="${1:-3}"
build_products matter-sim homectl matter-relay
home=DeviceProfiles/homes/demo-home.yaml
STATE="$(mktemp -d /tmp/relay-restart.XXXXXX)"
LAN="flrr$$"; LAN="${LAN:0:12}"
RELAY_PID=""; SIM_PID=""; LOOP_PID=""
cleanup() {
  for pid in $LOOP_PID $SIM_PID; do kill -INT "$pid" 2>/dev/null || true; done
  [ -z "$RELAY_PID" ] || kill -9 "$RELAY_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  scripts/fakelan.sh down "$LAN" >/dev/null 2>&1 || true
  rm -rf "$STATE"
}
on_exit cleanup
# Host order gives the addresses: home 10.77.0.2, cloud 10.77.0.3, phone 10.77.0.4.
scripts/fakelan.sh up "$LAN" home cloud phone >/dev/null
scripts/fakelan.sh avahi "$LAN" home phone >/dev/null
RELAY_URL="ws://10.77.0.3:8080"; HTTP="http://10.77.0.3:8080"
DB="$STATE/relay.sqlite"
added="$("$BIN/matter-relay" home add "Restart Home" --database "$DB")"
HOME_ID="$(awk '$1 == "home" { print $2 }' <<<"$added")"; TOKEN="$(awk '$1 == "token" { print $2 }' <<<"$added")"
# The token goes to programs in files (mode 0600), never on a command line where `ps` shows it.
(umask 077; printf '%s\n' "$TOKEN" > "$STATE/home-token"; printf 'Authorization: Bearer %s\n' "$TOKEN" > "$STATE/auth-header")
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
start_relay() {
  scripts/fakelan.sh exec "$LAN" cloud -- "$BIN/matter-relay" serve --host 0.0.0.0 --port 8080 --database "$DB" \
    >>"$STATE/relay.log" 2>&1 &
  RELAY_PID=$!
}
online() {  # how many of the home's devices the relay lists online
  scripts/fakelan.sh exec "$LAN" phone -- curl -s -m 2 -H "@$STATE/auth-header" "$HTTP/v1/homes/$HOME_ID/devices" 2>/dev/null \
    | python3 -c 'import json, sys
try: print(sum(1 for d in json.load(sys.stdin)["devices"] if d.get("online")))
except Exception: print(0)'
}
start_relay
scripts/fakelan.sh exec "$LAN" home -- "$BIN/matter-sim" home "$home" --state-root "$STATE/home" \
  --relay "$RELAY_URL" --relay-home-token-file "$STATE/home-token" --control "$STATE/control.sock" >"$STATE/home.out" 2>"$STATE/home.err" &
SIM_PID=$!
count=$("$BIN/matter-sim" describe "$home" --no-attributes | grep -c '^    device "')
for _ in $(seq 120); do [ "$(online)" = "$count" ] && break; sleep 0.5; done  # bounded: a minute
echo "relay-restart: $(online) of $count devices online through the relay"

TRUST="$STATE/trust"; mkdir -p "$TRUST"
cp DeviceProfiles/credentials/paa/*.pem DeviceProfiles/credentials/Chip-Test-CD-Signing-Cert.pem "$TRUST/"
scripts/fakelan.sh exec "$LAN" phone -- "$BIN/homectl" commission --home "$home" --database "$STATE/phone.sqlite" \
  --paa-trust-store "$TRUST" --host 10.77.0.2 >/dev/null 2>"$STATE/commission.err"
echo "relay-restart: the home commissioned over the LAN"
devices_before="$("$BIN/matter-relay" device list --home "$HOME_ID" --database "$DB" | sort | md5sum)"

# Commands through the relay only, each logged with its time and outcome.
( while true; do
    t="$(now)"
    if scripts/fakelan.sh exec "$LAN" phone -- "$BIN/homectl" toggle "Floor Lamp" --home "$STATE/phone.sqlite" \
         --relay "$RELAY_URL" --relay-token-file "$STATE/home-token" --policy cloudOnly --no-dnssd --timeout 3 >/dev/null 2>&1; then
      echo "$t ok"; else echo "$t fail"; fi >>"$STATE/commands"
    sleep 0.3
  done ) & LOOP_PID=$!
sleep 3
failed=0
for kill in $(seq "$KILLS"); do
  before_ok=$(grep -c ' ok$' "$STATE/commands" || true)
  t0="$(now)"
  kill -9 "$RELAY_PID"; wait "$RELAY_PID" 2>/dev/null || true
  start_relay
  up=""; all=""; command=""
  for _ in $(seq 600); do  # bounded: a minute
    [ -n "$up" ] || { scripts/fakelan.sh exec "$LAN" phone -- curl -s -m 1 -o /dev/null "$HTTP/health" && up="$(since "$t0")"; }
    [ -n "$up" ] && [ -z "$all" ] && [ "$(online)" = "$count" ] && all="$(since "$t0")"
    [ -z "$command" ] && command="$(awk -v t0="$t0" '$2 == "ok" && $1 > t0 { printf "%.2f", $1 - t0; exit }' "$STATE/commands")"
    [ -n "$all" ] && [ -n "$command" ] && break
    sleep 0.1
  done
  devices_after="$("$BIN/matter-relay" device list --home "$HOME_ID" --database "$DB" | sort | md5sum)"
  if [ -n "$all" ] && [ -n "$command" ] && [ "$devices_before" = "$devices_after" ]; then
    echo "PASS kill $kill: relay answering after ${up} s, all $count devices online after ${all} s, a command through it started ${command} s after the kill; registrations unchanged"
  else
    failed=$((failed + 1))
    echo "FAIL kill $kill: answering ${up:-never}, all online ${all:-never} ($(online) of $count), next command ${command:-never}; registrations $([ "$devices_before" = "$devices_after" ] && echo unchanged || echo CHANGED)"
  fi
  sleep 2
done
kill "$LOOP_PID" 2>/dev/null || true; wait "$LOOP_PID" 2>/dev/null || true; LOOP_PID=""
ok=$(grep -c ' ok$' "$STATE/commands" || true); bad=$(grep -c ' fail$' "$STATE/commands" || true)
echo "relay-restart: $KILLS kills, $failed failed; commands through the relay: $ok answered, $bad failed (those sent while it was down)"
[ "$failed" = 0 ]

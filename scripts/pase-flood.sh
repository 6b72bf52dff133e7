#!/usr/bin/env bash
# pase-flood.sh: what a flood of PBKDFParamRequests does to a commissionable node (#17 item 3).
# On a private fake LAN, `matter-sim run` on host 'dev'; from host 'atk', COUNT PBKDFParamRequests
# from as many initiators (scripts/pase/pase_flood.py) in rounds, with the node's resident memory
# after each; then homectl on host 'ctl' commissions it for real. It fails when memory keeps growing (the last
# round more than 10 % over the first) or the real commissioning fails.
#
#   scripts/pase-flood.sh [COUNT] [ROUNDS]     (default 20000 per round, 3 rounds)
. "$(dirname "$0")/lib/common.sh"
COUNT="${1:-20000}"; ROUNDS="${2:-3}"
build_products matter-sim homectl
STATE="$(mktemp -d /tmp/pase-flood.XXXXXX)"
LAN="flpf$$"; LAN="${LAN:0:12}"
NODE_PID=""
cleanup() {
  [ -z "$NODE_PID" ] || kill -INT "$NODE_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  scripts/fakelan.sh down "$LAN" >/dev/null 2>&1 || true
  [ -n "${KEEP_STATE:-}" ] || rm -rf "$STATE"
}
on_exit cleanup
# The flood comes from its own host, as an attacker's would; the commissioner is on 'ctl'.
scripts/fakelan.sh up "$LAN" dev ctl atk >/dev/null
scripts/fakelan.sh avahi "$LAN" dev ctl >/dev/null
scripts/fakelan.sh exec "$LAN" dev -- "$BIN/matter-sim" run DeviceProfiles/devices/dimmable-light.yaml --passcode 20202021 \
  --discriminator 3840 --port 5540 --state-dir "$STATE/node" --commissioning-window 0 --control "$STATE/control.sock" \
  >"$STATE/node.out" 2>"$STATE/node.err" &
NODE_PID=$!
for _ in $(seq 200); do grep -q '^  fabrics:' "$STATE/node.out" && break; sleep 0.05; done
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$NODE_PID/status"; }
sleep 1
first=""; rows="start $(rss) KiB"
echo "pase-flood: node RSS at start $(rss) KiB"
for round in $(seq "$ROUNDS"); do
  scripts/fakelan.sh exec "$LAN" atk -- python3 scripts/pase/pase_flood.py --target 10.77.0.2:5540 --count "$COUNT" | sed 's/^/  /'
  sleep 2
  now="$(rss)"; [ -n "$first" ] || first="$now"
  echo "pase-flood: round $round: node RSS $now KiB"
done
last="$now"
TRUST="$STATE/trust"; mkdir -p "$TRUST"
cp DeviceProfiles/credentials/paa/*.pem DeviceProfiles/credentials/Chip-Test-CD-Signing-Cert.pem "$TRUST/"
t0="$(date +%s.%N)"
status=0
scripts/fakelan.sh exec "$LAN" ctl -- "$BIN/homectl" commission --code 34970112332 --address 10.77.0.2:5540 \
  --home "$STATE/ctl.sqlite" --paa-trust-store "$TRUST" --name Light --timeout 30 >/dev/null 2>"$STATE/commission.err" || status=$?
took="$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')"
growth="$(awk -v a="$first" -v b="$last" 'BEGIN { printf "%.1f", (b - a) * 100 / a }')"
failures="$(grep -c 'PASE establishment from' "$STATE/node.err" || true)"
echo "pase-flood: $((COUNT * ROUNDS)) requests: RSS after the first round $first KiB, after the last $last KiB ($growth %);" \
  "a real commissioning afterwards: exit $status in $took s; failed PASE attempts the node counted: $failures"
[ "$status" = 0 ] && awk -v g="$growth" 'BEGIN { exit !(g <= 10) }'

#!/usr/bin/env bash
# fleet-bench.sh: a fleet of N Matter nodes in one `matter-sim home` process on a private
# fake LAN (scripts/fakelan.sh: host "dev" runs the fleet, host "ctl" the controller, each
# with its own D-Bus and Avahi), and the figures the fleet targets are judged by:
#   (a) time from the fleet process's start until all N nodes are resolved over DNS-SD
#       (_matterc._udp: SRV, TXT, addresses) on the other host (target: 60 s for N = 1000);
#   (b) resident memory of the fleet process per node (VmRSS / N; target: 2 MiB);
#   (c) commissioning throughput of our controller (`homectl fleet-bench`, MatterController
#       commissioning several nodes at once; target: 10 per second);
#   (d) On/Off invoke p50/p99 while 10% of the nodes hold subscriptions.
#
#   scripts/fleet-bench.sh [N] [PROFILE]
#
# N defaults to 100, PROFILE to DeviceProfiles/devices/dimmable-light.yaml. Binaries come
# from $FLEET_BENCH_BIN (default .build/release, built when missing). Environment:
# FLEET_BENCH_CONCURRENCY (commissionings in flight, default 16), FLEET_BENCH_INVOKES
# (default 1000), FLEET_BENCH_KEEP=1 (keep the logs). Needs root. Every step is bounded; the LAN goes away on exit.
. "$(dirname "$0")/lib/common.sh"
unblock_signals bash "$SCRIPT_PATH" "$@"

COUNT="${1:-100}"
PROFILE="${2:-$ROOT/DeviceProfiles/devices/dimmable-light.yaml}"
BIN="${FLEET_BENCH_BIN:-$ROOT/.build/release}"
CONCURRENCY="${FLEET_BENCH_CONCURRENCY:-16}"
INVOKES="${FLEET_BENCH_INVOKES:-1000}"
BASE_PORT=20000

die() { echo "fleet-bench: $*" >&2; exit 2; }
[[ "$COUNT" =~ ^[0-9]+$ ]] && [ "$COUNT" -ge 1 ] && [ "$COUNT" -le 5000 ] || die "N must be 1...5000"
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
[ -f "$PROFILE" ] || die "no profile $PROFILE"

if [ -z "${FLEET_BENCH_BIN:-}" ]; then
  for product in matter-sim homectl dnssd-probe; do
    if [ ! -x "$BIN/$product" ]; then
      echo "fleet-bench: building $product (release)" >&2
      (cd "$ROOT" && swift build -c release --product "$product" >&2)
    fi
  done
fi
for product in matter-sim homectl dnssd-probe; do [ -x "$BIN/$product" ] || die "no $BIN/$product"; done

LAN="flf$$"
WORK="$(mktemp -d /tmp/fleet-bench.XXXXXX)"
SIM=""
BROWSER=""
cleanup() {
  set +e
  [ -n "$BROWSER" ] && kill "$BROWSER" 2>/dev/null
  if [ -n "$SIM" ] && kill -0 "$SIM" 2>/dev/null; then
    kill -TERM "$SIM"
    for _ in $(seq 300); do kill -0 "$SIM" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SIM" 2>/dev/null
  fi
  FAKELAN_OWNER=$$ "$FAKELAN" down "$LAN"
  if [ -n "${FLEET_BENCH_KEEP:-}" ]; then echo "fleet-bench: logs kept in $WORK" >&2; else rm -rf "$WORK"; fi
}
on_exit cleanup

now_ms() { date +%s%3N; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
hwm_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
per_node() { awk -v k="$1" -v n="$COUNT" 'BEGIN { printf "%.2f", k / 1024 / n }'; }

export FAKELAN_OWNER=$$
"$FAKELAN" up "$LAN" dev ctl
"$FAKELAN" avahi "$LAN" dev ctl
DEV_ADDR=10.77.0.2   # the first host of the LAN

# Attestation: the published test PAA and the CD signer matter-sim signs with (test only).
mkdir -p "$WORK/trust"
cp "$ROOT/DeviceProfiles/credentials/paa/Chip-Test-PAA-NoVID-Cert.pem" "$WORK/trust/paa.pem"
cp "$ROOT/DeviceProfiles/credentials/Chip-Test-CD-Signing-Cert.pem" "$WORK/trust/cd-signer.pem"

"$BIN/matter-sim" fleet "$PROFILE" --count "$COUNT" --output "$WORK/fleet.yaml"

# The browser first, so that it sees every announcement.
"$FAKELAN" exec "$LAN" ctl -- "$BIN/dnssd-probe" browse --type _matterc._udp --until-count "$COUNT" --timeout 120 \
  >"$WORK/browse.jsonl" 2>"$WORK/browse.log" &
BROWSER=$!
for _ in $(seq 100); do grep -q '"event":"browsing"' "$WORK/browse.jsonl" 2>/dev/null && break; sleep 0.1; done

STARTED="$(now_ms)"
"$FAKELAN" exec "$LAN" dev -- "$BIN/matter-sim" home "$WORK/fleet.yaml" --base-port "$BASE_PORT" \
  --state-root "$WORK/state" --log-level warning >"$WORK/home.out" 2>"$WORK/home.log" &
SIM=$!

# All listening: the table follows the last node's start.
LISTENING=""
for _ in $(seq 1200); do
  if grep -q "devices running" "$WORK/home.out" 2>/dev/null; then LISTENING="$(now_ms)"; break; fi
  kill -0 "$SIM" 2>/dev/null || { tail -n 20 "$WORK/home.log" >&2; die "matter-sim home exited"; }
  sleep 0.1
done
[ -n "$LISTENING" ] || die "the fleet did not start within 120 s"

rc=0
wait "$BROWSER" || rc=$?
BROWSER=""
complete="$(sed -n 's/.*"event":"complete".*"t":\([0-9]*\).*/\1/p' "$WORK/browse.jsonl" | head -n 1)"
resolved="$(grep -c '"event":"added"' "$WORK/browse.jsonl" || true)"
RSS_IDLE="$(rss_kib "$SIM")"

echo "fleet-bench: N = $COUNT nodes of $(basename "$PROFILE") in one matter-sim process (pid $SIM)"
echo "fleet-bench: all $COUNT listening $((LISTENING - STARTED)) ms after the process started"
if [ "$rc" = 0 ] && [ -n "$complete" ]; then
  echo "fleet-bench: (a) all $COUNT resolved over DNS-SD from another namespace after $((complete - STARTED)) ms (target 60000 ms at N = 1000)"
else
  echo "fleet-bench: (a) FAILED: $resolved of $COUNT resolved within 120 s (browser exit $rc)"
  tail -n 5 "$WORK/browse.log" "$WORK/home.log" >&2
fi
echo "fleet-bench: (b) RSS $((RSS_IDLE / 1024)) MiB = $(per_node "$RSS_IDLE") MiB per node once advertised (target 2 MiB)"

bench_rc=0
timeout 1200 "$FAKELAN" exec "$LAN" ctl -- "$BIN/homectl" fleet-bench --home "$WORK/fleet.yaml" \
  --database "$WORK/home.sqlite" --host "$DEV_ADDR" --base-port "$BASE_PORT" --paa-trust-store "$WORK/trust" \
  --concurrency "$CONCURRENCY" --invokes "$INVOKES" --subscribers-percent 10 --timeout 20 \
  >"$WORK/bench.out" 2>"$WORK/bench.log" || bench_rc=$?
sed 's/^fleet-bench: /fleet-bench: (c,d) /' "$WORK/bench.out"
[ "$bench_rc" = 0 ] || { echo "fleet-bench: homectl fleet-bench exit $bench_rc" >&2; tail -n 15 "$WORK/bench.log" >&2; }
RSS_AFTER="$(rss_kib "$SIM")"
HWM="$(hwm_kib "$SIM")"
echo "fleet-bench: (b) RSS $((RSS_AFTER / 1024)) MiB = $(per_node "$RSS_AFTER") MiB per node after commissioning (peak $(per_node "$HWM") MiB per node)"

STOP="$(now_ms)"
kill -TERM "$SIM"
for _ in $(seq 600); do kill -0 "$SIM" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$SIM" 2>/dev/null; then
  echo "fleet-bench: the fleet did not stop within 60 s of SIGTERM"
  rc=1
else
  wait "$SIM" 2>/dev/null || true
  echo "fleet-bench: SIGTERM to stopped (every record withdrawn) in $(( $(now_ms) - STOP )) ms"
fi
SIM=""
[ "$rc" = 0 ] && [ "$bench_rc" = 0 ]

#!/usr/bin/env bash
# The project's main job: the demo home (DeviceProfiles/homes/demo-home.yaml) as 13 real
# Matter nodes in one process, on a private fake LAN (network namespaces with their own
# D-Bus and Avahi; nothing touches the real network). A second host browses the home over
# mDNS and reads each commissionable node's records. Needs root.
#
#   scripts/demo.sh              run for DEMO_SECONDS (default 20), then stop cleanly
#   scripts/demo.sh --forever    keep the home running until Ctrl-C
#   scripts/demo.sh HOME.yaml    another home profile
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
forever=""; home="$ROOT/DeviceProfiles/homes/demo-home.yaml"
for arg in "$@"; do
  case "$arg" in
    --forever) forever=yes ;;
    *) home="$(cd "$(dirname "$arg")" && pwd)/$(basename "$arg")" ;;
  esac
done
scripts/setup.sh
swift build --product matter-sim >/dev/null
SIM="$ROOT/.build/debug/matter-sim"
"$SIM" validate "$home"

LAN="fldemo$$"
LAN="${LAN:0:12}"
STATE="$(mktemp -d /tmp/matter-demo.XXXXXX)"
cleanup() { scripts/fakelan.sh down "$LAN" >/dev/null 2>&1 || true; rm -rf "$STATE"; }
trap cleanup EXIT INT TERM
scripts/fakelan.sh up "$LAN" home phone >/dev/null
scripts/fakelan.sh avahi "$LAN" home phone >/dev/null

echo "demo: starting the home on host 'home' of fake LAN $LAN"
scripts/fakelan.sh exec "$LAN" home -- "$SIM" home "$home" --state-root "$STATE" &
SIM_PID=$!
if [ -n "$forever" ]; then
  echo "demo: running until Ctrl-C"
  wait "$SIM_PID"
  exit 0
fi
sleep "${DEMO_SECONDS:-20}" &
wait $! || true
echo
echo "demo: what a phone on the same LAN sees (avahi-browse _matterc._udp on host 'phone'):"
scripts/fakelan.sh exec "$LAN" phone -- avahi-browse -prt _matterc._udp 2>/dev/null \
  | awk -F';' '$1 == "=" && $3 == "IPv4" { printf "  %-18s %s:%s  %s\n", $4, $8, $9, $10 }' | sort -u
count=$(scripts/fakelan.sh exec "$LAN" phone -- avahi-browse -prt _matterc._udp 2>/dev/null \
  | awk -F';' '$1 == "=" && $3 == "IPv4"' | cut -d';' -f4 | sort -u | wc -l)
echo "demo: $count commissionable nodes resolved over mDNS"
kill -INT "$SIM_PID" 2>/dev/null || true
wait "$SIM_PID" || true

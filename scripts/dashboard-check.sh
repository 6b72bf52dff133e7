#!/usr/bin/env bash
# dashboard-check.sh: the web dashboard in a real browser. On a private fake LAN (namespaces,
# scripts/fakelan.sh), `matter-sim home --dashboard` runs the demo home on host 'home' with the
# page bound to the LAN address (it prints its URL with the token it asks for); on host 'phone' Debian's chromium,
# headless under selenium, and homectl do what a tester does (scripts/dashboard/dashboard_check.py).
#
#   scripts/dashboard-check.sh [HOME.yaml]
#
# Installs chromium, chromedriver and zbar-tools (Debian) and selenium (PyPI, in
# ~/.cache/matter-sim/dashboard-venv). Screenshots go to .build/dashboard/.
. "$(dirname "$0")/lib/common.sh"
home="${1:-DeviceProfiles/homes/demo-home.yaml}"

scripts/apt-install.sh chromium chromium-driver zbar-tools >&2
VENV="$(scripts/lib/venvs.sh dashboard)"
build_products matter-sim homectl

OUT=.build/dashboard
STATE="$(mktemp -d /tmp/dashboard-check.XXXXXX)"
LAN="fldash$$"; LAN="${LAN:0:12}"
SIM_PID=""
cleanup() {
  [ -z "$SIM_PID" ] || kill -INT "$SIM_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  scripts/fakelan.sh down "$LAN" >/dev/null 2>&1 || true
  rm -rf "$STATE"
}
on_exit cleanup
rm -rf "$OUT"; mkdir -p "$OUT"
# Host order gives the addresses: home 10.77.0.2, phone 10.77.0.3.
scripts/fakelan.sh up "$LAN" home phone >/dev/null
scripts/fakelan.sh avahi "$LAN" home phone >/dev/null

scripts/fakelan.sh exec "$LAN" home -- "$BIN/matter-sim" home "$home" --state-root "$STATE/home" \
  --control "$STATE/control.sock" --dashboard 10.77.0.2:8090 >"$STATE/home.out" 2>"$OUT/home.log" &
SIM_PID=$!
url=""
for _ in $(seq 120); do  # bounded: a minute for every node to start
  url="$(awk '$1 == "dashboard:" { print $2 }' "$STATE/home.out")"
  [ -n "$url" ] && break
  kill -0 "$SIM_PID" 2>/dev/null || { echo "dashboard-check: matter-sim home stopped:" >&2; tail -n 20 "$OUT/home.log" >&2; exit 1; }
  sleep 0.5
done
[ -n "$url" ] || { echo "dashboard-check: no dashboard URL from matter-sim home" >&2; exit 1; }
echo "dashboard: $url"

TRUST="$STATE/trust"; mkdir -p "$TRUST"
cp DeviceProfiles/credentials/paa/*.pem DeviceProfiles/credentials/Chip-Test-CD-Signing-Cert.pem "$TRUST/"
status=0
scripts/fakelan.sh exec "$LAN" phone -- "$VENV/bin/python" scripts/dashboard/dashboard_check.py --url "$url" \
  --homectl "$BIN/homectl" --database "$STATE/phone.sqlite" --trust "$TRUST" --screenshots "$OUT" || status=$?
echo "dashboard: screenshots in $OUT/"
exit "$status"

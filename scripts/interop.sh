#!/usr/bin/env bash
# Interop check: each device profile below is commissioned and exercised by the reference
# Matter controller (connectedhomeip, as Home Assistant uses it) through
# ../shared/interop/run-interop.sh, on a private two-host network. Needs root.
#
#   scripts/interop.sh [--latency N] [PROFILE-NAME...]
#
# Then a restart check: the reference controller commissions the dimmable light, the device
# process is restarted, and the controller reads it again without commissioning. Then one
# device of the demo home, with the whole home running in one process and one process each.
# Prints one line per profile and closes with "N passed, N failed". Reports land in
# .build/interop/<profile>.json.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
SHARED="${MATTER_SHARED:-$ROOT/../shared}"
LATENCY=0
if [ "${1:-}" = "--latency" ]; then LATENCY="$2"; shift 2; fi

declare -A REQUIRE=(
  [dimmable-light]="--require onoff --require level-control"
  [window-covering]="--require window-covering"
  [light-and-covering]="--require onoff --require level-control --require window-covering"
)
profiles=("$@")
[ "${#profiles[@]}" -gt 0 ] || profiles=(dimmable-light window-covering light-and-covering)

[ -x "$SHARED/interop/run-interop.sh" ] || { echo "interop: $SHARED/interop/run-interop.sh not found" >&2; exit 2; }
swift build --product matter-sim >/dev/null
mkdir -p .build/interop
passed=0; failed=0
for name in "${profiles[@]}"; do
  report="$ROOT/.build/interop/$name.json"
  log="$ROOT/.build/interop/$name.log"
  echo "interop: $name ..."
  # shellcheck disable=SC2086
  if "$SHARED/interop/run-interop.sh" --passcode 20202021 --discriminator 3840 \
      --paa "$ROOT/DeviceProfiles/credentials/paa" ${REQUIRE[$name]:-} --latency "$LATENCY" \
      --report "$report" -- "$ROOT/.build/debug/matter-sim" run "$ROOT/DeviceProfiles/devices/$name.yaml" \
      --passcode 20202021 --discriminator 3840 >"$log" 2>&1; then
    passed=$((passed + 1)); echo "interop: $name PASS"
  else
    failed=$((failed + 1)); echo "interop: $name FAIL (log: $log)"; tail -n 25 "$log" | sed 's/^/    /'
  fi
  grep -E '^(PASS|FAIL) ' "$log" | sed 's/^/    /' || true
done
# Restart: commission, restart the device process, read again without commissioning.
if [ "${INTEROP_SKIP_RESTART:-}" = "" ]; then
  log="$ROOT/.build/interop/restart.log"
  echo "interop: restart (dimmable-light) ..."
  if "$SHARED/interop/run-interop.sh" --passcode 20202021 --discriminator 3840 \
      --checker "$ROOT/scripts/interop/restart_check.py" --report "$ROOT/.build/interop/restart.json" \
      -- "$ROOT/scripts/interop/restarting-device.sh" "$ROOT/.build/debug/matter-sim" run \
      "$ROOT/DeviceProfiles/devices/dimmable-light.yaml" --passcode 20202021 --discriminator 3840 >"$log" 2>&1; then
    passed=$((passed + 1)); echo "interop: restart PASS"
  else
    failed=$((failed + 1)); echo "interop: restart FAIL (log: $log)"; tail -n 25 "$log" | sed 's/^/    /'
  fi
  grep -E '^(PASS|FAIL) ' "$log" | sed 's/^/    /' || true
fi
# A home: the device with both a light and a covering, commissioned while the demo home's
# 13 nodes run in one process and then one process each (scripts/interop-home.sh checks
# every device of the home the same way).
if [ "${INTEROP_SKIP_HOME:-}" = "" ]; then
  log="$ROOT/.build/interop/home.log"
  echo "interop: home (Light and Shade in the demo home, both modes) ..."
  if scripts/interop-home.sh --device "Light and Shade" >"$log" 2>&1; then
    passed=$((passed + 1)); echo "interop: home PASS"
  else
    failed=$((failed + 1)); echo "interop: home FAIL (log: $log)"; tail -n 25 "$log" | sed 's/^/    /'
  fi
  grep -E '^interop-home: .*(PASS|FAIL|differ)' "$log" | sed 's/^/    /' || true
fi
echo "interop: $passed passed, $failed failed"
[ "$failed" = 0 ]

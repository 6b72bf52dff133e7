#!/usr/bin/env bash
# Interop check: each device profile below is commissioned and exercised by the reference
# Matter controller (connectedhomeip, as Home Assistant uses it) through the project's harness,
# scripts/interop/run.sh, on a private two-host fake LAN. Needs root.
#
#   scripts/interop.sh [--latency N] [PROFILE-NAME...]
#
#   MATTER_INTEROP  another harness with run.sh's options, e.g. the team's cross-check
#                   ../shared/interop/run-interop.sh (default: scripts/interop/run.sh)
#   INTEROP_OUT     where reports go (default: .build/interop)
#
# Then a restart check: the reference controller commissions the dimmable light, the device
# process is restarted, and the controller reads it again without commissioning. Then a
# groupcast check: two lights of one home in a group, switched by one group message. Then the
# acts check: a light's button and dimmer, a blind's cord and a thermostat's dial at the device,
# seen by the controller's subscriptions. Then one
# device of the demo home, with the whole home running in one process and one process each.
# Prints one line per profile and closes with "N passed, N failed". Reports land in
# $INTEROP_OUT/<check>.json, and each report's steps without timings in <check>.steps
# (scripts/interop/steps.py), so two harnesses' runs compare with `diff -r`.
. "$(dirname "$0")/lib/common.sh"
INTEROP="${MATTER_INTEROP:-$ROOT/scripts/interop/run.sh}"
OUT="${INTEROP_OUT:-$ROOT/.build/interop}"
LATENCY=0
if [ "${1:-}" = "--latency" ]; then LATENCY="$2"; shift 2; fi

declare -A REQUIRE=(
  [dimmable-light]="--require onoff --require level-control"
  [window-covering]="--require window-covering"
  [light-and-covering]="--require onoff --require level-control --require window-covering"
  [color-temperature-light]="--require onoff --require level-control --require color-control"
  [extended-color-light]="--require onoff --require level-control --require color-control"
  [dimmable-plug]="--require onoff --require level-control"
  [speaker]="--require onoff --require level-control"
)
# The colour lights get the project's reference check, which has the Color Control steps (the
# team's harness's own check has none, and would refuse --require color-control). Sensors and
# switches are driven at the device (the control socket, as `matter-sim act`) and checked
# through the reference controller's event subscriptions.
declare -A CHECKER=(
  [color-temperature-light]=reference_check.py
  [extended-color-light]=reference_check.py
  [contact-sensor]=sensors_check.py
  [generic-switch]=sensors_check.py
  [occupancy-sensor]=sensors_check.py
  [temperature-sensor]=sensors_check.py
  [door-lock]=sensors_check.py
  [thermostat]=sensors_check.py
  [fan]=sensors_check.py
  [humidity-sensor]=sensors_check.py
  [light-sensor]=sensors_check.py
  [pressure-sensor]=sensors_check.py
  [flow-sensor]=sensors_check.py
  [air-quality-sensor]=sensors_check.py
  [air-purifier]=sensors_check.py
  [smoke-co-alarm]=sensors_check.py
  [water-leak-detector]=sensors_check.py
  [on-off-light-switch]=sensors_check.py
  [dimmer-switch]=sensors_check.py
  [bridge]=sensors_check.py
  [water-valve]=sensors_check.py
  [robot-vacuum]=sensors_check.py
  [pump]=sensors_check.py
)
profiles=("$@")
[ "${#profiles[@]}" -gt 0 ] || profiles=(dimmable-light window-covering light-and-covering \
  color-temperature-light extended-color-light \
  contact-sensor generic-switch occupancy-sensor temperature-sensor door-lock thermostat \
  fan humidity-sensor light-sensor pressure-sensor flow-sensor air-quality-sensor air-purifier \
  smoke-co-alarm water-leak-detector on-off-light-switch dimmer-switch bridge water-valve dimmable-plug speaker robot-vacuum pump)

[ -x "$INTEROP" ] || { echo "interop: harness $INTEROP not found" >&2; exit 2; }
build_products matter-sim
mkdir -p "$OUT"
echo "interop: harness $INTEROP"
passed=0; failed=0
SIM="$ROOT/.build/debug/matter-sim"
PAA="$ROOT/DeviceProfiles/credentials/paa"

# check NAME COMMAND...: runs one check, logs it to $OUT/NAME.log, keeps the report's steps
# without timings in $OUT/NAME.steps, and counts it.
check() {
  local name="$1"; shift
  local log="$OUT/$name.log"
  if "$@" >"$log" 2>&1; then
    passed=$((passed + 1)); echo "interop: $name PASS"
  else
    failed=$((failed + 1)); echo "interop: $name FAIL (log: $log)"; tail -n 25 "$log" | sed 's/^/    /'
  fi
  if [ -f "$OUT/$name.json" ]; then
    python3 "$ROOT/scripts/interop/steps.py" "$OUT/$name.json" >"$OUT/$name.steps"
    grep -E '^(PASS|FAIL) ' "$log" | sed 's/^/    /' || true
  fi
}

# The profiles, INTEROP_JOBS at once (default 3; 1 with --latency, whose figures load would
# skew), each on a fake LAN of its own: a check mostly waits on the reference controller and
# the device's timers. Each one's output is shown, and counted, in the order given.
jobs_limit="${INTEROP_JOBS:-3}"
[ "$LATENCY" = 0 ] || jobs_limit=1
[[ "$jobs_limit" =~ ^[1-9][0-9]?$ ]] || die "INTEROP_JOBS=$jobs_limit: expected a number of checks from 1 to 99"
for name in "${profiles[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_limit" ]; do wait -n || true; done
  rm -f "$OUT/$name.json" "$OUT/$name.verdict"
  checker=()
  [ -z "${CHECKER[$name]:-}" ] || checker=(--checker "$ROOT/scripts/interop/${CHECKER[$name]}")
  # shellcheck disable=SC2086
  (
    passed=0
    check "$name" "$INTEROP" --passcode 20202021 --discriminator 3840 --paa "$PAA" ${REQUIRE[$name]:-} "${checker[@]}" \
      --latency "$LATENCY" --report "$OUT/$name.json" -- \
      "$SIM" run "$ROOT/DeviceProfiles/devices/$name.yaml" --passcode 20202021 --discriminator 3840
    [ "$passed" = 1 ] && echo pass >"$OUT/$name.verdict"
  ) >"$OUT/$name.out" 2>&1 &
done
wait
for name in "${profiles[@]}"; do
  echo "interop: $name ..."
  cat "$OUT/$name.out"
  if [ "$(cat "$OUT/$name.verdict" 2>/dev/null)" = pass ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
# Restart: commission, restart the device process, read again without commissioning.
if [ "${INTEROP_SKIP_RESTART:-}" = "" ]; then
  echo "interop: restart (dimmable-light) ..."
  rm -f "$OUT/restart.json"
  check restart "$INTEROP" --passcode 20202021 --discriminator 3840 --paa "$PAA" \
    --checker "$ROOT/scripts/interop/restart_check.py" --report "$OUT/restart.json" -- \
    "$ROOT/scripts/interop/restarting-device.sh" "$SIM" run "$ROOT/DeviceProfiles/devices/dimmable-light.yaml" \
    --passcode 20202021 --discriminator 3840
fi
# Groupcast: two lights of one home process put in a group by the reference controller
# (connectedhomeip's group test data), then switched by group messages (IPv6 multicast).
if [ "${INTEROP_SKIP_GROUP:-}" = "" ]; then
  echo "interop: group (two lights, one groupcast) ..."
  rm -f "$OUT/group.json"
  check group env GROUP_SECOND=34567890:1201 "$INTEROP" --passcode 20202021 --discriminator 3840 --paa "$PAA" \
    --checker "$ROOT/scripts/interop/group_check.py" --report "$OUT/group.json" -- \
    "$SIM" home "$ROOT/scripts/interop/group-home.yaml"
fi
# Acts: a person at the device (its button, dimmer and cord; a thermostat's dial), seen by the
# reference controller's subscriptions.
if [ "${INTEROP_SKIP_ACTS:-}" = "" ]; then
  for name in light-and-covering thermostat; do
    echo "interop: acts ($name) ..."
    rm -f "$OUT/acts-$name.json"
    check "acts-$name" "$INTEROP" --passcode 20202021 --discriminator 3840 --paa "$PAA" \
      --checker "$ROOT/scripts/interop/acts_check.py" --report "$OUT/acts-$name.json" -- \
      "$SIM" run "$ROOT/DeviceProfiles/devices/$name.yaml" --passcode 20202021 --discriminator 3840
  done
fi
# A home: the device with both a light and a covering, commissioned while the demo home's
# 28 nodes run in one process and then one process each (scripts/interop-home.sh checks
# every device of the home the same way; its steps land in $OUT/home/).
if [ "${INTEROP_SKIP_HOME:-}" = "" ]; then
  echo "interop: home (Light and Shade in the demo home, both modes) ..."
  check home env MATTER_INTEROP="$INTEROP" scripts/interop-home.sh --device "Light and Shade" --out "$OUT/home"
  grep -E '^interop-home: .*(PASS|FAIL|differ)' "$OUT/home.log" | sed 's/^/    /' || true
fi
echo "interop: $passed passed, $failed failed"
[ "$failed" = 0 ]

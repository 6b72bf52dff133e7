#!/usr/bin/env bash
# Certification cases: connectedhomeip's own Python test cases (src/python_testing/TC_*.py, on
# its chip.testing framework) against each shipped device profile, with the PyPI controller
# home-assistant-chip-core/-clusters as the test harness. Not part of the test command: it
# needs a connectedhomeip checkout (a fork's snapshot serves), given as CHIP_DIR. Needs root.
#
#   scripts/cert.sh CHIP_DIR [--profiles "NAME..."] [--only REGEX] [--out DIR]
#
# For each profile, on a private fake LAN (device host `dev`, harness host `ctl`):
#   1. the device starts factory-new; scripts/cert/pics.py commissions it, reads every
#      attribute once and writes its PICS from what it declares (never picked by hand);
#   2. scripts/cert/plan.py picks the cases that apply (by the cluster each case's PICS code
#      names, or the node as a whole) with the PIXITs of the case's own CI arguments, and the
#      automated YAML cases (src/app/tests/suites/certification/Test_TC_*.yaml), which
#      scripts/cert/yaml_cases.py runs through connectedhomeip's matter.yamltests and chip.yaml;
#   3. each case file runs against the device started factory-new again, commissioned by the
#      case (the framework's on-network commissioning), bounded in time.
# Operator steps: the Generic Switch cases' button presses and the Occupancy Sensing cases'
# occupancy come through the cases' own hook, the all-clusters app's named pipe (--app-pid,
# use_button_simulator, simulate_occupancy), which this script reads and turns into
# `matter-sim act NODE press single|double|N|long` or `occupied|unoccupied`; a case's prompt
# for a hand at the device ("Manually put the device in …") through the hook the harness offers
# for prompts (TestRunnerHooks.show_prompt), which scripts/cert/operator_hook.py does as an act
# (`vacuum start|dock`) before the case goes on.
# Prints the table case x profile (pass, FAIL, n/a = not applicable or skipped by the case's
# own guards, harness = a limit of the harness, scripts/cert/harness-limits.tsv, with the log
# line that shows it) and closes with "N passed, M failed". Logs land in $OUT/<profile>/.
. "$(dirname "$0")/lib/common.sh"
need_root
CHIP_DIR="${1:-}"
[ -n "$CHIP_DIR" ] && [ -d "$CHIP_DIR/src/python_testing" ] || die "usage: cert.sh CHIP_DIR [--profiles \"NAME...\"] [--only REGEX] [--out DIR] (CHIP_DIR: a connectedhomeip checkout with src/python_testing)"
CHIP_DIR="$(cd "$CHIP_DIR" && pwd)"; shift
PROFILES=""; ONLY=""; OUT="$ROOT/.build/cert"
while [ $# -gt 0 ]; do
  case "$1" in
    --profiles) PROFILES="$2"; shift 2 ;;
    --only) ONLY="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    *) die "unknown option $1" ;;
  esac
done
[ -n "$PROFILES" ] || PROFILES="$(cd DeviceProfiles/devices && ls *.yaml | sed 's/\.yaml$//' | tr '\n' ' ')"
CASE_TIMEOUT_S="${CERT_CASE_TIMEOUT:-600}"

build_products matter-sim
SIM="$BIN/matter-sim"
VENV="$("$ROOT/scripts/lib/venvs.sh" cert)"
# chip.testing lives in the checkout: the wheel's `chip` package gets a copy, with the spec's
# data model zipped as connectedhomeip's build packs it (data_model/<version>/allfiles.zip).
TESTING="$CHIP_DIR/src/python_testing/matter_testing_infrastructure/chip/testing"
[ -d "$TESTING" ] || die "$TESTING: no chip.testing in CHIP_DIR"
INSTALLED="$(echo "$VENV"/lib/python3*/site-packages)/chip/testing"
(
  flock 9   # runs side by side share the venv
  rm -rf "$INSTALLED"; cp -r "$TESTING" "$INSTALLED"
  for version in "$CHIP_DIR"/data_model/*/; do
    [ -d "$version/clusters" ] || continue
    mkdir -p "$INSTALLED/data_model/$(basename "$version")"
    (cd "$version" && python3 -m zipfile -c "$INSTALLED/data_model/$(basename "$version")/allfiles.zip" clusters device_types)
  done
) 9>"$VENV.cert-lock"
DATA_MODEL="$(ls -d "$CHIP_DIR"/data_model/1.4* | sort -V | tail -n 1)"
WORK="$(mktemp -d /var/tmp/matter-cert.XXXXXX)"
LAN="flc$$"; LAN="${LAN:0:12}"
export FAKELAN_OWNER=$$
mkdir -p "$OUT" "$WORK/paa"
cp "$ROOT"/DeviceProfiles/credentials/paa/*.der "$WORK/paa/" 2>/dev/null || true
for cert in "$ROOT"/DeviceProfiles/credentials/paa/*.pem; do
  [ -f "$cert" ] && grep -q "BEGIN CERTIFICATE" "$cert" && openssl x509 -in "$cert" -outform der -out "$WORK/paa/$(basename "${cert%.*}").der"
done

DEVICE_PID=""; PIPE_PID=""
stop_device() {
  [ -z "$DEVICE_PID" ] || { kill "$DEVICE_PID" 2>/dev/null; wait "$DEVICE_PID" 2>/dev/null; }
  DEVICE_PID=""
}
cleanup() {
  stop_device
  [ -z "$PIPE_PID" ] || kill "$PIPE_PID" 2>/dev/null
  "$FAKELAN" down "$LAN" >/dev/null 2>&1
  rm -rf "$WORK" "/tmp/chip_all_clusters_fifo_$$"
}
on_exit cleanup
"$FAKELAN" up "$LAN" dev ctl >/dev/null
"$FAKELAN" avahi "$LAN" dev

# The test event trigger key (General Diagnostics TestEventTrigger): the one chip.testing sends
# by default (send_test_event_triggers) and the BOOLCFG cases' CI PIXIT; the YAML cases get it as
# their TEST_EVENT_TRIGGER_KEY. A trigger does what an operator would at the device.
TEST_EVENT_KEY=000102030405060708090a0b0c0d0e0f

# start_device PROFILE LOG: the profile factory-new on the device host; waits for its record.
start_device() {
  stop_device
  rm -rf "$WORK/state"
  (cd "$WORK" && exec "$FAKELAN" exec "$LAN" dev -- "$SIM" run "$ROOT/DeviceProfiles/devices/$1.yaml" \
    --state-dir "$WORK/state" --commissioning-window 0 --test-event-key "$TEST_EVENT_KEY") \
    </dev/null >"$2" 2>&1 &
  DEVICE_PID=$!
  local deadline=$((SECONDS + 60))
  while [ "$SECONDS" -lt "$deadline" ] && kill -0 "$DEVICE_PID" 2>/dev/null; do
    "$FAKELAN" exec "$LAN" dev -- timeout 5 avahi-browse -prt _matterc._udp 2>/dev/null \
      | grep '^=' | grep -q "\"D=$DISCRIMINATOR\"" && return 0
    sleep 0.25
  done
  return 1
}

# The cases' simulator hook (the all-clusters app's named pipe, --app-pid): JSON commands
# that stand for an operator at the device, done as `matter-sim act` (a switch pressed, a
# room occupied): scripts/cert/app_pipe.py.
mkfifo "/tmp/chip_all_clusters_fifo_$$"
"$VENV/bin/python" "$ROOT/scripts/cert/app_pipe.py" "/tmp/chip_all_clusters_fifo_$$" "$WORK/state/control.sock" "$WORK/act.log" &
PIPE_PID=$!

# harness PY LOG [nocommission] [qr] ARGS...: runs chip.testing's PY on the harness host (a
# private /data for the controller's native stack), bounded in time; it commissions first (not
# with nocommission) with the profile's own passcode and discriminator, or its QR code (qr).
harness() {
  local py="$1" log="$2" setup method=(--commissioning-method on-network); shift 2
  if [ "${1:-}" = nocommission ]; then method=(); shift; fi
  setup=(--discriminator "$DISCRIMINATOR" --passcode "$PASSCODE")
  if [ "${1:-}" = qr ]; then setup=(--qr-code "$QR_CODE"); shift; fi
  "$FAKELAN" exec "$LAN" ctl -- unshare -m --propagation private bash -c '
    mkdir -p /data && mount -t tmpfs tmpfs /data && cd "$1" && shift && exec "$@"
  ' cert-harness "$CHIP_DIR/src/python_testing" env CHIP_DIR="$CHIP_DIR" CERT_CONTROL_SOCKET="$WORK/state/control.sock" \
    PYTHONPATH="$CHIP_DIR/src/python_testing:$CHIP_DIR/scripts/py_matter_yamltests:$CHIP_DIR/scripts/py_matter_idl" \
    timeout "$CASE_TIMEOUT_S" "$VENV/bin/python" "$ROOT/scripts/cert/operator_hook.py" "$py" --paa-trust-store-path "$WORK/paa" \
    "${method[@]}" "${setup[@]}" "$@" \
    </dev/null >"$log" 2>&1
}

for profile in $PROFILES; do
  dir="$OUT/$profile"; rm -rf "$dir"; mkdir -p "$dir"
  # record CASE RESULT: one line of the profile's results (scripts/cert/table.py reads them).
  record() { printf '%s\t%s\n' "$1" "$2" >>"$dir/results.tsv"; }
  echo "cert: $profile ..."
  # The profile's own setup codes (TC-SC-7.1 refuses the SDK's default passcode and discriminator).
  read -r PASSCODE DISCRIMINATOR QR_CODE < <("$SIM" describe "DeviceProfiles/devices/$profile.yaml" --json \
    | python3 -c 'import json, sys; d = json.load(sys.stdin)["devices"][0]; print(d["passcode"], d["discriminator"], d["qrCode"])')
  # PIXIT.WNCV.FULLMOTION (the YAML cases' fullMotionDuration, ms): the slower of the profile's
  # lift and tilt travel end to end, and a second for the last report; 6 s is the all-clusters app's.
  FULL_MOTION_MS="$("$SIM" describe "DeviceProfiles/devices/$profile.yaml" | sed -n 's|.*window covering: lift \([0-9.]*\) %/s, tilt \([0-9.]*\) %/s.*|\1 \2|p' \
    | awk 'NR == 1 { slow = ($1 < $2 ? $1 : $2); if (slow > 0) printf "%d", (int(100 / slow + 0.999) + 1) * 1000 }')"
  if ! start_device "$profile" "$dir/pics-device.log" \
    || ! harness "$ROOT/scripts/cert/pics.py" "$dir/pics.log" --storage-path "$WORK/pics-storage.json" \
      --logs-path "$WORK/logs" --string-arg "out:$dir/pics.txt" --string-arg "data_model:$DATA_MODEL"; then
    echo "cert: $profile: no PICS (device or commissioning failed; $dir/pics.log)"
    record "(commissioning)" FAIL; continue
  fi
  rm -f "$WORK/pics-storage.json"
  "$VENV/bin/python" "$ROOT/scripts/cert/plan.py" "$CHIP_DIR" "$dir/pics.txt" "$ONLY" >"$dir/plan.tsv"
  while IFS=$'\t' read -r kind file a b c; do
    if [ "$kind" = n/a ]; then record "$a" n/a; fi
  done <"$dir/plan.tsv"
  while IFS=$'\t' read -r kind file endpoint methods pixits; do
    [ "$kind" = run ] || continue
    log="$dir/${file%.py}-ep$endpoint.log"
    # The YAML cases share one runner: one run (and log) per case.
    tests=(); for m in ${methods//,/ }; do tests+=(--tests "$m"); done
    mapfile -t extra < <(python3 -c 'import json, sys; print("\n".join(json.loads(sys.argv[1])))' "$pixits")
    [ "${#extra[@]}" -gt 0 ] && [ -n "${extra[0]}" ] || extra=()
    if [ "$file" = yaml_cases.py ]; then
      file="$ROOT/scripts/cert/yaml_cases.py"; log="$dir/yaml-${methods#test_}-ep$endpoint.log"
      [ -z "$FULL_MOTION_MS" ] || extra+=(--int-arg "fullMotionDuration:$FULL_MOTION_MS")
      # The key by both names the YAML cases give it (TC-DGGEN-2.3 calls it PIXIT.DGGEN.ENABLEKEY).
      extra+=(--string-arg "TEST_EVENT_TRIGGER_KEY:hex:$TEST_EVENT_KEY" --string-arg "PIXIT.DGGEN.ENABLEKEY:hex:$TEST_EVENT_KEY")
    fi
    setup=()
    while [ "${extra[0]:-}" = nocommission ] || [ "${extra[0]:-}" = qr ]; do setup+=("${extra[0]}"); extra=("${extra[@]:1}"); done
    # The PICS checker compares one endpoint with that endpoint's own PICS.
    pics="$dir/pics.txt"; [ "$file" != TC_pics_checker.py ] || pics="$dir/pics.txt.ep$endpoint"
    rm -rf "$WORK/logs" "$WORK/storage.json"
    if ! start_device "$profile" "${log%.log}.device.log"; then
      for m in ${methods//,/ }; do record "$("$VENV/bin/python" "$ROOT/scripts/cert/result.py" name "$m")" FAIL; done
      continue
    fi
    harness "$file" "$log" "${setup[@]}" --storage-path "$WORK/storage.json" --logs-path "$WORK/logs" \
      --endpoint "$endpoint" --PICS "$pics" --app-pid $$ --app-pipe_prefix /tmp/chip_all_clusters_fifo_ --bool-arg use_button_simulator:true \
      "${tests[@]}" "${extra[@]}" || true
    while IFS=$'\t' read -r case result; do
      record "$case" "$result"
      [ "$result" = pass ] || [ "$result" = n/a ] || echo "cert: $profile $case $result ($log)"
    done < <("$VENV/bin/python" "$ROOT/scripts/cert/result.py" results "$WORK/logs" "$log" "$methods" "$ROOT/scripts/cert/harness-limits.tsv")
  done <"$dir/plan.tsv"
  stop_device
done

# The table: one row per case, one column per profile; the counts.
python3 "$ROOT/scripts/cert/table.py" "$OUT" $PROFILES
echo "cert: connectedhomeip $(cat "$CHIP_DIR/COMMIT" 2>/dev/null || echo "at $CHIP_DIR")"

#!/usr/bin/env bash
# scenario-check.sh: `matter-sim home --scenario` for real. On a private fake LAN (the home's
# nodes advertise through their own Avahi daemon there), runs the demo home with
#   - the two shipped scenarios (evening routine, a flaky Wi-Fi day): every step passes, exit 0;
#   - scripts/scenarios/wrong-expectation.yaml: exit 1, the failure named on stdout and in the
#     JUnit report;
#   - scripts/scenarios/unknown-names.yaml: refused before it starts, each bad name explained.
# Prints PASS/FAIL per check and a summary; the reports go to .build/scenarios/.
#
#   scripts/scenario-check.sh
. "$(dirname "$0")/lib/common.sh"
build_products matter-sim
SIM="$BIN/matter-sim"
home=DeviceProfiles/homes/demo-home.yaml
OUT=.build/scenarios
STATE="$(mktemp -d /tmp/scenario-check.XXXXXX)"
LAN="flscn$$"; LAN="${LAN:0:12}"
cleanup() {
  scripts/fakelan.sh down "$LAN" >/dev/null 2>&1 || true
  rm -rf "$STATE"
}
on_exit cleanup
rm -rf "$OUT"; mkdir -p "$OUT"
scripts/fakelan.sh up "$LAN" home >/dev/null
scripts/fakelan.sh avahi "$LAN" home >/dev/null

passed=0; failed=0
check() {  # check NAME CONDITION-STATUS DETAIL
  if [ "$2" = 0 ]; then passed=$((passed + 1)); echo "PASS $1 ($3)"; else failed=$((failed + 1)); echo "FAIL $1 ($3)"; fi
}
# run NAME SCENARIO: the home with the scenario, on a fresh state root; sets $status.
run() {
  local name="$1" scenario="$2"
  status=0
  scripts/fakelan.sh exec "$LAN" home -- timeout 600 "$SIM" home "$home" --state-root "$STATE/$name" \
    --scenario "$scenario" --junit "$OUT/$name.xml" >"$OUT/$name.out" 2>"$OUT/$name.err" || status=$?
  grep -E '^\[|^scenario' "$OUT/$name.out" | sed 's/^/  /' || true
}
# junit FILE: "tests failures" from the report.
junit() { python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
suite = ET.parse(sys.argv[1]).getroot().find("testsuite")
print(suite.get("tests"), suite.get("failures"))
for case in suite.iter("testcase"):
    failure = case.find("failure")
    if failure is not None:
        print("failure:", case.get("name"), "--", failure.get("message"))
PY
}

for name in evening-routine flaky-wifi-day; do
  echo "scenario-check: $name"
  run "$name" "DeviceProfiles/scenarios/$name.yaml"
  read -r tests failures < <(junit "$OUT/$name.xml" | head -n 1)
  summary="$(grep '^scenario ".*steps,' "$OUT/$name.out" | tail -n 1)"
  [ "$status" = 0 ] && [ "$failures" = 0 ] && [ "$tests" -gt 0 ]
  check "$name: every step passes, exit 0, JUnit without failures" $? "exit=$status tests=$tests failures=$failures; ${summary#scenario }"
done

echo "scenario-check: a wrong expectation"
run wrong scripts/scenarios/wrong-expectation.yaml
report="$(junit "$OUT/wrong.xml")"
read -r tests failures <<<"$(head -n 1 <<<"$report")"
line="$(grep -F 'FAIL expect Ceiling Light 1/OnOff.OnOff = false within 1 s' "$OUT/wrong.out" || true)"
[ "$status" = 1 ] && [ "$failures" = 1 ] && grep -qF 'but it is true' <<<"$line" \
  && grep -qF 'failure: [00:00:01] expect Ceiling Light 1/OnOff.OnOff = false within 1 s -- expected 1/OnOff.OnOff = false within 1 s, but it is true' <<<"$report"
check "a wrong expectation fails: exit 1, the message, a JUnit failure" $? "exit=$status tests=$tests failures=$failures; ${line#*: }"

echo "scenario-check: names the home does not have"
run unknown scripts/scenarios/unknown-names.yaml
errors="$(cat "$OUT/unknown.err")"
sed 's/^/  /' "$OUT/unknown.err" | grep -v ' notice \| info ' || true
[ "$status" = 1 ] && [ ! -e "$OUT/unknown.xml" ] \
  && grep -qF "steps[0].node: no node 'Cieling Light' in this simulator; did you mean 'Ceiling Light'?" <<<"$errors" \
  && grep -qF 'steps[1].expect: OnOff has no attribute OnOf here; did you mean OnOff?' <<<"$errors" \
  && grep -qF 'steps[2].expect: no cluster DoorLock on this device' <<<"$errors" \
  && grep -qF "steps[3].act: 'cord' needs a WindowCovering cluster, and Ceiling Light has none" <<<"$errors" && grep -qF 'cannot run: 4 errors' <<<"$errors"
check "unknown names are refused before the run, each explained" $? "exit=$status"

echo "scenario-check: $passed passed, $failed failed (reports in $OUT/)"
[ "$failed" = 0 ]

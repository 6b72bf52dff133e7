#!/usr/bin/env bash
# Data-model conformance: each node is commissioned by the reference Matter controller on a
# private two-host fake LAN (scripts/interop/run.sh with scripts/interop/wildcard_read.py as
# its checker), every attribute of every endpoint is read in one wildcard read, and Espressif's
# data-model validator (PyPI esp-matter-dm-validator, in a venv of its own) checks it against
# the spec's requirements for the device types on each endpoint, for the spec version the node
# reports (scripts/dm_validate.py). Needs root.
#
#   scripts/dm-conformance.sh [TARGET...]
#
# A TARGET is a device profile name (DeviceProfiles/devices/NAME.yaml) or path, HOME.yaml#N
# (device N of a home, as `matter-sim run HOME --home-device N`), or `circuitmatter` (the
# third-party Python device, PyPI circuitmatter: the proof that the pipeline finds problems).
# Without targets: every shipped device profile, every device of the demo home that overrides
# its profile's data (values, identity, behaviour, cloud; the others read as the profile), and the
# devices in scripts/dm-conformance-variants/ (what the profile schema allows beyond the
# shipped profiles: optional clusters and features, two device types on an endpoint).
#
# Findings that are not to fail the check (the validator's mistakes, or deviations the project
# chose) are listed, each with its reason and spec section, in
# scripts/dm-conformance-exceptions.tsv; they are printed as exceptions, never dropped, and a
# listed finding that no longer occurs fails the check (the list stays true). Prints each node's findings and closes with "dm-conformance: N passed,
# M failed" (exit 1 when one failed).
#
#   DMV_VENV   the validator's venv (default ~/.cache/matter-sim/dm-validator-venv)
#   DMV_OUT    wildcard reads and the validator's reports (default .build/dm-conformance)
#   DMV_JOBS   how many targets are read at once, each on a fake LAN of its own (default 3:
#              a target mostly waits on the controller, 5 s of CPU in 10 s)
. "$(dirname "$0")/lib/common.sh"
OUT="${DMV_OUT:-$ROOT/.build/dm-conformance}"
EXCEPTIONS="$ROOT/scripts/dm-conformance-exceptions.tsv"
SIM="$ROOT/.build/debug/matter-sim"
HOME_FILE="$ROOT/DeviceProfiles/homes/demo-home.yaml"

mkdir -p "$OUT"
build() { BUILD_LOG="$OUT/build.log" build_products matter-sim; }

targets=("$@")
if [ "${#targets[@]}" = 0 ]; then
  for profile in DeviceProfiles/devices/*.yaml; do targets+=("$(basename "$profile" .yaml)"); done
  targets+=(scripts/dm-conformance-variants/*.yaml)
  # The home's devices, from the simulator itself (index, profile, name), and what the home
  # file overrides on each. A device that overrides nothing its data holds (no values,
  # identity, behaviour or cloud: only its name and setup code) reads as its shipped profile
  # does, which is read above: only the others are read again.
  build
  "$SIM" describe --json "$HOME_FILE" >"$OUT/home-devices.json" \
    || { echo "dm-conformance: cannot describe the devices of $HOME_FILE" >&2; exit 2; }
  mapfile -t home_devices < <(python3 - "$HOME_FILE" "$OUT/home-devices.json" <<'PY'
import json, os, sys
import yaml
home, described = yaml.safe_load(open(sys.argv[1])), json.load(open(sys.argv[2]))["devices"]
# The home's devices in the simulator's order: each structure's rooms, then its own devices.
written = [d for s in home["structures"] for d in [d for r in s.get("rooms") or [] for d in r.get("devices") or []]
           + (s.get("devices") or [])]
if len(written) != len(described):
    sys.exit(f"{sys.argv[1]}: {len(written)} devices written, {len(described)} described")
shipped = os.path.realpath("DeviceProfiles/devices")
for device, node in zip(written, described):
    profile = os.path.realpath(os.path.join(os.path.dirname(sys.argv[1]), device["profile"]))
    if os.path.dirname(profile) != shipped or set(device) - {"profile", "name", "commissioning"}:
        print(node["homeIndex"])
PY
  ) || { echo "dm-conformance: cannot read the devices of $HOME_FILE" >&2; exit 2; }
  [ "${#home_devices[@]}" -gt 0 ] || { echo "dm-conformance: no device of $HOME_FILE to read" >&2; exit 2; }
  for n in "${home_devices[@]}"; do targets+=("$HOME_FILE#$n"); done
fi

# The validator, in its own venv (it needs no native code: pip alone).
VENV="$(scripts/lib/venvs.sh dm-validator)"
build

JOBS="${DMV_JOBS:-3}"
[[ "$JOBS" =~ ^[1-9][0-9]?$ ]] || die "DMV_JOBS=$JOBS: expected a number of targets from 1 to 99"
LABELS=()
# run_target LABEL PASSCODE DISCRIMINATOR DEVICE-COMMAND...: reads the node and validates it in
# the background (at most JOBS at once); its output goes to $OUT/LABEL.out and its verdict to
# $OUT/LABEL.verdict, which the end collects in the order the targets were given.
run_target() {
  local label="$1"
  LABELS+=("$label")
  rm -f "$OUT/$label.verdict"
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  read_and_validate "$@" >"$OUT/$label.out" 2>&1 &
}

read_and_validate() {
  local label="$1" passcode="$2" discriminator="$3"; shift 3
  local keep="$OUT/$label"
  rm -rf "$keep"
  echo "dm-conformance: $label ..."
  if ! scripts/interop/run.sh --passcode "$passcode" --discriminator "$discriminator" \
      --checker "$ROOT/scripts/interop/wildcard_read.py" --keep "$keep" -- "$@" >"$OUT/$label.log" 2>&1 \
      || ! [ -f "$keep/controller/wildcard.json" ]; then
    echo fail >"$OUT/$label.verdict"
    echo "dm-conformance: $label FAIL (no wildcard read; log: $OUT/$label.log)"
    tail -n 20 "$OUT/$label.log" | sed 's/^/    /'
    return
  fi
  cp "$keep/controller/wildcard.json" "$OUT/$label.json"
  # A node that failed the wildcard read itself was read cluster by cluster (wildcard_read.py).
  python3 -c 'import json, sys
for step in json.load(open(sys.argv[1])):
    if "wildcardError" in step:
        print("  note: the wildcard read failed (%s); read cluster by cluster" % step["wildcardError"])' \
    "$keep/report.json" || true
  if "$VENV/bin/python" "$ROOT/scripts/dm_validate.py" "$OUT/$label.json" --label "$label" \
      --exceptions "$EXCEPTIONS" --all-exceptions-used --report "$OUT/$label.report.txt"; then
    echo pass >"$OUT/$label.verdict"
  else
    echo fail >"$OUT/$label.verdict"
    echo "dm-conformance: $label FAIL (validator report: $OUT/$label.report.txt)"
  fi
  rm -rf "$keep"
}

for target in "${targets[@]}"; do
  case "$target" in
    circuitmatter)
      # Its setup code is random and chosen at first start: make its state file first (no
      # network: certificates and a verifier), then start it with that state.
      python="$(scripts/lib/venvs.sh circuitmatter)/bin/python"
      state="$OUT/circuitmatter-state.json"
      rm -f "$state"
      (cd "$OUT" && "$python" -c 'import json, sys
from circuitmatter import certificates
from circuitmatter.utility import random
json.dump(certificates.generate_initial_state(0xFFF4, 0x1234, "CircuitMatter Device", random), open(sys.argv[1], "w"), indent=1)' "$state")
      read -r passcode discriminator < <(python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(s["passcode"], s["discriminator"])' "$state")
      run_target circuitmatter "$passcode" "$discriminator" /bin/sh -c \
        'cp "$0" matter-device-state.json && exec "$1" -u "$2"' "$state" "$python" \
        "$ROOT/Tests/HomeAPITests/Support/circuitmatter_light.py" ;;
    *.yaml\#*)
      file="${target%#*}"; index="${target##*#}"
      run_target "$(basename "$file" .yaml)-$index" 20202021 3840 \
        "$SIM" run "$file" --home-device "$index" --passcode 20202021 --discriminator 3840 ;;
    *)
      file="$target"; [ -f "$file" ] || file="DeviceProfiles/devices/$target.yaml"
      [ -f "$file" ] || { echo "dm-conformance: no profile $target" >&2; exit 2; }
      run_target "$(basename "$file" .yaml)" 20202021 3840 \
        "$SIM" run "$ROOT/$file" --passcode 20202021 --discriminator 3840 ;;
  esac
done
wait
passed=0; failed=0
for label in "${LABELS[@]}"; do
  cat "$OUT/$label.out"
  if [ "$(cat "$OUT/$label.verdict" 2>/dev/null)" = pass ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "dm-conformance: $passed passed, $failed failed"
[ "$failed" = 0 ]

#!/usr/bin/env bash
# interop-home.sh: the reference Matter controller (../shared/interop/run-interop.sh)
# commissions and exercises every device of a home while the whole home runs, once with
# every device in one process (`matter-sim home`) and once with one process per device
# (`matter-sim home --process-per-device`), and checks both give the same results.
#
#   scripts/interop-home.sh [HOME.yaml] [--modes "one per-device"] [--only NAME]
#
# Each check starts the home afresh (a new state root, so every node is commissionable) on
# the interop script's private two-host network, and commissions one device by its own
# passcode and discriminator. Per device and mode it prints the steps that passed and
# failed; the device's result is the list of step names with PASS/FAIL. Closes with
# "N passed, N failed" (a device passes when every mode passed every step and the modes
# agree). Needs root. Logs and reports land in .build/interop-home/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
SHARED="${MATTER_SHARED:-$ROOT/../shared}"
HOME_FILE="$ROOT/DeviceProfiles/homes/demo-home.yaml"
MODES="one per-device"
ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --modes) MODES="$2"; shift 2 ;;
    --only) ONLY="$2"; shift 2 ;;
    -*) echo "interop-home: unknown option $1" >&2; exit 2 ;;
    *) HOME_FILE="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; shift ;;
  esac
done
[ -x "$SHARED/interop/run-interop.sh" ] || { echo "interop-home: $SHARED/interop/run-interop.sh not found" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "interop-home: needs root (network namespaces)" >&2; exit 2; }
swift build --product matter-sim >/dev/null
SIM="$ROOT/.build/debug/matter-sim"
OUT="$ROOT/.build/interop-home"
mkdir -p "$OUT"

# name|passcode|discriminator of every device, from the home's own description.
mapfile -t DEVICES < <("$SIM" describe "$HOME_FILE" --no-attributes | awk '
  /^    device "/ { match($0, /"[^"]*"/); name = substr($0, RSTART + 1, RLENGTH - 2) }
  /^      serial / && name != "" {
    gsub(",", ""); for (i = 1; i <= NF; i++) { if ($i == "passcode") p = $(i + 1); if ($i == "discriminator") d = $(i + 1) }
    print name "|" p "|" d; name = ""
  }')
[ "${#DEVICES[@]}" -gt 0 ] || { echo "interop-home: no devices found in $HOME_FILE" >&2; exit 2; }
echo "interop-home: ${#DEVICES[@]} devices of $(basename "$HOME_FILE"), modes: $MODES"

passed=0; failed=0; index=0
for entry in "${DEVICES[@]}"; do
  IFS='|' read -r name passcode discriminator <<<"$entry"
  index=$((index + 1))
  [ -z "$ONLY" ] || [ "$name" = "$ONLY" ] || continue
  slug="$(echo "$name" | tr -c 'A-Za-z0-9\n' '-')"
  declare -A RESULT=()
  ok=yes
  for mode in $MODES; do
    extra=()
    [ "$mode" = per-device ] && extra=(--process-per-device)
    state="$(mktemp -d /var/tmp/interop-home.XXXXXX)"
    log="$OUT/$slug.$mode.log"
    status=PASS
    if ! "$SHARED/interop/run-interop.sh" --passcode "$passcode" --discriminator "$discriminator" \
        --paa "$ROOT/DeviceProfiles/credentials/paa" --report "$OUT/$slug.$mode.json" \
        -- "$SIM" home "$HOME_FILE" --state-root "$state" "${extra[@]}" >"$log" 2>&1; then
      status=FAIL; ok=no
    fi
    rm -rf "$state"
    # The result: each step's name and verdict, in order (timings and values left out).
    RESULT[$mode]="$(grep -E '^(PASS|FAIL) \{' "$log" | sed -E 's/^(PASS|FAIL) \{"step": "([^"]*)".*/\1 \2/' | paste -sd, -)"
    steps=$(grep -cE '^PASS \{' "$log" || true); bad=$(grep -cE '^FAIL \{' "$log" || true)
    printf 'interop-home: [%d/%d] %-18s %-10s %s (%s steps passed, %s failed)\n' \
      "$index" "${#DEVICES[@]}" "$name" "$mode" "$status" "$steps" "$bad"
    [ "$status" = PASS ] || tail -n 15 "$log" | sed 's/^/    /'
  done
  first=""
  for mode in $MODES; do
    if [ -z "$first" ]; then first="${RESULT[$mode]}"
    elif [ "${RESULT[$mode]}" != "$first" ]; then
      ok=no; echo "interop-home: $name: modes differ"; for m in $MODES; do echo "    $m: ${RESULT[$m]}"; done
    fi
  done
  echo "    steps: $first"
  if [ "$ok" = yes ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  unset RESULT
done
echo "interop-home: $passed passed, $failed failed"
[ "$failed" = 0 ]

#!/usr/bin/env bash
# Interop check for every device of a home, in both ways `matter-sim home` runs one: all
# nodes in one process, and one process per device (--process-per-device). For each device
# the whole home runs on the device host of the reference-controller harness
# (scripts/interop/run.sh, or $MATTER_INTEROP), and the reference controller commissions
# that device by its own discriminator and passcode and exercises its clusters. Per device,
# both modes must pass every step with the same results (scripts/interop/steps.py: the
# report lines without their timings). Needs root.
#
#   scripts/interop-home.sh [--home FILE] [--device NAME]... [--mode one-process|process-per-device]...
#                           [--out DIR]
#
# Prints a line per device and mode, then "interop-home: N devices, N same in both modes, N
# differ or failed". Reports and logs land in DIR (default .build/interop/home/).
. "$(dirname "$0")/lib/common.sh"
INTEROP="${MATTER_INTEROP:-$ROOT/scripts/interop/run.sh}"
OUT="$ROOT/.build/interop/home"
HOME_FILE="$ROOT/DeviceProfiles/homes/demo-home.yaml"
DEVICES=(); MODES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --home) HOME_FILE="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
    --device) DEVICES+=("$2"); shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --mode)
      case "$2" in one-process|process-per-device) MODES+=("$2") ;;
        *) echo "interop-home: --mode $2: expected one-process or process-per-device" >&2; exit 2 ;; esac
      shift 2 ;;
    *) echo "interop-home: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
[ "${#MODES[@]}" -gt 0 ] || MODES=(one-process process-per-device)
[ -x "$INTEROP" ] || { echo "interop-home: harness $INTEROP not found" >&2; exit 2; }
build_products matter-sim
SIM="$ROOT/.build/debug/matter-sim"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

# The team's cross-check harness, in the version that waits with `avahi-browse … | grep -q
# '^='` under pipefail, never sees a home: its 21 nodes fill more than a pipe buffer, grep
# quits at the first match and avahi-browse dies of SIGPIPE. Such a harness runs as a copy
# that reads the whole listing (grep -c); every other line is its own.
RUN_INTEROP="$INTEROP"
if grep -q "avahi-browse -prt _matterc._udp 2>/dev/null | grep -q '^='" "$RUN_INTEROP"; then
  RUN_INTEROP="$OUT/run-interop.sh"
  sed -e "s|^HERE=.*|HERE=\"$(cd "$(dirname "$INTEROP")" && pwd)\"|" \
      -e "s/avahi-browse -prt _matterc._udp 2>\/dev\/null | grep -q '^='/avahi-browse -prt _matterc._udp 2>\/dev\/null | grep -c '^=' >\/dev\/null/" \
      "$INTEROP" >"$RUN_INTEROP"
  chmod +x "$RUN_INTEROP"
  echo "interop-home: using $RUN_INTEROP (that harness, reading the whole avahi-browse listing)"
fi

# name|passcode|discriminator|device types|cloud-only clusters, one line per device, from the
# home as matter-sim plans it.
mapfile -t PLAN < <("$SIM" describe "$HOME_FILE" --no-attributes | awk '
  function flush() { if (name != "") print name "|" passcode "|" discriminator "|" types "|" cloud }
  /^ *device "/ { flush(); cloud = ""
                  match($0, /"[^"]*"/); name = substr($0, RSTART + 1, RLENGTH - 2)
                  match($0, /\[[^]]*\]/); types = substr($0, RSTART + 1, RLENGTH - 2) }
  /^ *serial / { sub(/.*passcode /, ""); split($0, f, /, discriminator /); passcode = f[1]; discriminator = f[2] }
  /^ *cloud only: / { sub(/^ *cloud only: /, ""); cloud = $0 }
  END { flush() }')
[ "${#PLAN[@]}" -gt 0 ] || { echo "interop-home: no devices in $HOME_FILE" >&2; exit 2; }

# The clusters a device must show over the LAN: its device types' clusters, less the ones
# it serves only through the cloud relay (those are missing on UDP by design).
requires() {
  local types="$1" cloud="$2" r=()
  case "$types" in *Light*|*Plug*) [[ "$cloud" == *"OnOff on"* ]] || r+=(--require onoff) ;; esac
  case "$types" in *DimmableLight*|*ColorTemperatureLight*|*ExtendedColorLight*) [[ "$cloud" == *"LevelControl on"* ]] || r+=(--require level-control) ;; esac
  case "$types" in *WindowCovering*) [[ "$cloud" == *"WindowCovering on"* ]] || r+=(--require window-covering) ;; esac
  echo "${r[@]}"
}

# A report's steps without their timings, one per line, to compare modes. (The JSON report,
# not the log: there the check's lines can land inside the controller's own log lines.)
results() { python3 "$ROOT/scripts/interop/steps.py" "$1"; }

# The UDP port the reference controller took for the device (its "Discovered Device" line, in
# the check's log), and the port the home's table gives the device (in the home's own output,
# the device.log of the harness's kept working directory).
discovered_port() { grep -o 'Discovered Device: [^ ]*' "$1" | head -n 1 | sed 's/.*://'; }
table_port() { awk -v n="$2  " 'index($0, n) == 1 { print $(NF - 1); exit }' "$1" 2>/dev/null; }

# One check of one device; returns the run's status. The harness's working directory (the
# home's output among it) is kept in $kept.
check() {
  local log="$1" report="$2"; shift 2
  rm -f "$report"  # a run that ends early must not leave the last run's report to be read
  rm -rf "$kept"
  # shellcheck disable=SC2046
  "$RUN_INTEROP" --passcode "$passcode" --discriminator "$discriminator" \
    --paa "$ROOT/DeviceProfiles/credentials/paa" $(requires "$types" "$cloud") \
    --keep "$kept" --report "$report" -- "$SIM" home "$HOME_FILE" --state-root state "$@" >"$log" 2>&1
}

total=0; same=0; bad=0
for entry in "${PLAN[@]}"; do
  IFS='|' read -r name passcode discriminator types cloud <<<"$entry"
  if [ "${#DEVICES[@]}" -gt 0 ]; then
    wanted=""; for d in "${DEVICES[@]}"; do [ "$d" = "$name" ] && wanted=yes; done
    [ -n "$wanted" ] || continue
  fi
  total=$((total + 1))
  slug=$(echo "$name" | tr 'A-Z ' 'a-z-')
  verdicts=()
  for mode in "${MODES[@]}"; do
    log="$OUT/$slug.$mode.log"
    flags=(); [ "$mode" = process-per-device ] && flags=(--process-per-device)
    report="$OUT/$slug.$mode.json"
    kept="$OUT/$slug.$mode.work"
    echo "interop-home: $name ($types${cloud:+; cloud only: $cloud}, discriminator $discriminator), $mode ..."
    status=0; check "$log" "$report" "${flags[@]}" || status=$?
    # The reference controller's on-network commissioning pairs with the first commissionable
    # node it hears of: its mDNS resolver reports every _matterc._udp SRV record in any response,
    # not only those of the discriminator it asked for. While the home's nodes still announce
    # (Avahi packs them into shared packets), that can be another node, which then rejects the
    # PASE. That is the controller's choice, not the device's answer: say so and check again
    # (at most twice).
    for attempt in 1 2; do
      found=$(discovered_port "$log"); own=$(table_port "$kept/device.log" "$name")
      [ "$status" != 0 ] && [ -n "$found" ] && [ -n "$own" ] && [ "$found" != "$own" ] || break
      echo "interop-home: $name, $mode: the reference controller went to port $found, not $name's $own; checking again"
      mv "$log" "$log.$attempt"
      status=0; check "$log" "$report" "${flags[@]}" || status=$?
    done
    [ "$status" = 0 ] || echo "interop-home: $name, $mode: the reference controller went to port" \
      "$(discovered_port "$log")" "($name's: $(table_port "$kept/device.log" "$name"))"
    if [ "$status" = 0 ]; then
      verdicts+=(PASS)
    else
      verdicts+=(FAIL); tail -n 20 "$log" | sed 's/^/    /'
    fi
    results "$report" >"$OUT/$slug.$mode.steps"
    echo "interop-home: $name, $mode: ${verdicts[-1]} ($(grep -c '^PASS' "$OUT/$slug.$mode.steps" || true) steps passed," \
      "$(grep -c '^FAIL' "$OUT/$slug.$mode.steps" || true) failed)"
  done
  if [ "${#MODES[@]}" = 2 ] && ! diff -q "$OUT/$slug.${MODES[0]}.steps" "$OUT/$slug.${MODES[1]}.steps" >/dev/null; then
    echo "interop-home: $name: the modes differ:"
    diff "$OUT/$slug.${MODES[0]}.steps" "$OUT/$slug.${MODES[1]}.steps" | sed 's/^/    /' || true
    bad=$((bad + 1))
  elif [[ " ${verdicts[*]} " == *" FAIL "* ]]; then
    bad=$((bad + 1))
  else
    same=$((same + 1))
  fi
done
echo "interop-home: $total devices, $same passed with the same results in ${MODES[*]}, $bad differ or failed"
[ "$bad" = 0 ] && [ "$total" -gt 0 ]

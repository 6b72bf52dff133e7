#!/usr/bin/env bash
# run.sh: the reference-controller check. A device command runs on one host of a private fake
# LAN (scripts/fakelan.sh) with its own D-Bus and Avahi daemon; the connectedhomeip Python
# controller (the one Home Assistant uses) runs on a second host, commissions the device and
# drives it with a checker script (reference_check.py unless --checker says otherwise).
#
#     [dev] Avahi + D-Bus + DEVICE_COMMAND ==== bridge ==== [ctl] reference controller
#
# Nothing leaves the machine: both hosts are network namespaces this script makes and removes,
# also after a failure or a signal. Needs root.
#
#   scripts/interop/run.sh [--passcode N] [--discriminator N] [--paa DIR]... [--latency N]
#                          [--require CLUSTER]... [--report FILE] [--keep DIR]
#                          [--checker SCRIPT] -- DEVICE_COMMAND...
#
# The device command starts in a working directory of its own, exported as
# $INTEROP_DEVICE_DIR (a checker finds it as ../device from its --workdir); its arguments that
# name existing paths relative to the caller's directory (with a /) are made absolute first. The check starts
# once the device host's Avahi daemon lists a `_matterc._udp` record with the discriminator
# (D=) asked for. --paa adds PAA certificates (DER or PEM) to the controller's trust store;
# DeviceProfiles/credentials/paa (the published test PAA) is always in it. The checker gets
# reference_check.py's options and writes its steps to --report as JSON. The options are those
# of the team's cross-check harness (MATTER_INTEROP in scripts/interop.sh), so either runs
# every script of the project.
#
# Exit status: the checker's (0 only when every step passed), 1 when the device was never
# advertised, 2 for a usage error.
# Keeps the caller's working directory: the device command's relative paths are made absolute.
LIB_KEEP_CWD=1 . "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
HERE="$ROOT/scripts/interop"
PASSCODE=20202021
DISCRIMINATOR=3840
LATENCY=0
REPORT=""
KEEP=""
CHECKER="$HERE/reference_check.py"
PAAS=("$ROOT/DeviceProfiles/credentials/paa")
REQUIRE=()
ADVERTISE_WAIT_S="${INTEROP_ADVERTISE_WAIT:-60}"
CHECK_TIMEOUT_S="${INTEROP_CHECK_TIMEOUT:-300}"

usage() { sed -n '2,/^LIB_KEEP_CWD=1 \. .*common\.sh/p' "${BASH_SOURCE[0]}" | sed '$d' >&2; exit 2; }
die() { echo "interop: $*" >&2; exit 2; }
absolute() { (cd "$(dirname "$1")" && echo "$PWD/$(basename "$1")"); }

while [ $# -gt 0 ]; do
  case "$1" in
    --passcode) PASSCODE="$2"; shift 2 ;;
    --discriminator) DISCRIMINATOR="$2"; shift 2 ;;
    --paa) PAAS+=("$2"); shift 2 ;;
    --latency) LATENCY="$2"; shift 2 ;;
    --require) REQUIRE+=(--require "$2"); shift 2 ;;
    --report) REPORT="$(absolute "$2")"; shift 2 ;;
    --keep) KEEP="$2"; shift 2 ;;
    --checker) [ -f "$2" ] || die "--checker $2: no such file"; CHECKER="$(absolute "$2")"; shift 2 ;;
    -h|--help) usage ;;
    --) shift; break ;;
    *) die "unknown option $1 (--help lists them)" ;;
  esac
done
[ $# -gt 0 ] || die "no device command after --"
[[ "$PASSCODE" =~ ^[0-9]{1,8}$ ]] || die "--passcode $PASSCODE: expected up to 8 digits"
[[ "$DISCRIMINATOR" =~ ^[0-9]{1,4}$ ]] && [ "$DISCRIMINATOR" -le 4095 ] || die "--discriminator $DISCRIMINATOR: expected 0...4095"
[[ "$LATENCY" =~ ^[0-9]+$ ]] || die "--latency $LATENCY: expected a count of invokes"
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
DEVICE_COMMAND=()
for word in "$@"; do
  if [[ "$word" == */* && "$word" != /* && -e "$word" ]]; then word="$(absolute "$word")"; fi
  DEVICE_COMMAND+=("$word")
done

VENV="$("$ROOT/scripts/lib/venvs.sh" interop)"
WORK="$(mktemp -d /var/tmp/matter-interop.XXXXXX)"
mkdir -p "$WORK/paa" "$WORK/device" "$WORK/controller"
LAN="fli$$"; LAN="${LAN:0:12}"
export FAKELAN_OWNER=$$

# The controller's trust store takes DER files; PEM certificates are converted, keys skipped.
for dir in "${PAAS[@]}"; do
  [ -d "$dir" ] || die "--paa $dir: not a directory"
  for cert in "$dir"/*; do
    case "$cert" in
      *.der) cp "$cert" "$WORK/paa/" ;;
      *.pem|*.crt) grep -q "BEGIN CERTIFICATE" "$cert" || continue
                   openssl x509 -in "$cert" -outform der -out "$WORK/paa/$(basename "${cert%.*}").der" ;;
    esac
  done
done

DEVICE_PID=""
cleanup() {
  set +e
  [ -z "$DEVICE_PID" ] || kill "$DEVICE_PID" 2>/dev/null
  "$FAKELAN" down "$LAN" >/dev/null 2>&1
  if [ -n "$KEEP" ]; then mkdir -p "$KEEP" && cp -r "$WORK"/. "$KEEP"/; fi
  rm -rf "$WORK"
}
on_exit cleanup

"$FAKELAN" up "$LAN" dev ctl >/dev/null
"$FAKELAN" avahi "$LAN" dev

# The device host: the device command in its own directory, beside the host's Avahi daemon.
(cd "$WORK/device" && INTEROP_DEVICE_DIR="$WORK/device" exec "$FAKELAN" exec "$LAN" dev -- "${DEVICE_COMMAND[@]}") \
  </dev/null >"$WORK/device.log" 2>&1 &
DEVICE_PID=$!

# Wait for this device's commissionable record. The whole listing is read (a home's nodes fill
# more than a pipe buffer, and a reader that quits early would kill avahi-browse).
advertised=""
deadline=$((SECONDS + ADVERTISE_WAIT_S))
while [ "$SECONDS" -lt "$deadline" ]; do
  kill -0 "$DEVICE_PID" 2>/dev/null || break
  listing="$("$FAKELAN" exec "$LAN" dev -- timeout 5 avahi-browse -prt _matterc._udp 2>/dev/null || true)"
  if grep '^=' <<<"$listing" | grep -q "\"D=$DISCRIMINATOR\""; then advertised=yes; break; fi
  sleep 0.25
done
if [ -z "$advertised" ]; then
  echo "interop: no _matterc._udp record with discriminator $DISCRIMINATOR on the device host within ${ADVERTISE_WAIT_S} s; device log:" >&2
  tail -n 40 "$WORK/device.log" >&2
  exit 1
fi

# The controller host: a private /data (the controller's native stack keeps its factory and
# config files there; the empty mount point is all this leaves on the machine) and the
# checker, bounded in time.
REPORT_FILE="${REPORT:-$WORK/report.json}"
rm -f "$REPORT_FILE"
set +e
"$FAKELAN" exec "$LAN" ctl -- unshare -m --propagation private bash -c '
  mkdir -p /data && mount -t tmpfs tmpfs /data
  cd "$1" && shift
  exec "$@"
' interop-controller "$WORK/controller" env PYTHONPATH="$HERE" \
  timeout "$CHECK_TIMEOUT_S" "$VENV/bin/python" "$CHECKER" --passcode "$PASSCODE" \
  --discriminator "$DISCRIMINATOR" --paa "$WORK/paa" --workdir "$WORK/controller" \
  --report "$REPORT_FILE" --latency "$LATENCY" "${REQUIRE[@]}" 2>"$WORK/controller.log"
RC=$?
set -e
if [ "$RC" != 0 ]; then
  echo "interop: FAILED (checker exit $RC). Device log tail:" >&2
  tail -n 30 "$WORK/device.log" >&2
  echo "interop: the node the controller found, and its log tail:" >&2
  grep -m 3 'Discovered Device' "$WORK/controller.log" >&2 || true
  grep -v '^\s*$' "$WORK/controller.log" | tail -n 30 >&2
fi
exit "$RC"

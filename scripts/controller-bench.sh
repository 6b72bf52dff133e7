#!/usr/bin/env bash
# controller-bench.sh: On/Off invoke latency (p50/p99) from this project's controller
# library (homectl bench, through HomeAPI) and from the reference controller
# (scripts/interop/run.sh --latency), against the same matter-sim profile, in the same run,
# printed side by side.
#
# Usage: controller-bench.sh [--count N] [--profile YAML]
#   HOMECTL, MATTER_SIM   binaries to use (default: .build/debug/ of this package)
#   MATTER_INTEROP        another reference-controller harness with run.sh's options
#
# Each side gets its own private fake LAN (scripts/fakelan.sh, with its own Avahi): no mDNS
# on the machine's real interfaces. Needs root.
. "$(dirname "$0")/lib/common.sh"
COUNT=200
PROFILE="$ROOT/DeviceProfiles/devices/on-off-plug.yaml"
while [ $# -gt 0 ]; do
  case "$1" in
    --count) COUNT="$2"; shift 2 ;;
    --profile) PROFILE="$2"; shift 2 ;;
    *) echo "controller-bench: unknown option $1" >&2; exit 2 ;;
  esac
done
HOMECTL="${HOMECTL:-$ROOT/.build/debug/homectl}"
MATTER_SIM="${MATTER_SIM:-$ROOT/.build/debug/matter-sim}"
INTEROP="${MATTER_INTEROP:-$ROOT/scripts/interop/run.sh}"
need_root
for b in "$HOMECTL" "$MATTER_SIM"; do [ -x "$b" ] || { echo "controller-bench: $b is not built" >&2; exit 2; }; done
PASSCODE=20202021
DISCRIMINATOR=3840
MANUAL=34970112332   # manual pairing code of passcode 20202021, discriminator 3840

LAN="flbench$$"; LAN="${LAN:0:12}"
WORK="$(mktemp -d /var/tmp/controller-bench.XXXXXX)"
cleanup() {
  "$FAKELAN" down "$LAN" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
on_exit cleanup

# --- this library: homectl on a controller host, matter-sim on a device host ------------
mkdir -p "$WORK/trust" "$WORK/dev"
cp "$ROOT/DeviceProfiles/credentials/paa/"*.pem "$ROOT/DeviceProfiles/credentials/Chip-Test-CD-Signing-Cert.pem" "$WORK/trust/"
"$FAKELAN" up "$LAN" d c >/dev/null
"$FAKELAN" avahi "$LAN" d c
"$FAKELAN" exec "$LAN" d -- "$MATTER_SIM" run "$PROFILE" --passcode "$PASSCODE" --discriminator "$DISCRIMINATOR" \
  --port 5540 --state-dir "$WORK/dev" --log-level warning >"$WORK/device.log" 2>&1 &
H=(--home "$WORK/home.sqlite" --timeout 10)
ok=""
for _ in $(seq 1 20); do
  if "$FAKELAN" exec "$LAN" c -- "$HOMECTL" commission --code "$MANUAL" --name Bench --paa-trust-store "$WORK/trust" \
      "${H[@]}" >"$WORK/commission.log" 2>&1; then ok=yes; break; fi
  sleep 0.5
done
[ -n "$ok" ] || { echo "controller-bench: commissioning failed:" >&2; tail -n 20 "$WORK/commission.log" >&2; exit 1; }
OURS="$("$FAKELAN" exec "$LAN" c -- "$HOMECTL" bench Bench --count "$COUNT" --json "${H[@]}" 2>"$WORK/bench.log")" \
  || { echo "controller-bench: homectl bench failed:" >&2; tail -n 20 "$WORK/bench.log" >&2; exit 1; }
"$FAKELAN" down "$LAN" >/dev/null 2>&1 || true

# --- the reference controller, same profile and count ---------------------------------
REF_REPORT="$WORK/reference.json"
"$INTEROP" --passcode "$PASSCODE" --discriminator "$DISCRIMINATOR" --latency "$COUNT" --report "$REF_REPORT" -- \
  "$MATTER_SIM" run "$PROFILE" --passcode "$PASSCODE" --discriminator "$DISCRIMINATOR" --port 5540 --log-level warning \
  >"$WORK/reference.log" 2>&1 || { echo "controller-bench: reference run failed:" >&2; tail -n 30 "$WORK/reference.log" >&2; exit 1; }

python3 - "$OURS" "$REF_REPORT" "$COUNT" "$(basename "$PROFILE")" <<'PY'
import json, sys
ours = json.loads(sys.argv[1])
ref = next((e for e in json.load(open(sys.argv[2])) if e["step"].startswith("invoke latency")), None)
print(f"On/Off invoke latency, {sys.argv[3]} invokes, matter-sim {sys.argv[4]} on a fake LAN (debug builds)")
print(f"  {'controller':<34} {'p50 ms':>9} {'p99 ms':>9}")
print(f"  {'this library (homectl bench)':<34} {ours['p50_ms']:>9.3f} {ours['p99_ms']:>9.3f}")
if ref and ref.get("ok"):
    print(f"  {'reference (interop/run.sh --latency)':<34} {ref['p50_ms']:>9.3f} {ref['p99_ms']:>9.3f}")
else:
    print(f"  reference: no latency result ({ref})"); sys.exit(1)
PY

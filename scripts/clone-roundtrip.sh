#!/usr/bin/env bash
# clone-roundtrip.sh: issue #41 with Home Assistant's Matter server, on fake LANs
# (scripts/ohf-check.sh, interview only). Needs root.
#
#   scripts/clone-roundtrip.sh [PROFILE...]        (default: every shipped device profile)
#       The server commissions and interviews each profile's device; its node JSON is cloned
#       (`matter-sim clone`, same serial); the clone runs in the device's place and the server
#       commissions and interviews it; the two node JSONs must agree on every attribute apart
#       from checks.dumps.VARIES (fabric-scoped, network, counters, time). The test command's
#       ohf-profiles step does the same after its own checks (OHF_CLONE_ROUNDTRIP).
#   scripts/clone-roundtrip.sh --real [DUMP...]    (default: Tests/Fixtures/real-devices/*.json)
#       Real devices' dumps are cloned, and the server commissions and interviews the clones:
#       per dump, the fraction of its attributes the server's dump of the clone holds
#       identically, and every difference by kind (checks.dumps --real).
#
# Runs of up to 10 devices, OHF_PARALLEL (default 3) at once. Exits 1 on any difference.
. "$(dirname "$0")/lib/common.sh"
need_root
REAL=""
[ "${1:-}" != "--real" ] || { REAL=yes; shift; }
build_products matter-sim
SIM="$ROOT/.build/debug/matter-sim"
WORK="$(mktemp -d /var/tmp/clone-roundtrip.XXXXXX)"
on_exit "rm -rf '$WORK'"
STARTED=$SECONDS
export OHF_PARALLEL="${OHF_PARALLEL:-3}" OHF_INTERVIEW_ONLY=1 OHF_DUMP_DIR="$WORK/dumps"
mkdir -p "$OHF_DUMP_DIR"
RC=0

if [ -z "$REAL" ]; then
  paths=()
  for p in "$@"; do
    if [ -f "$p" ]; then paths+=("$p"); else paths+=("$ROOT/DeviceProfiles/devices/$p.yaml"); fi
  done
  [ "${#paths[@]}" -gt 0 ] || paths=("$ROOT"/DeviceProfiles/devices/*.yaml)
  echo "clone-roundtrip: ${#paths[@]} profiles, each then its clone"
  OHF_CLONE_ROUNDTRIP=1 "$ROOT/scripts/ohf-check.sh" "${paths[@]}" >"$WORK/ohf.log" 2>&1 || RC=$?
  grep -E 'clone round trip|FAIL|ohf: [0-9]+ passed' "$WORK/ohf.log" | cut -c1-400
  (cd "$ROOT/scripts/checks" && python3 -m checks.dumps "$OHF_DUMP_DIR" "$OHF_DUMP_DIR/clones") || RC=1
else
  dumps=("$@")
  [ "${#dumps[@]}" -gt 0 ] || dumps=("$ROOT"/Tests/Fixtures/real-devices/*.json)
  mkdir -p "$WORK/real" "$WORK/clones"
  clones=()
  for dump in "${dumps[@]}"; do
    serial="$(basename "$dump" .json | cut -c1-32)"
    cp "$dump" "$WORK/real/$serial.json"
    "$SIM" clone "$dump" --serial "$serial" --output "$WORK/clones/$serial.yaml" 2>>"$WORK/clone.log" || {
      echo "clone-roundtrip: $dump did not clone:"; tail -n 3 "$WORK/clone.log"; RC=1; continue; }
    clones+=("$WORK/clones/$serial.yaml")
  done
  echo "clone-roundtrip: ${#clones[@]} real devices' clones through the server"
  "$ROOT/scripts/ohf-check.sh" "${clones[@]}" >"$WORK/ohf.log" 2>&1 || { RC=$?; grep -E 'FAIL' "$WORK/ohf.log" | cut -c1-400; }
  (cd "$ROOT/scripts/checks" && python3 -m checks.dumps --real "$WORK/real" "$OHF_DUMP_DIR") || RC=1
fi
echo "clone-roundtrip: done in $((SECONDS - STARTED)) s (exit $RC)"
exit "$RC"

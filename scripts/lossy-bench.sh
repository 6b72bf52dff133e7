#!/usr/bin/env bash
# lossy-bench.sh: the demo home on a lossy LAN (#17 item 1). On a private fake LAN, every node's
# link loses LOSS % of datagrams each way and holds each 50 ± 20 ms (`matter-sim fault all
# lan-impair`, the node-side netem: this kernel has no sch_netem). homectl on host 'phone' then
# commissions the whole home through it and sends COMMANDS On/Off invokes spread over every
# light and plug (`homectl bench` on each, all at once), and the figures are printed: devices
# commissioned, commands answered, p50/p99 per device, datagrams lost. Loops are bounded.
#
#   scripts/lossy-bench.sh [LOSS] [COMMANDS]       (default 20 %, 1000 commands)
set -euo pipefail
cd "$(dirname "$0")/.."
LOSS="${1:-20}"; COMMANDS="${2:-1000}"
swift build --product matter-sim >/dev/null
swift build --product homectl >/dev/null
BIN="$(swift build --show-bin-path)"
home=DeviceProfiles/homes/demo-home.yaml
STATE="$(mktemp -d /tmp/lossy-bench.XXXXXX)"
LAN="flls$$"; LAN="${LAN:0:12}"
SIM_PID=""
cleanup() {
  [ -z "$SIM_PID" ] || kill -INT "$SIM_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  scripts/fakelan.sh down "$LAN" >/dev/null 2>&1 || true
  [ -n "${KEEP_STATE:-}" ] || rm -rf "$STATE"
}
trap cleanup EXIT INT TERM
scripts/fakelan.sh up "$LAN" home phone >/dev/null
scripts/fakelan.sh avahi "$LAN" home phone >/dev/null
scripts/fakelan.sh exec "$LAN" home -- "$BIN/matter-sim" home "$home" --state-root "$STATE/home" \
  --control "$STATE/control.sock" >"$STATE/home.out" 2>"$STATE/home.err" &
SIM_PID=$!
for _ in $(seq 240); do grep -q '^control socket:' "$STATE/home.out" && break; sleep 0.25; done
impair="loss=${LOSS}%,delay=50ms,jitter=20ms"
"$BIN/matter-sim" fault --control "$STATE/control.sock" all lan-impair "$impair" >/dev/null
echo "lossy-bench: every node's LAN: $impair"

TRUST="$STATE/trust"; mkdir -p "$TRUST"
cp DeviceProfiles/credentials/paa/*.pem DeviceProfiles/credentials/Chip-Test-CD-Signing-Cert.pem "$TRUST/"
t0="$(date +%s.%N)"
scripts/fakelan.sh exec "$LAN" phone -- "$BIN/homectl" commission --home "$home" --database "$STATE/phone.sqlite" \
  --paa-trust-store "$TRUST" --host 10.77.0.2 --timeout 60 >"$STATE/commission.out" 2>"$STATE/commission.err" || true
took="$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
count=$("$BIN/matter-sim" describe "$home" --no-attributes | grep -c '^    device "')
commissioned=$(scripts/fakelan.sh exec "$LAN" phone -- "$BIN/homectl" devices --home "$STATE/phone.sqlite" --json --no-dnssd --timeout 2 2>/dev/null \
  | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))' || echo 0)
echo "lossy-bench: commissioned $commissioned of $count devices in $took s"

# The devices with On/Off: the commands go to them, as evenly as COMMANDS allows.
mapfile -t targets < <(scripts/fakelan.sh exec "$LAN" phone -- "$BIN/homectl" devices --home "$STATE/phone.sqlite" --json --no-dnssd --timeout 2 2>/dev/null \
  | python3 -c 'import json, sys
for d in json.load(sys.stdin):
    if any(t["trait"] == "OnOff" for dt in d["deviceTypes"] for t in dt["traits"]): print(d["name"])')
each=$(( (COMMANDS + ${#targets[@]} - 1) / ${#targets[@]} ))
echo "lossy-bench: $each On/Off invokes on each of ${#targets[@]} devices at once ($(( each * ${#targets[@]} )) in all)"
t0="$(date +%s.%N)"
pids=()
for i in "${!targets[@]}"; do
  scripts/fakelan.sh exec "$LAN" phone -- "$BIN/homectl" bench "${targets[$i]}" --count "$each" --json --no-dnssd --timeout 30 \
    --home "$STATE/phone.sqlite" >"$STATE/bench.$i" 2>"$STATE/bench.$i.err" & pids+=($!)
done
failed=0
for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed=$((failed + 1)); done
took="$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
python3 - "$STATE" "${#targets[@]}" "$each" "$failed" "$took" <<'PY'
import json, sys, glob, statistics
state, devices, each, failed, took = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
results = []
for i in range(devices):
    try:
        results.append(json.loads(open(f"{state}/bench.{i}").read()))
    except Exception:
        pass
answered = sum(r["invokes"] for r in results)
p50 = statistics.median([r["p50_ms"] for r in results]) if results else 0
p99 = max([r["p99_ms"] for r in results], default=0)
print(f"lossy-bench: {answered} of {devices * each} commands answered in {took} s ({failed} devices' runs failed); "
      f"per-device p50 median {p50:.0f} ms, worst p99 {p99:.0f} ms")
PY
"$BIN/matter-sim" fault --control "$STATE/control.sock" all lan-impair "$impair" \
  | python3 -c 'import re, sys
lost_in = lost_out = 0
for line in sys.stdin:
    m = re.search(r"lost (\d+) in, (\d+) out", line)
    if m: lost_in += int(m.group(1)); lost_out += int(m.group(2))
print(f"lossy-bench: datagrams the impaired links lost: {lost_in} received, {lost_out} sent")'
[ "$failed" = 0 ] && [ "$commissioned" = "$count" ]

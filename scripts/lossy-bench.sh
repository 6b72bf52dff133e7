#!/usr/bin/env bash
# lossy-bench.sh: the demo home on a lossy LAN (#17 item 1). On a private fake LAN, every node's
# link loses LOSS % of datagrams each way and holds each 50 ± 20 ms (`matter-sim fault all
# lan-impair`, the node-side netem: this kernel has no sch_netem). homectl on host 'phone' then
# commissions the whole home through it and sends COMMANDS On/Off invokes spread over every
# light and plug (`homectl bench` on each, all at once), and the figures are printed: devices
# commissioned, commands answered, p50/p99 per device, datagrams lost. Loops are bounded.
#
#   scripts/lossy-bench.sh [LOSS] [COMMANDS]       (default 20 %, 1000 commands)
. "$(dirname "$0")/lib/common.sh"
LOSS="${1:-20}"; COMMANDS="${2:-1000}"
build_products matter-sim homectl
home=DeviceProfiles/homes/demo-home.yaml
STATE="$(mktemp -d /tmp/lossy-bench.XXXXXX)"
LAN="flls$$"; LAN="${LAN:0:12}"
SIM_PID=""; WATCH_PID=""
cleanup() {
  pkill -f "homectl watch .*$STATE" 2>/dev/null || true
  [ -z "$SIM_PID" ] || kill -INT "$SIM_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  scripts/fakelan.sh down "$LAN" >/dev/null 2>&1 || true
  [ -n "${KEEP_STATE:-}" ] || rm -rf "$STATE"
}
on_exit cleanup
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
commissioned_count() {
  scripts/fakelan.sh exec "$LAN" phone -- "$BIN/homectl" devices --home "$STATE/phone.sqlite" --json --no-dnssd --timeout 2 2>/dev/null \
    | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))' || echo 0
}
commissioned=$(commissioned_count)
echo "lossy-bench: commissioned $commissioned of $count devices in $took s"
# A commissioning has ~30 messages: at 20 % loss one of them exhausts MRP's five
# transmissions now and then (0.2^5 each), and that device's commissioning fails; with the
# demo home's 28 devices one or two fail on a first attempt and, now and then, one again on a
# second. A person runs the command again: it commissions the rest and leaves the present
# ones be. Up to two more attempts, each reported.
for attempt in 2 3; do
  [ "$commissioned" != "$count" ] || break
  grep -h "failed" "$STATE/commission.out" | sed "s/^/lossy-bench:   attempt $((attempt - 1)): /" | head -5
  scripts/fakelan.sh exec "$LAN" phone -- "$BIN/homectl" commission --home "$home" --database "$STATE/phone.sqlite" \
    --paa-trust-store "$TRUST" --host 10.77.0.2 --timeout 60 >"$STATE/commission.out" 2>"$STATE/commission.err" || true
  first=$commissioned; commissioned=$(commissioned_count)
  echo "lossy-bench: \`homectl commission\` attempt $attempt: $commissioned of $count ($((commissioned - first)) more)"
done

# The devices with On/Off: the commands go to them, as evenly as COMMANDS allows.
mapfile -t targets < <(scripts/fakelan.sh exec "$LAN" phone -- "$BIN/homectl" devices --home "$STATE/phone.sqlite" --json --no-dnssd --timeout 2 2>/dev/null \
  | python3 -c 'import json, sys
for d in json.load(sys.stdin):
    if any(t["trait"] == "OnOff" for dt in d["deviceTypes"] for t in dt["traits"]): print(d["name"])')
each=$(( (COMMANDS + ${#targets[@]} - 1) / ${#targets[@]} ))
# A subscriber through the same lossy links: every change it is told of, with the time it
# arrived (HomeAPI asks for a 20 s MaxInterval).
scripts/fakelan.sh exec "$LAN" phone -- "$BIN/homectl" watch --json --no-dnssd --timeout 30 --home "$STATE/phone.sqlite" \
  2>"$STATE/watch.err" | python3 -u -c 'import sys, time
for line in sys.stdin: print(f"{time.time():.3f} {line.strip()}", flush=True)' >"$STATE/watch.log" &
WATCH_PID=$!
for _ in $(seq 120); do [ "$(wc -l <"$STATE/watch.log")" -ge "${#targets[@]}" ] && break; sleep 0.5; done  # bounded: a minute
echo "lossy-bench: $each On/Off invokes on each of ${#targets[@]} devices at once ($(( each * ${#targets[@]} )) in all)"
t0="$(date +%s.%N)"
pids=()
for i in "${!targets[@]}"; do
  ( rc=0
    scripts/fakelan.sh exec "$LAN" phone -- "$BIN/homectl" bench "${targets[$i]}" --count "$each" --json --no-dnssd --timeout 30 \
      --home "$STATE/phone.sqlite" >"$STATE/bench.$i" 2>"$STATE/bench.$i.err" || rc=$?
    printf '%s %s\n' "$(date +%s.%N)" "${targets[$i]}" >>"$STATE/bench.ends"
    exit "$rc" ) & pids+=($!)
done
failed=0
for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed=$((failed + 1)); done
ended="$(date +%s.%N)"
took="$(awk -v a="$t0" -v b="$ended" 'BEGIN { printf "%.1f", b - a }')"
# Each bench ends with On when it sent an odd number: the subscriber must be told of that
# last state, within the subscription's MaxInterval (20 s) of the end when its subscription
# lived through the loss. A subscription whose report MRP gave up on ends (the publisher drops
# it); the subscriber notices the silence after MaxInterval and subscribes again, which is
# bounded here by a minute.
final=$([ $((each % 2)) = 1 ] && echo on || echo off)
subscription_ok=1
for _ in $(seq 120); do  # bounded: a minute
  python3 - "$STATE/watch.log" "$STATE/bench.ends" "$final" 20 "${targets[@]}" <<'PY' >"$STATE/watch.verdict" && { subscription_ok=0; break; }
import json, sys
log, ends, final, limit, targets = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5:]
# When each device's own bench ended (its last command answered).
ended = {}
for line in open(ends):
    stamp, _, name = line.rstrip("\n").partition(" ")
    ended[name] = float(stamp)
last = {}
for line in open(log):
    stamp, _, text = line.partition(" ")
    try:
        d = json.loads(text)
    except ValueError:
        continue
    last[d["name"]] = (float(stamp), d.get("state", {}).get("onOff"))
seen = {t: max(0.0, last[t][0] - ended.get(t, last[t][0])) for t in targets if t in last and last[t][1] == final}
within = [t for t in seen if seen[t] <= limit]
missing = [t for t in targets if t not in seen]
print(f"lossy-bench: the subscriber saw the last state ({final}) of {len(within)} of {len(targets)} devices within "
      f"MaxInterval ({limit:.0f} s; the slowest {max((seen[t] for t in within), default=0):.1f} s after its last command was answered)"
      + (f"; later, after subscribing again: {', '.join(f'{t} {seen[t]:.1f} s' for t in seen if t not in within)}"
         if len(within) < len(seen) else "")
      + (f"; not seen: {', '.join(missing)}" if missing else ""))
sys.exit(1 if missing else 0)
PY
  sleep 0.5
done
cat "$STATE/watch.verdict"
pkill -f "homectl watch .*$STATE" 2>/dev/null || true
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
[ "$failed" = 0 ] && [ "$commissioned" = "$count" ] && [ "$subscription_ok" = 0 ]

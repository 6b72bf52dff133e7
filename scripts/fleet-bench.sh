#!/usr/bin/env bash
# fleet-bench.sh: a fleet of N Matter nodes on a private fake LAN (scripts/fakelan.sh), split
# over K fleet hosts f1..fK (one `matter-sim home --part k/K` process and one Avahi daemon
# each, FLEET_BENCH_PER_HOST nodes a host) and a controller host "ctl" with its own Avahi,
# and the figures the fleet is judged by (issue #43):
#   (a) nodes started and the time until all listen; time from the start until all N are
#       resolved over DNS-SD (_matterc._udp: SRV, TXT, addresses) on ctl (goal 120 s at 10,000);
#   (b) memory per node: the processes' proportional set sizes summed / N (goal 0.2 MiB), and
#       their VmRSS summed / N. The binary's text and libraries are file pages every process
#       shares (about 43 MiB each in release); RSS counts them once per process, PSS once;
#   (c) commissioning throughput of our controller (`homectl fleet-bench`, several nodes at
#       once; goal 50/s); a bounded, evenly spread sample with FLEET_BENCH_COMMISSION;
#   (d) On/Off Toggle invoke p50/p99 to random commissioned nodes while 10% of them hold
#       subscriptions and all N run;
#   (e) per command: the node's own service time (datagram in → response out, from
#       `kill -USR1`, ServiceTimeReport) and `homectl bench` end to end on the veth (On/Off
#       through HomeAPI, goal p50 0.5 ms), on the last node of the fleet, which fleet-bench
#       leaves to it.
# It ends with the Avahi daemons' packet rates and CPU, and one markdown row of the figures.
#
#   scripts/fleet-bench.sh [N] [PROFILE]
#
# N (1...20000) defaults to 100, PROFILE to DeviceProfiles/devices/dimmable-light.yaml.
# Binaries come from $FLEET_BENCH_BIN (default .build/release, built when missing).
# Environment: FLEET_BENCH_PER_HOST (nodes per fleet host, default 1000),
# FLEET_BENCH_CONCURRENCY (commissionings in flight, default 16), FLEET_BENCH_COMMISSION
# (commission this many, default all but the bench node), FLEET_BENCH_INVOKES (default 1000),
# FLEET_BENCH_BENCH_INVOKES (homectl bench, default 1000), FLEET_BENCH_RESOLVE_TIMEOUT
# (seconds, default 300), FLEET_BENCH_ANNOUNCE_RATE (nodes a second each host's process hands
# its Avahi daemon: `home --announce-rate`), FLEET_BENCH_ONE_LAN=1 (all hosts on one segment, as
# before: every daemon hears every node), FLEET_BENCH_RESOLVE_ONLY=1 (stop after (a) and (b)),
# FLEET_BENCH_KEEP=1 (keep the logs), FLEET_BENCH_MDNS_IPV4=yes (the daemons speak mDNS over
# IPv4 as well as IPv6: each record is then announced, cached and answered twice),
# FLEET_BENCH_RMEM (bytes, default 33554432; 0 leaves it: the host's net.core.rmem_default for
# the run, restored at exit. Avahi sets no receive buffer of its own; with the default 208 KiB
# the controller host's daemon dropped 13,159 datagrams of a 10,000-node fleet's announcements,
# with 4 MiB 8,000-8,800, with 32 MiB none. The setting is not per network namespace).
# Needs root. Every step is bounded; the LAN goes away on exit.
. "$(dirname "$0")/lib/common.sh"
unblock_signals bash "$SCRIPT_PATH" "$@"

COUNT="${1:-100}"
PROFILE="${2:-$ROOT/DeviceProfiles/devices/dimmable-light.yaml}"
BIN="${FLEET_BENCH_BIN:-$ROOT/.build/release}"
PER_HOST="${FLEET_BENCH_PER_HOST:-1000}"
CONCURRENCY="${FLEET_BENCH_CONCURRENCY:-16}"
INVOKES="${FLEET_BENCH_INVOKES:-1000}"
BENCH_INVOKES="${FLEET_BENCH_BENCH_INVOKES:-1000}"
RESOLVE_TIMEOUT="${FLEET_BENCH_RESOLVE_TIMEOUT:-300}"
ANNOUNCE_RATE="${FLEET_BENCH_ANNOUNCE_RATE:-}"
MDNS_IPV4="${FLEET_BENCH_MDNS_IPV4:-no}"
RMEM="${FLEET_BENCH_RMEM:-33554432}"
BASE_PORT=20000

[[ "$COUNT" =~ ^[0-9]+$ ]] && [ "$COUNT" -ge 1 ] && [ "$COUNT" -le 20000 ] || die "N must be 1...20000"
[[ "$PER_HOST" =~ ^[0-9]+$ ]] && [ "$PER_HOST" -ge 1 ] || die "FLEET_BENCH_PER_HOST must be a positive number"
case "$MDNS_IPV4" in yes|no) ;; *) die "FLEET_BENCH_MDNS_IPV4 must be yes or no, not '$MDNS_IPV4'" ;; esac
[[ "$RMEM" =~ ^[0-9]+$ ]] && [ "$RMEM" -le 268435456 ] || die "FLEET_BENCH_RMEM must be a number of bytes up to 268435456"
PARTS=$(( (COUNT + PER_HOST - 1) / PER_HOST ))
[ "$PARTS" -le 200 ] || die "$PARTS fleet hosts: raise FLEET_BENCH_PER_HOST"
# Commissioned by fleet-bench: all but the last node (homectl bench's), or a sample.
COMMISSION=$(( COUNT - 1 ))
if [ -n "${FLEET_BENCH_COMMISSION:-}" ]; then
  [[ "$FLEET_BENCH_COMMISSION" =~ ^[0-9]+$ ]] || die "FLEET_BENCH_COMMISSION must be a number"
  [ "$FLEET_BENCH_COMMISSION" -lt "$COMMISSION" ] && COMMISSION="$FLEET_BENCH_COMMISSION"
fi
need_root
[ -f "$PROFILE" ] || die "no profile $PROFILE"

if [ -z "${FLEET_BENCH_BIN:-}" ]; then
  for product in matter-sim homectl dnssd-probe; do
    if [ ! -x "$BIN/$product" ]; then
      echo "fleet-bench: building $product (release)" >&2
      (cd "$ROOT" && swift build -c release --product "$product" >&2)
    fi
  done
fi
for product in matter-sim homectl dnssd-probe; do [ -x "$BIN/$product" ] || die "no $BIN/$product"; done

LAN="flf$$"; LAN="${LAN:0:12}"
WORK="$(mktemp -d /tmp/fleet-bench.XXXXXX)"
HOSTS=(); for k in $(seq "$PARTS"); do HOSTS+=("f$k"); done
SIMS=()
BROWSER=""
SAMPLER=""
OLD_RMEM=""
stop_sims() {
  local pid
  for pid in "${SIMS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for _ in $(seq 600); do
    local alive=""
    for pid in "${SIMS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=yes; done
    [ -z "$alive" ] && return 0
    sleep 0.1
  done
  return 1
}
cleanup() {
  set +e
  [ -n "$BROWSER" ] && kill "$BROWSER" 2>/dev/null
  [ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null
  if [ "${#SIMS[@]}" -gt 0 ]; then
    stop_sims || for pid in "${SIMS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  fi
  FAKELAN_OWNER=$$ "$FAKELAN" down "$LAN"
  [ -n "$OLD_RMEM" ] && sysctl -qw net.core.rmem_default="$OLD_RMEM"
  if [ -n "${FLEET_BENCH_KEEP:-}" ]; then echo "fleet-bench: logs kept in $WORK" >&2; else rm -rf "$WORK"; fi
}
on_exit cleanup

now_ms() { date +%s%3N; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
pss_kib() { awk '/^Pss:/ {print $2}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
hwm_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
sum_over_sims() { local f="$1" total=0 pid; for pid in "${SIMS[@]}"; do total=$(( total + $("$f" "$pid") )); done; echo "$total"; }
per_node() { awk -v k="$1" -v n="$COUNT" 'BEGIN { printf "%.3f", k / 1024 / n }'; }
host_addr() { echo "10.77.0.$(( $1 + 2 ))"; }   # f1 is the LAN's second host (ctl is first)
# CPU seconds (user + system) of a process.
cpu_s() { awk '{ printf "%.1f", ($14 + $15) / 100 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# CPU clock ticks (user + system) of a process, for sum_over_sims.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
avahi_pid() { ip netns pids "$LAN-$1" 2>/dev/null | while read -r p; do [ "$(cat /proc/$p/comm 2>/dev/null)" = avahi-daemon ] && echo "$p"; done | head -n 1; }

# The daemons are sized for the fleet: the browsing client on ctl holds three objects per
# node (a resolver, an A and an AAAA lookup) and its daemon caches ten records per node.
export FAKELAN_OWNER=$$
# Matter discovers over IPv6 (Core §4.3); the nodes publish AAAA records only.
export FAKELAN_AVAHI_IPV4="$MDNS_IPV4"
# Before the daemons open their sockets (a socket takes the default when it is made).
current_rmem="$(sysctl -n net.core.rmem_default)"
if [ "$RMEM" -gt "$current_rmem" ]; then
  OLD_RMEM="$current_rmem"
  sysctl -qw net.core.rmem_default="$RMEM"
  echo "fleet-bench: net.core.rmem_default $current_rmem → $RMEM bytes for the run (restored at exit)"
fi
export FAKELAN_AVAHI_OBJECTS_MAX=$(( COUNT * 3 + 1024 > 8192 ? COUNT * 3 + 1024 : 8192 ))
export FAKELAN_AVAHI_CACHE_MAX=$(( COUNT * 12 > 65536 ? COUNT * 12 : 65536 ))
"$FAKELAN" up "$LAN" ctl "${HOSTS[@]}"
# Each fleet host on a segment of its own, which ctl joins with an interface of its own: on one
# LAN every fleet daemon also cached, and walked, every other host's records.
[ -n "${FLEET_BENCH_ONE_LAN:-}" ] || "$FAKELAN" segment "$LAN" ctl "${HOSTS[@]}"
"$FAKELAN" avahi "$LAN" ctl "${HOSTS[@]}"

# Attestation: the published test PAA and the CD signer matter-sim signs with (test only).
mkdir -p "$WORK/trust"
cp "$ROOT/DeviceProfiles/credentials/paa/Chip-Test-PAA-NoVID-Cert.pem" "$WORK/trust/paa.pem"
cp "$ROOT/DeviceProfiles/credentials/Chip-Test-CD-Signing-Cert.pem" "$WORK/trust/cd-signer.pem"

"$BIN/matter-sim" fleet "$PROFILE" --count "$COUNT" --output "$WORK/fleet.yaml"

# The browser first, so that it sees every announcement.
"$FAKELAN" exec "$LAN" ctl -- "$BIN/dnssd-probe" browse --type _matterc._udp --until-count "$COUNT" --timeout "$RESOLVE_TIMEOUT" \
  >"$WORK/browse.jsonl" 2>"$WORK/browse.log" &
BROWSER=$!
for _ in $(seq 100); do grep -q '"event":"browsing"' "$WORK/browse.jsonl" 2>/dev/null && break; sleep 0.1; done

# Packets each fleet host's daemon sends a second (for Avahi's rate limit), while resolving.
( while :; do
    for h in "${HOSTS[@]}" ctl; do
      echo "$(now_ms) $h $(ip -n "$LAN-$h" -s link show 2>/dev/null | awk '/^[0-9]+: eth/ { e = 1 } /^[0-9]+: lo/ { e = 0 } e && /TX:/ { getline; n += $2 } END { print n + 0 }')"
    done
    sleep 1
  done ) >"$WORK/tx.log" 2>/dev/null &
SAMPLER=$!

STARTED="$(now_ms)"
for k in $(seq "$PARTS"); do
  "$FAKELAN" exec "$LAN" "f$k" -- "$BIN/matter-sim" home "$WORK/fleet.yaml" --part "$k/$PARTS" --base-port "$BASE_PORT" \
    ${ANNOUNCE_RATE:+--announce-rate "$ANNOUNCE_RATE"} --state-root "$WORK/state$k" --log-level warning >"$WORK/home$k.out" 2>"$WORK/home$k.log" &
  SIMS+=($!)
done

# All listening: each process's table follows its last node's start.
LISTENING=""
for _ in $(seq 3000); do
  ready=0
  for k in $(seq "$PARTS"); do grep -q "devices running" "$WORK/home$k.out" 2>/dev/null && ready=$((ready + 1)); done
  if [ "$ready" = "$PARTS" ]; then LISTENING="$(now_ms)"; break; fi
  for k in $(seq "$PARTS"); do
    kill -0 "${SIMS[$((k - 1))]}" 2>/dev/null || { tail -n 20 "$WORK/home$k.log" >&2; die "matter-sim home --part $k/$PARTS exited"; }
  done
  sleep 0.1
done
[ -n "$LISTENING" ] || die "the fleet did not start within 300 s"
started_nodes=0
for k in $(seq "$PARTS"); do
  started_nodes=$(( started_nodes + $(sed -n 's/.*: \([0-9]*\) devices running.*/\1/p' "$WORK/home$k.out" | head -n 1) ))
done

rc=0
wait "$BROWSER" || rc=$?
BROWSER=""
RESOLVED_AT="$(now_ms)"
kill "$SAMPLER" 2>/dev/null; SAMPLER=""
complete="$(sed -n 's/.*"event":"complete".*"t":\([0-9]*\).*/\1/p' "$WORK/browse.jsonl" | head -n 1)"
resolved="$(grep -c '"event":"added"' "$WORK/browse.jsonl" || true)"
RSS_IDLE="$(sum_over_sims rss_kib)"
PSS_IDLE="$(sum_over_sims pss_kib)"

echo "fleet-bench: N = $COUNT nodes of $(basename "$PROFILE") in $PARTS matter-sim home process(es) of at most $PER_HOST nodes, one fleet host and Avahi daemon each${ANNOUNCE_RATE:+, announcing $ANNOUNCE_RATE nodes/s each}"
echo "fleet-bench: (a) $started_nodes nodes started, all listening $((LISTENING - STARTED)) ms after the processes started"
RESOLVE_S="-"
if [ "$rc" = 0 ] && [ -n "$complete" ]; then
  RESOLVE_S="$(awk -v ms="$((complete - STARTED))" 'BEGIN { printf "%.1f", ms / 1000 }')"
  echo "fleet-bench: (a) all $COUNT resolved over DNS-SD from another namespace after $((complete - STARTED)) ms (goal 120000 ms at N = 10000)"
else
  RESOLVE_S="not all ($resolved of $COUNT in ${RESOLVE_TIMEOUT} s)"
  echo "fleet-bench: (a) FAILED: $resolved of $COUNT resolved within $RESOLVE_TIMEOUT s (browser exit $rc)"
  tail -n 5 "$WORK/browse.log" >&2
  # (head closing the pipe early is no failure of the run)
  grep -h -i "avahi\|advertis" "$WORK"/home*.log 2>/dev/null | sort | uniq -c | sort -rn | head -n 5 >&2 || true
fi
# How resolving went: when the 1,000th node and each tenth of the fleet was resolved.
milestones="$(grep '"event":"added"' "$WORK/browse.jsonl" | sed -n 's/.*"t":\([0-9]*\).*/\1/p' |
  awk -v s="$STARTED" -v n="$COUNT" 'BEGIN { for (p = 1; p <= 10; p++) want[int(n * p / 10)] = 1; want[1000] = 1 }
    (NR in want) { printf "%s%d at %.1f s", sep, NR, ($1 - s) / 1000; sep = ", " }')"
echo "fleet-bench: (a) resolved: ${milestones:-none} (from the processes' start)"
echo "fleet-bench: (b) once advertised: PSS $((PSS_IDLE / 1024)) MiB = $(per_node "$PSS_IDLE") MiB per node (goal 0.2 MiB);" \
  "RSS summed $((RSS_IDLE / 1024)) MiB = $(per_node "$RSS_IDLE") MiB per node (shared pages once a process)"
# Avahi: the most packets a daemon sent in one second (fakelan's ratelimit-burst is 10000 a
# second) and each daemon's CPU so far.
awk '{ if (last[$2] != "" && $1 > t[$2]) { r = ($3 - last[$2]) * 1000 / ($1 - t[$2]); if (r > max[$2]) max[$2] = r }
       last[$2] = $3; t[$2] = $1 }
     END { for (h in max) printf "%s %.0f\n", h, max[h] }' "$WORK/tx.log" | sort >"$WORK/tx-max.txt"
# Datagrams a host's kernel dropped for a full socket receive buffer (mostly the daemon's).
rcvbuf_drops() {
  ip netns exec "$LAN-$1" cat /proc/net/snmp /proc/net/snmp6 2>/dev/null |
    awk '$1 == "Udp:" && $2 ~ /^[0-9]+$/ { n += $6 } $1 == "Udp6RcvbufErrors" { n += $2 } END { print n + 0 }'
}
avahi_line=""
for h in ctl "${HOSTS[@]}"; do
  avahi_line+=" $h: $(awk -v h="$h" '$1 == h { print $2 }' "$WORK/tx-max.txt") pkt/s peak, $(cpu_s "$(avahi_pid "$h")") s CPU, $(rcvbuf_drops "$h") dropped;"
done
echo "fleet-bench: (a) Avahi daemons while resolving (mDNS over IPv6$([ "$MDNS_IPV4" = yes ] && echo " and IPv4"), ratelimit-burst 10000 a second; dropped: datagrams lost to a full receive buffer):${avahi_line%;}"

# FLEET_BENCH_RESOLVE_ONLY=1: the start, resolving and memory only (to compare layouts).
if [ -n "${FLEET_BENCH_RESOLVE_ONLY:-}" ]; then
  echo "fleet-bench: | $COUNT | $PARTS | $(awk -v ms="$((LISTENING - STARTED))" 'BEGIN { printf "%.1f", ms / 1000 }') | $RESOLVE_S | $(per_node "$PSS_IDLE") ($(per_node "$RSS_IDLE")) |"
  exit 0
fi

# --- (e) per command, on the last node -------------------------------------------------
LAST_HOST="f$PARTS"
LAST_ADDR="$(host_addr "$PARTS")"
LAST_PORT=$(( BASE_PORT + COUNT - 1 ))
SIM_LAST="${SIMS[$((PARTS - 1))]}"
last_name="Node $COUNT"   # `matter-sim fleet` pads numbers to the width of N
MANUAL="$(awk -v n="$last_name" 'index($0, n "  ") == 1 { print $NF }' "$WORK/home$PARTS.out" | head -n 1)"
[ -n "$MANUAL" ] || die "no manual code for $last_name in the table of part $PARTS"

# USR1 to the processes, and each one's next service-times line (bounded 30 s).
mark_all() {
  local k before
  for k in $(seq "$PARTS"); do
    before="$(grep -c '^service-times ' "$WORK/home$k.out" || true)"
    kill -USR1 "${SIMS[$((k - 1))]}"
    for _ in $(seq 300); do [ "$(grep -c '^service-times ' "$WORK/home$k.out" || true)" -gt "$before" ] && break; sleep 0.1; done
  done
}
# The invoke figures since the last mark of part(s) $@: "count p50 p99" (µs), the worst part's.
since_mark() {
  local k
  for k in "$@"; do grep '^service-times ' "$WORK/home$k.out" | tail -n 1 | sed 's/^service-times //'; done | python3 -c '
import json, sys
rows = [json.loads(l).get("sinceMark", {}).get("invoke") for l in sys.stdin if l.strip()]
rows = [r for r in rows if r]
if not rows: print("0 - -"); sys.exit()
print(sum(r["count"] for r in rows), max(r["p50Us"] for r in rows), max(r["p99Us"] for r in rows))'
}

B=(--home "$WORK/bench.sqlite" --no-dnssd --timeout 20)
ok=""
for _ in $(seq 10); do
  if "$FAKELAN" exec "$LAN" ctl -- "$BIN/homectl" commission --code "$MANUAL" --address "$LAST_ADDR:$LAST_PORT" --name Bench \
      --paa-trust-store "$WORK/trust" "${B[@]}" >"$WORK/commission.log" 2>&1; then ok=yes; break; fi
  sleep 1
done
BENCH="-"; SERVICE="-"
if [ -n "$ok" ]; then
  mark_all
  TICKS_BEFORE="$(sum_over_sims cpu_ticks)"
  if OURS="$(timeout 600 "$FAKELAN" exec "$LAN" ctl -- "$BIN/homectl" bench Bench --count "$BENCH_INVOKES" --json "${B[@]}" 2>"$WORK/bench1.log")"; then
    TICKS_AFTER="$(sum_over_sims cpu_ticks)"
    mark_all
    read -r n p50 p99 <<<"$(since_mark "$PARTS")"
    read -r b50 b99 <<<"$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(r["p50_ms"], r["p99_ms"])' "$OURS")"
    BENCH="$b50 / $b99 ms"; SERVICE="$p50 / $p99 µs"
    echo "fleet-bench: (e) homectl bench, $BENCH_INVOKES On/Off invokes through HomeAPI on the veth to $last_name with all $COUNT running: p50 $b50 ms, p99 $b99 ms (goal p50 0.5 ms)"
    echo "fleet-bench: (e) that node's own service time of those invokes (datagram in → response out, $n served): p50 $p50 µs, p99 $p99 µs (goal p50 100 µs; quarter-octave buckets, at most 25 % high)"
    # All the home processes' CPU, whatever else they did meanwhile (timers, the other nodes).
    awk -v t="$(( TICKS_AFTER - TICKS_BEFORE ))" -v hz="$(getconf CLK_TCK)" -v n="$BENCH_INVOKES" -v p="$PARTS" \
      'BEGIN { printf "fleet-bench: (e) CPU (user + system) of the %d home process(es) during those invokes: %.0f µs an invoke\n", p, t * 1e6 / hz / n }'
  else
    echo "fleet-bench: (e) homectl bench failed"; tail -n 5 "$WORK/bench1.log" >&2; rc=1
  fi
else
  echo "fleet-bench: (e) commissioning $last_name for homectl bench failed"; tail -n 10 "$WORK/commission.log" >&2; rc=1
fi

# --- (c, d) commissioning throughput and invokes to random nodes -----------------------
COMM="-"; INV="-"; FLEET_SERVICE="-"
bench_rc=0
if [ "$COMMISSION" -ge 1 ]; then
  addresses="$(for k in $(seq "$PARTS"); do printf '%s,' "$(host_addr "$k")"; done)"
  # The mark just before the invokes, from the controller's namespace (same PID namespace).
  { declare -p WORK PARTS SIMS; declare -f mark_all; echo mark_all; } >"$WORK/mark.sh"
  [ "$COMMISSION" -lt $(( COUNT - 1 )) ] && echo "fleet-bench: (c) commissioning a sample of $COMMISSION of the $COUNT nodes, spread evenly over the fleet"
  timeout 1800 "$FAKELAN" exec "$LAN" ctl -- "$BIN/homectl" fleet-bench --home "$WORK/fleet.yaml" \
    --database "$WORK/home.sqlite" --host "${addresses%,}" --base-port "$BASE_PORT" --paa-trust-store "$WORK/trust" \
    --concurrency "$CONCURRENCY" --commission-count "$COMMISSION" --invokes "$INVOKES" --subscribers-percent 10 --timeout 20 \
    --before-invokes "bash $WORK/mark.sh" --json >"$WORK/fleet.json" 2>"$WORK/fleet.log" || bench_rc=$?
  mark_all
  if [ -s "$WORK/fleet.json" ]; then
    read -r cn cs cps c50 c99 inv ifail i50 i99 subs <<<"$(python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))
print(f["commissioned"], f["commissioningSeconds"], f["commissioningsPerSecond"], f["commissioningP50ms"], f["commissioningP99ms"],
      f["invokes"], f["invokeFailures"], f["invokeP50ms"], f["invokeP99ms"], "%d/%d" % (f["subscriptionsEstablished"], f["subscriptions"]))' "$WORK/fleet.json")"
    read -r sn s50 s99 <<<"$(since_mark $(seq "$PARTS"))"
    COMM="$cps/s ($cn in $cs s)"; INV="$i50 / $i99 ms"; FLEET_SERVICE="$s50 / $s99 µs"
    echo "fleet-bench: (c) commissioned $cn of $COMMISSION in $cs s: $cps commissionings/s, $CONCURRENCY at once (each p50 $c50 ms, p99 $c99 ms; goal 50/s)"
    echo "fleet-bench: (d) $inv Toggle invokes to random nodes ($ifail failed) with $subs subscriptions and all $COUNT running: p50 $i50 ms, p99 $i99 ms"
    echo "fleet-bench: (e) the nodes' own service time of those invokes ($sn served): p50 $s50 µs, p99 $s99 µs (the slowest part's)"
  fi
  [ "$bench_rc" = 0 ] || { echo "fleet-bench: homectl fleet-bench exit $bench_rc" >&2; tail -n 15 "$WORK/fleet.log" >&2; }
else
  echo "fleet-bench: (c, d) skipped: the one node is homectl bench's"
fi
RSS_AFTER="$(sum_over_sims rss_kib)"
PSS_AFTER="$(sum_over_sims pss_kib)"
HWM="$(sum_over_sims hwm_kib)"
echo "fleet-bench: (b) after commissioning: PSS $((PSS_AFTER / 1024)) MiB = $(per_node "$PSS_AFTER") MiB per node (goal 0.2 MiB);" \
  "RSS summed $((RSS_AFTER / 1024)) MiB = $(per_node "$RSS_AFTER") MiB per node (peaks summed: $(per_node "$HWM") MiB per node)"

STOP="$(now_ms)"
if stop_sims; then
  for pid in "${SIMS[@]}"; do wait "$pid" 2>/dev/null || true; done
  echo "fleet-bench: SIGTERM to stopped (every record withdrawn) in $(( $(now_ms) - STOP )) ms"
else
  echo "fleet-bench: the fleet did not stop within 60 s of SIGTERM"
  rc=1
fi
SIMS=()
echo "fleet-bench: | N | hosts | listening s | resolved s | PSS (RSS) MiB/node | commissionings | invoke p50/p99 | homectl bench p50/p99 | service time (bench) p50/p99 | service time (fleet invokes) p50/p99 |"
echo "fleet-bench: | $COUNT | $PARTS | $(awk -v ms="$((LISTENING - STARTED))" 'BEGIN { printf "%.1f", ms / 1000 }') | $RESOLVE_S | $(per_node "$PSS_AFTER") ($(per_node "$RSS_AFTER")) | $COMM | $INV | $BENCH | $SERVICE | $FLEET_SERVICE |"
[ "$rc" = 0 ] && [ "$bench_rc" = 0 ]

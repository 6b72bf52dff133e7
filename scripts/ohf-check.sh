#!/usr/bin/env bash
# ohf-check.sh: Home Assistant's Matter server (the Open Home Foundation Matter Server, PyPI
# python-matter-server) commissions and drives simulated devices, on a private fake LAN
# (scripts/fakelan.sh) that nothing leaves:
#
#     [d1] Avahi + device ─┐
#     [d2] Avahi + device ─┼── bridge ──┬── [srv] matter-server + scripts/ohf/ohf_check.py
#       …                  ┘            └── [ref] second admin (scripts/ohf/second_admin.py)
#
# Each device profile runs on a host of its own; a home runs on one host, all nodes in one
# process or one process each. The server has its own storage and the published test PAA as
# its trust store; its certificate downloads fail at once (the LAN has no route out), and its
# mDNS and the second admin's stay on the LAN. ohf_check.py prints a PASS/FAIL line per step and
# ends "ohf: N passed, M failed". Needs root.
#
#   scripts/ohf-check.sh [--keep DIR] PROFILE...             device profiles (names or paths)
#   scripts/ohf-check.sh [--keep DIR] --home FILE [--process-per-device] [--power-cut]
#
# --power-cut: commission and interview every node, cut the power on all at once, and report
# restart -> available per node against OHF_POWER_ON_BOUND (default here 10 s); no cluster steps
# and no second admin.
#
# Default: every shipped device profile (DeviceProfiles/devices/*.yaml), in runs of 6 (up to 10
# when that keeps the runs to OHF_PARALLEL).
#   OHF_REPORT   where the JSON report goes (default .build/ohf/<run>.json)
#   OHF_PARALLEL how many runs of profiles go at once, each on its own fake LAN (default 1)
#   OHF_DUMP_DIR write each node's JSON as the server interviewed it there (SERIAL.json)
#   OHF_INTERVIEW_ONLY  set: commission and interview only (scripts/clone-roundtrip.sh)
#   OHF_CLONE_ROUNDTRIP set: at the end, each node's dump is cloned (`matter-sim clone`), the clone
#                runs in the node's place and the server's dump of it must equal the first (#41)
#   OHF_POWER_ON_BOUND  seconds within which every node must be available again after the power
#                cut (default: not checked; with --power-cut 10; the test command checks both
#                modes of the demo home, one process and one process per device)
#   OHF_CAPTURE  set: the LAN's mDNS traffic (tcpdump on its bridge) goes to mdns.pcap beside
#                the server's log, kept with --keep (scripts/apt-install.sh tcpdump);
#                scripts/ohf/mdns_srv_packets.py lists the SRV records of each response in it
#   OHF_SDK_LOG  the server's SDK log level (--log-level-sdk: error, progress, detail)
. "$(dirname "$0")/lib/common.sh"
HOME_FILE=""; PER_DEVICE=""; KEEP=""; POWER_CUT=""; PROFILES=()
die() { echo "ohf: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --home) [ -f "${2:-}" ] || die "--home ${2:-}: no such file"; HOME_FILE="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
    --process-per-device) PER_DEVICE=yes; shift ;;
    --power-cut) POWER_CUT=yes; OHF_POWER_ON_BOUND="${OHF_POWER_ON_BOUND:-10}"; shift ;;
    --keep) KEEP="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^\. .*common\.sh/p' "$0" | sed '$d'; exit 0 ;;
    -*) die "unknown option $1 (--help lists them)" ;;
    *) if [ -f "$1" ]; then PROFILES+=("$(cd "$(dirname "$1")" && pwd)/$(basename "$1")")
       elif [ -f "$ROOT/DeviceProfiles/devices/$1.yaml" ]; then PROFILES+=("$ROOT/DeviceProfiles/devices/$1.yaml")
       else die "$1: neither a file nor a profile in DeviceProfiles/devices/"; fi
       shift ;;
  esac
done
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
if [ -z "$HOME_FILE" ]; then
  [ "${#PROFILES[@]}" -gt 0 ] || PROFILES=("$ROOT"/DeviceProfiles/devices/*.yaml)
  # One host per profile and at most 10 a run: more profiles (every shipped one by default) go
  # in runs of 6 to 10, each with its own report (profiles-1.json, …) unless OHF_REPORT names one.
  if [ "${#PROFILES[@]}" -gt 10 ]; then
    # OHF_PARALLEL batches at once (default 1), each on its own fake LAN with its own server:
    # the server mostly waits on the devices, so batches side by side take little longer than one.
    status=0; batch=0; pids=()
    mkdir -p "$ROOT/.build/ohf"
    "$ROOT/scripts/lib/venvs.sh" ohf >/dev/null
    # Batches of 6, larger (up to 10) when that keeps them to OHF_PARALLEL: a batch that waits
    # for a free slot costs a whole batch's time, a seventh profile in a running one far less.
    parallel="${OHF_PARALLEL:-1}"; size=$(( (${#PROFILES[@]} + parallel - 1) / parallel ))
    [ "$size" -ge 6 ] || size=6; [ "$size" -le 10 ] || size=10
    for ((i = 0; i < ${#PROFILES[@]}; i += size)); do
      batch=$((batch + 1))
      OHF_REPORT="${OHF_REPORT:-$ROOT/.build/ohf/profiles-$batch.json}" "$0" ${KEEP:+--keep "$KEEP/$batch"} "${PROFILES[@]:i:size}" \
        >"$ROOT/.build/ohf/profiles-$batch.log" 2>&1 &
      pids+=($!)
      if [ "${#pids[@]}" -ge "${OHF_PARALLEL:-1}" ]; then
        wait "${pids[0]}" || status=1
        pids=("${pids[@]:1}")
      fi
    done
    for pid in "${pids[@]}"; do wait "$pid" || status=1; done
    for ((b = 1; b <= batch; b++)); do
      echo "ohf: ---- batch $b of $batch"; cat "$ROOT/.build/ohf/profiles-$b.log"
    done
    exit "$status"
  fi
fi
[ -z "$HOME_FILE" ] || [ "${#PROFILES[@]}" = 0 ] || die "give profiles or --home, not both"
# At most 10: the server's SDK keeps 10 discovered commissionable nodes (ohf_check.py's
# DISCOVERED_NODES_MAX), so a run's profiles, all advertising at once, still fit in its table.
[ "${#PROFILES[@]}" -le 10 ] || die "at most 10 profiles per run (one host each)"

VENV="$("$ROOT/scripts/lib/venvs.sh" ohf)"
build_products matter-sim
SIM="$ROOT/.build/debug/matter-sim"
if [ -n "$HOME_FILE" ]; then RUN="home-$(basename "$HOME_FILE" .yaml)${PER_DEVICE:+-per-device}"
else RUN="profiles"; fi
RUN="$RUN${POWER_CUT:+-power-cut}"
mkdir -p "$ROOT/.build/ohf"
REPORT="${OHF_REPORT:-$ROOT/.build/ohf/$RUN.json}"
WORK="$(mktemp -d /var/tmp/matter-ohf.XXXXXX)"
LAN="flo$$"; LAN="${LAN:0:12}"
export FAKELAN_OWNER=$$
STARTED=$SECONDS

cleanup() {
  set +e
  for dir in "$WORK"/dev*; do [ -d "$dir" ] && touch "$dir/stop"; done
  "$FAKELAN" down "$LAN" >/dev/null 2>&1
  if [ -n "$KEEP" ]; then mkdir -p "$KEEP" && cp -r "$WORK"/. "$KEEP"/; fi
  rm -rf "$WORK"
}
on_exit cleanup

# What each node should show a controller, and the device hosts.
HOSTS=(); DEVICE_DIRS=()
if [ -n "$HOME_FILE" ]; then
  "$SIM" describe --json "$HOME_FILE" >"$WORK/devices.json"
  HOSTS=(d1)
else
  python3 - "$WORK/devices.json" "${PROFILES[@]}" <<'PY'
import json, subprocess, sys
out = sys.argv[1]
devices = []
for profile in sys.argv[2:]:
    described = subprocess.run([".build/debug/matter-sim", "describe", "--json", profile], check=True,
                               capture_output=True, text=True).stdout
    devices += json.loads(described)["devices"]
json.dump({"devices": devices}, open(out, "w"), indent=1)
PY
  for i in "${!PROFILES[@]}"; do HOSTS+=("d$((i + 1))"); done
fi
"$FAKELAN" up "$LAN" "${HOSTS[@]}" srv ref >/dev/null
# mDNS over IPv6 only on the device hosts, as on a Matter network: with IPv4 too, Avahi answers
# an AAAA query without the A record, and the server's SDK keeps a node found both ways twice
# in its table of commissionable nodes (10 entries), which a few devices then fill.
FAKELAN_AVAHI_IPV4=no "$FAKELAN" avahi "$LAN" "${HOSTS[@]}"
if [ -n "${OHF_CAPTURE:-}" ]; then
  "$ROOT/scripts/apt-install.sh" tcpdump
  # On the bridge: every host's mDNS, multicast and unicast. Ends with the LAN (`down`).
  ip netns exec "$LAN-br" tcpdump -i br0 -U -s 0 -w "$WORK/mdns.pcap" udp port 5353 >"$WORK/tcpdump.log" 2>&1 &
fi

# The devices, each host's under device-supervisor.sh (power cut and restart with its state).
start_device() {
  local host="$1"; shift
  local dir="$WORK/dev-$host"
  mkdir -p "$dir"
  (cd "$dir" && INTEROP_DEVICE_DIR="$dir" exec "$FAKELAN" exec "$LAN" "$host" -- \
     "$ROOT/scripts/ohf/device-supervisor.sh" "$dir" -- "$@") </dev/null >"$dir/device.log" 2>&1 &
  DEVICE_DIRS+=("$dir")
}
if [ -n "$HOME_FILE" ]; then
  start_device d1 "$SIM" home "$HOME_FILE" ${PER_DEVICE:+--process-per-device}
else
  # Each host runs its run.sh, which the clone round trip rewrites to run the node's clone.
  for i in "${!PROFILES[@]}"; do
    mkdir -p "$WORK/dev-${HOSTS[$i]}"
    printf 'exec "%s" run "%s"\n' "$SIM" "${PROFILES[$i]}" >"$WORK/dev-${HOSTS[$i]}/run.sh"
    start_device "${HOSTS[$i]}" bash "$WORK/dev-${HOSTS[$i]}/run.sh"
  done
fi

# Wait until every device's commissionable record is on its host's Avahi daemon.
python3 - "$WORK/devices.json" >"$WORK/expected" <<'PY'
import json, sys
for d in json.load(open(sys.argv[1]))["devices"]:
    print(d["discriminator"])
PY
# Seen discriminators add up over the rounds: one avahi-browse that runs out of time while it
# resolves a dozen services still counts what it got (the CI machine once saw only 4 of 13).
deadline=$((SECONDS + 90))
: >"$WORK/seen"
for host in "${HOSTS[@]}"; do
  while :; do
    "$FAKELAN" exec "$LAN" "$host" -- timeout 10 avahi-browse -prt _matterc._udp 2>/dev/null \
      | grep '^=' | grep -o '"D=[0-9]*"' | tr -dc '0-9\n' >>"$WORK/seen" || true
    missing=0
    if [ -n "$HOME_FILE" ]; then
      while read -r d; do grep -qx "$d" "$WORK/seen" || missing=$((missing + 1)); done <"$WORK/expected"
    else
      d="$(sed -n "$(( ${host#d} ))p" "$WORK/expected")"
      grep -qx "$d" "$WORK/seen" || missing=1
    fi
    [ "$missing" = 0 ] && break
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "ohf: $missing device(s) on $host not advertised within 90 s; browsed without resolving:" >&2
      "$FAKELAN" exec "$LAN" "$host" -- timeout 10 avahi-browse -pt _matterc._udp >&2 || true
      echo "device log:" >&2
      tail -n 30 "$WORK/dev-$host/device.log" >&2
      exit 1
    fi
    sleep 0.5
  done
done
echo "ohf: $(grep -c . "$WORK/expected") node(s) advertised after $((SECONDS - STARTED)) s"

# The test PAA as the server's and the second admin's trust store (DER, as the SDK reads it).
mkdir -p "$WORK/paa" "$WORK/server" "$WORK/ref"
for cert in "$ROOT"/DeviceProfiles/credentials/paa/*; do
  case "$cert" in
    *.der) cp "$cert" "$WORK/paa/" ;;
    *.pem|*.crt) grep -q "BEGIN CERTIFICATE" "$cert" && openssl x509 -in "$cert" -outform der -out "$WORK/paa/$(basename "${cert%.*}").der" ;;
  esac
done

# The server empties a certificate directory without a ".version" stamp, and skips its downloads
# for a day after the stamp's time: a fresh stamp keeps our PAA and keeps it offline.
echo 1 >"$WORK/paa/.version"

# A private /data on a host: the native Matter stack keeps its config files there.
on_host() {
  local host="$1"; shift
  "$FAKELAN" exec "$LAN" "$host" -- unshare -m --propagation private bash -c \
    'mkdir -p /data && mount -t tmpfs tmpfs /data && exec "$@"' on-host "$@"
}
on_host srv "$VENV/bin/matter-server" --storage-path "$WORK/server" --paa-root-cert-dir "$WORK/paa" \
  --log-file "$WORK/server.log" --log-level info --port 5580 --listen-address 127.0.0.1 \
  --primary-interface eth0 ${OHF_SDK_LOG:+--log-level-sdk "$OHF_SDK_LOG"} >"$WORK/server.out" 2>&1 &

# The second admin runs on its own host, also with a private /data.
cat >"$WORK/second-admin.sh" <<EOF
#!/usr/bin/env bash
exec "$FAKELAN" exec "$LAN" ref -- unshare -m --propagation private bash -c \\
  'mkdir -p /data && mount -t tmpfs tmpfs /data && exec "\$@"' second-admin \\
  "$VENV/bin/python" "$ROOT/scripts/ohf/second_admin.py" "\$@"
EOF
chmod +x "$WORK/second-admin.sh"
SECOND_ADMIN="[\"$WORK/second-admin.sh\"]"
device_args=()
for dir in "${DEVICE_DIRS[@]}"; do device_args+=(--device-dir "$dir"); done
set +e
"$FAKELAN" exec "$LAN" srv -- timeout 1500 "$VENV/bin/python" "$ROOT/scripts/ohf/ohf_check.py" \
  --devices "$WORK/devices.json" "${device_args[@]}" --paa "$WORK/paa" --server-log "$WORK/server.log" \
  --second-admin "$SECOND_ADMIN" --second-admin-workdir "$WORK/ref" --report "$REPORT" \
  ${OHF_POWER_ON_BOUND:+--power-on-bound "$OHF_POWER_ON_BOUND"} \
  ${OHF_DUMP_DIR:+--dump-dir "$OHF_DUMP_DIR"} ${OHF_INTERVIEW_ONLY:+--interview-only} ${POWER_CUT:+--power-cut-only} \
  ${OHF_CLONE_ROUNDTRIP:+--clone-roundtrip "$SIM"}
RC=$?
set -e
if [ "$RC" != 0 ]; then
  echo "ohf: FAILED (checker exit $RC); server log tail:" >&2
  tail -n 40 "$WORK/server.log" >&2 2>/dev/null || tail -n 40 "$WORK/server.out" >&2
fi
echo "ohf: $RUN done in $((SECONDS - STARTED)) s (report: $REPORT)"
exit "$RC"

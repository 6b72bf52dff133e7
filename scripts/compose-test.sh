#!/usr/bin/env bash
# compose-test.sh: docker-compose.yml for real. Builds the image, brings the compose home up
# (relay, light, plug, blind, controller), and from the controller container discovers and
# commissions every device (attestation against the published test PAA), drives each cluster,
# injects faults through the compose relay (a device's LAN pulled with `matter-sim fault`, then
# the relay container stopped) and checks the connectivity and locality `homectl devices --json`
# reports; checks the secrets the relay made at its first start (root-only files, none in the
# compose file, no home token or token on a command line in a device, a device credential
# refused as a controller and for registrations); then `docker-compose down -v`, also after a
# failure. Needs root.
#
#   scripts/compose-test.sh [--full] [--fleet REPLICAS SIZE] [--cloud] [--stack REPLICAS SIZE]
#
# --fleet: also `docker-compose --profile fleet up --scale fleet=REPLICAS` with FLEET_SIZE=SIZE;
# each replica reports its nodes to the relay (matter-sim report-onboarding) and the controller
# commissions every device of every replica from those reports (homectl commission --fleet).
# --cloud: then the home again with the `cloud` profile (PostgreSQL, two relay instances,
# HAProxy): every device online through the balancer, the Lamp driven through it while the
# relay instance holding it is killed (`docker kill`): the time until every device is online
# again and until the next command succeeds, and every registration still there.
# --stack: then `docker swarm init` (on loopback; left again at the end unless the engine was in
# a swarm already) and `docker stack deploy` of deploy/fleet-stack.yml: REPLICAS replicas of SIZE
# nodes report through the stack's relay and its controller commissions them all.
#
# Without --full the image comes from the Dockerfile's `prebuilt` target: the binaries this
# machine built (.build/debug, brought up to date with `swift build`) with the Swift runtime
# libraries they link. --full builds the default target, compiling the package inside the
# build image (about 15 minutes on 2 cores).
#
# The engine: a running one is used as it is; otherwise dockerd is started with
# --iptables=false --ip-forward=false --ip-masq=false, so that it changes nothing on the host
# and forwards nothing, and stopped again at the end. No registry is needed: a base image that
# cannot be pulled is made from Debian packages (debootstrap + docker import) under the name the
# Dockerfile uses. Every container's mDNS stays on the compose network's bridge; nothing is sent
# on the machine's real interfaces (no host networking).
#
# Ends with the times to bring the home up, to commission, and to tear down, and
# "compose: N passed, N failed".
. "$(dirname "$0")/lib/common.sh"
FULL=""
FLEET_REPLICAS=0; FLEET_SIZE=0; CLOUD=""; STACK_REPLICAS=0; STACK_SIZE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --full) FULL=yes; shift ;;
    --fleet)
      [[ "${2:-}" =~ ^[1-9][0-9]{0,1}$ && "${3:-}" =~ ^[1-9][0-9]{0,3}$ ]] \
        || { echo "compose-test: --fleet REPLICAS SIZE: expected 1...99 replicas of 1...9999 devices" >&2; exit 2; }
      FLEET_REPLICAS="$2"; FLEET_SIZE="$3"; shift 3 ;;
    --cloud) CLOUD=yes; shift ;;
    --stack)
      [[ "${2:-}" =~ ^[1-9][0-9]{0,1}$ && "${3:-}" =~ ^[1-9][0-9]{0,3}$ ]] \
        || { echo "compose-test: --stack REPLICAS SIZE: expected 1...99 replicas of 1...9999 devices" >&2; exit 2; }
      STACK_REPLICAS="$2"; STACK_SIZE="$3"; shift 3 ;;
    -h|--help) sed -n '2,/^\. .*common\.sh/p' "$0" | sed '$d' >&2; exit 2 ;;
    *) echo "compose-test: unknown option $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "compose-test: needs root (a container engine)" >&2; exit 2; }

scripts/apt-install.sh docker.io docker-compose debootstrap
LOGS="$ROOT/.build/compose-test"
mkdir -p "$LOGS"
rm -f "$LOGS"/*.log
PROJECT="mattersimtest$$"
DC=(docker-compose --project-name "$PROJECT" --file "$ROOT/docker-compose.yml")
DC_FLEET=("${DC[@]}" --profile fleet)
passed=0; failed=0
pass() { passed=$((passed + 1)); echo "compose: PASS $*"; }
fail() { failed=$((failed + 1)); echo "compose: FAIL $*"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# --- the engine ----------------------------------------------------------------------------
ENGINE_PID=""
ENGINE_ROOT=""
if ! docker info >/dev/null 2>&1; then
  echo "compose: starting dockerd (no iptables, no forwarding, no masquerading)"
  ENGINE_ROOT="/var/lib/mattersim-compose-engine"
  mkdir -p "$ENGINE_ROOT"
  dockerd --iptables=false --ip-forward=false --ip-masq=false --data-root "$ENGINE_ROOT/data" \
    --exec-root "/run/mattersim-compose-engine" --pidfile "/run/mattersim-compose-engine.pid" \
    >"$LOGS/dockerd.log" 2>&1 &
  ENGINE_PID=$!
  for _ in $(seq 120); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
  docker info >/dev/null 2>&1 || { echo "compose-test: dockerd did not start:" >&2; tail -n 20 "$LOGS/dockerd.log" >&2; exit 1; }
fi

torn_down=""
teardown() {
  set +e
  if [ -z "$torn_down" ]; then
    "${DC[@]}" logs --no-color >"$LOGS/compose.log" 2>&1
    "${DC_FLEET[@]}" down -v --remove-orphans >"$LOGS/down.log" 2>&1
  fi
  if [ -n "$ENGINE_PID" ]; then
    kill "$ENGINE_PID" 2>/dev/null
    for _ in $(seq 60); do kill -0 "$ENGINE_PID" 2>/dev/null || break; sleep 0.5; done
  fi
}
on_exit teardown

# --- images --------------------------------------------------------------------------------
MIRROR="$(awk '$1 == "URIs:" { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
[ -n "$MIRROR" ] || MIRROR="$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)"
[ -n "$MIRROR" ] || MIRROR="http://deb.debian.org/debian"
RUNTIME_PACKAGES="avahi-daemon,avahi-utils,dbus,libavahi-client3,libssl3,libqrencode4,libsqlite3-0,iproute2,ca-certificates,postgresql-15,haproxy"

# base_image TAG PACKAGES [EXTRA-SETUP]: TAG from a registry if one answers, else debootstrap'd
# with PACKAGES (comma-separated) and imported under TAG.
base_image() {
  local tag="$1" packages="$2" setup="${3:-}" dir made
  # One made here says which packages it holds; one without that list (an older script's, or
  # a registry's) or with another list is made again, unless a registry gives it.
  made="$(docker image inspect -f '{{index .Config.Labels "mattersim.packages"}}' "$tag" 2>/dev/null || true)"
  [ "$made" = "$packages" ] && return 0
  if timeout 30 docker pull "$tag" >/dev/null 2>&1; then return 0; fi
  echo "compose: making $tag from Debian packages ($MIRROR)"
  dir="$(mktemp -d /var/tmp/compose-base.XXXXXX)"
  debootstrap --variant=minbase --include="$packages" bookworm "$dir" "$MIRROR" >"$LOGS/debootstrap-${tag//[:\/]/_}.log" 2>&1 \
    || { rm -rf "$dir"; echo "compose-test: debootstrap of $tag failed (log in $LOGS)" >&2; return 1; }
  [ -z "$setup" ] || "$setup" "$dir"
  tar -C "$dir" -c . | docker import --change "ENV PATH=$IMAGE_PATH" --change "LABEL mattersim.packages=$packages" - "$tag" >/dev/null
  rm -rf "$dir"
}

# The Swift build image for --full: this machine's toolchain and its local package mirror, with
# git told to read package URLs from the mirror as it is here.
swift_setup() {
  local dir="$1"
  mkdir -p "$dir/opt"
  cp -a /opt/swift "$dir/opt/swift"
  [ -d /opt/swift-packages ] && cp -a /opt/swift-packages "$dir/opt/swift-packages"
  git config --system --list | grep '^url\.' | while IFS='=' read -r key value; do
    git config --file "$dir/etc/gitconfig" --add "$key" "$value"
  done
}

t_build="$(now)"
IMAGE_PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
base_image debian:bookworm-slim "$RUNTIME_PACKAGES"
if [ -n "$FULL" ]; then
  IMAGE_PATH="/opt/swift/usr/bin:$IMAGE_PATH"
  base_image swift:6.3-bookworm "$RUNTIME_PACKAGES,pkg-config,libavahi-client-dev,libssl-dev,libqrencode-dev,libsqlite3-dev,git,gcc,g++,libc6-dev,binutils,libcurl4,libxml2,libedit2,libncurses6,libz3-4,python3-minimal,tzdata" swift_setup
  echo "compose: docker build (full: the package compiles inside the build image)"
  docker build --network none -t mattersim:latest . >"$LOGS/build.log" 2>&1 \
    || { echo "compose-test: docker build failed:" >&2; tail -n 30 "$LOGS/build.log" >&2; exit 1; }
else
  # The binaries the test command built, stripped of debug info, their resource bundles, and
  # the Swift runtime libraries they link, at the paths their RUNPATH names.
  build_products matter-sim homectl matter-relay
  STAGE=".build/docker-prebuilt"
  rm -rf "$STAGE"; mkdir -p "$STAGE/usr/local/bin"
  for product in matter-sim homectl matter-relay; do
    strip -o "$STAGE/usr/local/bin/$product" ".build/debug/$product"
    ldd ".build/debug/$product" | awk '$3 ~ /^\/opt\/swift\// { print $3 }'
  done | sort -u | while read -r library; do
    mkdir -p "$STAGE$(dirname "$library")" && cp -L "$library" "$STAGE$library"
  done
  cp -r .build/debug/*.resources "$STAGE/usr/local/bin/" 2>/dev/null || true
  echo "compose: docker build --target prebuilt ($(du -sh "$STAGE" | cut -f1) staged)"
  docker build --network none --target prebuilt -t mattersim:latest . >"$LOGS/build.log" 2>&1 \
    || { echo "compose-test: docker build failed:" >&2; tail -n 30 "$LOGS/build.log" >&2; exit 1; }
fi
echo "compose: image built in $(since "$t_build") s"

# --- up ------------------------------------------------------------------------------------
t_up="$(now)"
"${DC[@]}" up -d --no-build >"$LOGS/up.log" 2>&1 || { cat "$LOGS/up.log" >&2; fail "docker-compose up"; exit 1; }
ctl() { "${DC[@]}" exec -T controller "$@"; }
DEVICES=(light plug blind)
declare -A NAME=([light]="Lamp" [plug]="Plug" [blind]="Blind")
seen=0
for _ in $(seq 30); do  # bounded: about a minute
  seen=$({ ctl homectl discover --json --seconds 2 2>/dev/null || true; } | python3 -c 'import json, sys
try: print(len({row["discriminator"] for row in json.load(sys.stdin)}))
except ValueError: print(0)' || echo 0)
  [ "$seen" -ge "${#DEVICES[@]}" ] && break
done
up_s="$(since "$t_up")"
if [ "$seen" -ge "${#DEVICES[@]}" ]; then pass "up: the controller discovers $seen devices over mDNS ($up_s s)"; else fail "up: $seen of ${#DEVICES[@]} discovered"; fi
TOKEN="$("${DC[@]}" exec -T relay cat /run/mattersim/home-token | tr -d '\r\n')"
[ -n "$TOKEN" ] && pass "the relay registered the home" || fail "no home token from the relay"
# The controller reads the home token from its own mount, not from a command line.
RELAY=(--relay ws://relay:8080 --relay-token-file /run/mattersim/home-token)

# --- secrets (issue #37 item 6) --------------------------------------------------------------
# None in the compose file; the relay's are root-only files; no device holds the home token
# or has a token on a command line; a device's credential is refused as a controller and for
# registrations; a placeholder admin token opens nothing.
mode="$("${DC[@]}" exec -T relay stat -c %a /var/lib/mattersim/admin-token /run/mattersim/home-token | tr -d '\r' | sort -u)"
[ "$mode" = 600 ] && pass "the relay's admin and home tokens are root-only files" || fail "token file modes: $mode"
grep -qiE 'change-me|ADMIN_TOKEN:|mr[hd]_' docker-compose.yml && fail "docker-compose.yml holds a secret" || pass "docker-compose.yml holds no secret"
leaks=0
for device in light plug blind; do
  # shellcheck disable=SC2016
  "${DC[@]}" exec -T "$device" sh -c '[ ! -e /run/mattersim/home-token ] && ! cat /proc/[0-9]*/cmdline 2>/dev/null | tr "\0" " " | grep -q "mr[hd]_"' \
    || { leaks=$((leaks + 1)); echo "compose: $device holds the home token or a token on a command line"; }
done
[ "$leaks" = 0 ] && pass "no device holds the home token or a token on its command line" || fail "$leaks devices leak tokens"
CREDENTIAL="$("${DC[@]}" exec -T light sed -n 's/^  credential: //p' /run/mattersim-relay/cloud.yaml | tr -d '\r\n')"
HOME_ID="$("${DC[@]}" exec -T relay matter-relay home list --database /var/lib/mattersim/relay.sqlite | awk '/Compose Home/ { print $1 }' | tr -d '\r')"
# status METHOD PATH BEARER [JSON]: the HTTP status the relay (its port published on loopback) answers.
# The bearer reaches python through its environment, not its command line.
status() {
  BEARER="$3" python3 - "$1" "$2" ${4:+"$4"} <<'PY'
import os, sys, urllib.request, urllib.error
method, path, bearer = sys.argv[1], sys.argv[2], os.environ["BEARER"]
data = sys.argv[3].encode() if len(sys.argv) > 3 else None
request = urllib.request.Request("http://127.0.0.1:8080" + path, data=data, method=method,
    headers={"Authorization": "Bearer " + bearer, "Content-Type": "application/json"})
try: print(urllib.request.urlopen(request, timeout=5).status)
except urllib.error.HTTPError as e: print(e.code)
except Exception as e: print("error", e)
PY
}
# onboarding_reports HOST:PORT: "REPORTS NODES" the relay there holds for the home (its token).
onboarding_reports() {
  BEARER="$TOKEN" python3 - "$1" <<'PY'
import json, os, sys, urllib.request
request = urllib.request.Request("http://%s/v1/onboarding" % sys.argv[1], headers={"Authorization": "Bearer " + os.environ["BEARER"]})
try:
    reports = json.load(urllib.request.urlopen(request, timeout=5))["reports"]
    print(len(reports), sum(len(r["nodes"]) for r in reports))
except Exception:
    print(0, 0)
PY
}
got="$(status GET "/v1/homes/$HOME_ID/devices" "$CREDENTIAL") $(status POST "/v1/homes/$HOME_ID/devices" "$CREDENTIAL" '{"deviceID":"SIM-PLUG-0001"}') $(status GET /v1/controller "$CREDENTIAL")"
[ "$got" = "401 401 401" ] && pass "a device credential lists, registers and controls nothing (401 401 401)" || fail "a device credential got $got"
got="$(status GET /v1/admin/homes change-me) $(status GET "/v1/homes/$HOME_ID/devices" "$TOKEN")"
[ "$got" = "401 200" ] && pass "admin API closed to change-me; the home token works (401 200)" || fail "admin change-me / home token: $got"

# --- commissioning -------------------------------------------------------------------------
ctl sh -c 'mkdir -p /var/lib/mattersim/trust && cp /opt/mattersim/DeviceProfiles/credentials/paa/*.pem \
  /opt/mattersim/DeviceProfiles/credentials/Chip-Test-CD-Signing-Cert.pem /var/lib/mattersim/trust/'
t_commission="$(now)"
for device in "${DEVICES[@]}"; do
  # The manual code (its 4-bit short discriminator may match another device: homectl tries each).
  code="$("${DC[@]}" logs --no-color "$device" | awk '/manual code:/ { print $NF }' | tail -n 1)"
  if ctl homectl commission --code "$code" --name "${NAME[$device]}" --paa-trust-store /var/lib/mattersim/trust \
      >"$LOGS/commission-$device.log" 2>&1; then
    pass "commission ${NAME[$device]} ($code)"
  else
    fail "commission ${NAME[$device]} ($code): $(tail -n 3 "$LOGS/commission-$device.log" | tr '\n' ' ')"
  fi
done
commission_s="$(since "$t_commission")"

# --- every cluster -------------------------------------------------------------------------
# state NAME KEY: one value of `homectl get NAME --json`.
state() {
  { ctl homectl get "$1" --json "${@:3}" 2>/dev/null || true; } | python3 -c 'import json, sys
try: print(json.load(sys.stdin)["state"].get(sys.argv[1], ""))
except (ValueError, KeyError): print("")' "$2"
}
expect_state() {  # expect_state WHAT NAME KEY VALUE [homectl options]
  local what="$1" value; value="$(state "$2" "$3" "${@:5}")"
  if [ "$value" = "$4" ]; then pass "$what"; else fail "$what: $3 is '$value', expected '$4'"; fi
}
ctl homectl level Lamp 180 >/dev/null 2>>"$LOGS/homectl.log" && expect_state "LevelControl: Lamp to 180" Lamp level 180 || fail "homectl level Lamp 180"
expect_state "OnOff: Lamp on with its level" Lamp onOff on
ctl homectl off Lamp >/dev/null 2>>"$LOGS/homectl.log" && expect_state "OnOff: Lamp off" Lamp onOff off || fail "homectl off Lamp"
ctl homectl on Plug >/dev/null 2>>"$LOGS/homectl.log" && expect_state "OnOff: Plug on" Plug onOff on || fail "homectl on Plug"
ctl homectl toggle Plug >/dev/null 2>>"$LOGS/homectl.log" && expect_state "OnOff: Plug toggled off" Plug onOff off || fail "homectl toggle Plug"
ctl homectl cover Blind 30 >/dev/null 2>>"$LOGS/homectl.log" || fail "homectl cover Blind 30"
lift=""
for _ in $(seq 30); do lift="$(state Blind lift)"; [ "$lift" = "30.00%" ] && break; sleep 0.5; done
[ "$lift" = "30.00%" ] && pass "WindowCovering: Blind to 30 %" || fail "WindowCovering: Blind lift is '$lift'"

# --- connectivity and locality through the compose relay -----------------------------------
# routes NAME: "connectivity/locality" of one device in `homectl devices --json` with the relay.
routes() {
  { ctl homectl devices --json --settle 6 "${RELAY[@]}" 2>/dev/null || true; } | python3 -c 'import json, sys
try: rows = json.load(sys.stdin)
except ValueError: rows = []
print(next((r["connectivity"] + "/" + r["locality"] for r in rows if r["name"] == sys.argv[1]), "missing"))' "$1"
}
expect_routes() {  # expect_routes WHAT NAME WANTED...: waits (bounded) for one of WANTED
  local what="$1" name="$2" got=""; shift 2
  for _ in $(seq 5); do
    got="$(routes "$name")"
    for wanted in "$@"; do [ "$got" = "$wanted" ] && { pass "$what: $name $got"; return; }; done
  done
  fail "$what: $name is $got, expected $*"
}
expect_routes "LAN and relay up" Lamp online/mixed online/direct
LAMP_STATE="/var/lib/mattersim/light/control.sock"
"${DC[@]}" exec -T light matter-sim fault --control "$LAMP_STATE" all lan-down >/dev/null || fail "matter-sim fault lan-down"
expect_routes "fault lan-down: only the relay reaches it" Lamp online/remote
ctl homectl level Lamp 120 --no-dnssd "${RELAY[@]}" >/dev/null 2>>"$LOGS/homectl.log" && pass "LevelControl through the relay (Lamp to 120)" \
  || fail "homectl level Lamp 120 through the relay"
expect_state "the relay's answer: Lamp at 120" Lamp level 120 --no-dnssd "${RELAY[@]}"
"${DC[@]}" stop relay >/dev/null 2>&1
expect_routes "relay container stopped, LAN down: no route" Lamp offline/unspecified
expect_routes "relay container stopped: the Plug's LAN still works" Plug online/direct
"${DC[@]}" start relay >/dev/null 2>&1
"${DC[@]}" exec -T light matter-sim fault --control "$LAMP_STATE" all lan-up >/dev/null || fail "matter-sim fault lan-up"
expect_routes "faults cleared" Lamp online/mixed online/direct

# --- scale-out: fleet replicas --------------------------------------------------------------
fleet_line=""
if [ "$FLEET_REPLICAS" -gt 0 ]; then
  total=$((FLEET_REPLICAS * FLEET_SIZE))
  t_fleet="$(now)"
  FLEET_SIZE="$FLEET_SIZE" "${DC_FLEET[@]}" up -d --no-build --scale fleet="$FLEET_REPLICAS" fleet >"$LOGS/fleet-up.log" 2>&1 \
    || { cat "$LOGS/fleet-up.log" >&2; fail "fleet: docker-compose up --scale fleet=$FLEET_REPLICAS"; }
  # Each replica reports its nodes to the relay (matter-sim report-onboarding); read back with
  # the home token through the relay's published port.
  reported=""
  for _ in $(seq 120); do  # bounded: a minute
    reported="$(onboarding_reports 127.0.0.1:8080)"
    [ "${reported% *}" -ge "$FLEET_REPLICAS" ] && break
    sleep 0.5
  done
  if [ "${reported% *}" -ge "$FLEET_REPLICAS" ] && [ "${reported#* }" -ge "$total" ]; then
    pass "fleet: every replica reported its nodes through the relay (${reported% *} reports, ${reported#* } nodes)"
  else
    fail "fleet: the relay holds $reported (reports nodes) of $FLEET_REPLICAS replicas' $total nodes"
  fi
  # Commissioning starts once every node announces itself (a node still starting answers no PASE).
  announced=0
  for _ in $(seq 40); do  # bounded: about two minutes
    announced=$({ ctl homectl discover --json --seconds 3 2>/dev/null || true; } | python3 -c 'import json, sys
try: print(len(json.load(sys.stdin)))
except ValueError: print(0)')
    [ "$announced" -ge "$total" ] && break
  done
  echo "compose: fleet: $announced commissionable records announced"
  t_fleet_commission="$(now)"
  # Every reported node, at the address its replica reported; a run again picks up what a node
  # still starting refused (devices already commissioned are skipped). Bounded: three rounds.
  commissioned=0
  for round in 1 2 3; do
    ctl homectl commission --fleet "${RELAY[@]}" --concurrency 16 --paa-trust-store /var/lib/mattersim/trust \
      >"$LOGS/fleet-commission-$round.log" 2>&1 || true
    commissioned=$(ctl homectl devices --json --settle 0 2>/dev/null | python3 -c 'import json, sys
try: print(sum(1 for row in json.load(sys.stdin) if (row.get("structure") or "").startswith("Fleet ")))
except ValueError: print(0)' || echo 0)
    [ "$commissioned" -ge "$total" ] && break
  done
  fleet_s="$(since "$t_fleet_commission")"
  rate="$(awk -v n="$commissioned" -v s="$fleet_s" 'BEGIN { printf "%.1f", (s > 0 ? n / s : 0) }')"
  fleet_line="compose: fleet of $FLEET_REPLICAS x $FLEET_SIZE: up and announced in $(awk -v a="$t_fleet" -v b="$t_fleet_commission" 'BEGIN { printf "%.1f", b - a }') s, $commissioned of $total commissioned in $fleet_s s ($rate/s)"
  if [ "$commissioned" -ge "$total" ]; then pass "fleet: all $total devices of $FLEET_REPLICAS replicas commissioned"
  else fail "fleet: $commissioned of $total commissioned (logs: $LOGS/fleet-commission-*.log)"; fi
fi

# --- down ----------------------------------------------------------------------------------
t_down="$(now)"
"${DC[@]}" logs --no-color >"$LOGS/compose.log" 2>&1 || true
"${DC_FLEET[@]}" down -v --remove-orphans >"$LOGS/down.log" 2>&1 && torn_down=yes
down_s="$(since "$t_down")"
left="$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT" | wc -l)"
left=$((left + $(docker network ls -q --filter "label=com.docker.compose.project=$PROJECT" | wc -l)))
left=$((left + $(docker volume ls -q --filter "label=com.docker.compose.project=$PROJECT" | wc -l)))
if command -v iptables-save >/dev/null; then left=$((left + $(iptables-save 2>/dev/null | grep -ci docker || true))); fi
[ -n "$torn_down" ] && [ "$left" = 0 ] && pass "down -v: no container, network, volume or firewall rule left" \
  || fail "down -v left $left objects (log: $LOGS/down.log)"

# --- the cloud profile: PostgreSQL, two relays, HAProxy; one relay killed mid-traffic ---------
cloud_line=""
if [ -n "$CLOUD" ]; then
  CLOUD_PROJECT="${PROJECT}cloud"
  DCC=(docker-compose --project-name "$CLOUD_PROJECT" --file "$ROOT/docker-compose.yml" --profile cloud)
  on_exit '"${DCC[@]}" logs --no-color >"$LOGS/cloud.log" 2>&1; "${DCC[@]}" down -v --remove-orphans >>"$LOGS/down.log" 2>&1'
  cctl() { "${DCC[@]}" exec -T controller "$@"; }
  t_cloud="$(now)"
  RELAY_CLOUD=1 "${DCC[@]}" up -d --no-build >"$LOGS/cloud-up.log" 2>&1 || { cat "$LOGS/cloud-up.log" >&2; fail "cloud: docker-compose --profile cloud up"; }
  # online_through PORT: "ONLINE REGISTERED" of the home's devices, as the relays behind the
  # balancer (published on loopback) tell the home's token.
  online_through() {
    BEARER="$CLOUD_TOKEN" python3 - "$1" "$CLOUD_HOME" <<'PY'
import json, os, sys, urllib.request
request = urllib.request.Request("http://127.0.0.1:%s/v1/homes/%s/devices" % (sys.argv[1], sys.argv[2]),
    headers={"Authorization": "Bearer " + os.environ["BEARER"]})
try:
    rows = json.load(urllib.request.urlopen(request, timeout=2))["devices"]
    print(sum(1 for r in rows if r["online"]), len(rows))
except Exception:
    print(0, 0)
PY
  }
  CLOUD_TOKEN=""; CLOUD_HOME=""
  for _ in $(seq 120); do  # bounded: a minute
    CLOUD_TOKEN="$("${DCC[@]}" exec -T relay cat /run/mattersim/home-token 2>/dev/null | tr -d '\r\n' || true)"
    [ -n "$CLOUD_TOKEN" ] && break
    sleep 0.5
  done
  CLOUD_HOME="$("${DCC[@]}" exec -T relay matter-relay home list --database "postgres://relay@postgres:5432/postgres?sslmode=disable" 2>/dev/null \
    | awk '/Compose Home/ { print $1 }' | tr -d '\r')"
  online="0 0"
  for _ in $(seq 120); do  # bounded: a minute
    online="$(online_through 8090)"
    [ "${online% *}" -ge 3 ] && break
    sleep 0.5
  done
  cloud_up_s="$(since "$t_cloud")"
  if [ "${online% *}" -ge 3 ]; then pass "cloud: PostgreSQL, two relays and HAProxy up; the home's 3 devices online through the balancer ($cloud_up_s s)"
  else fail "cloud: $online (online registered) through the balancer"; fi
  registered_before="$(online_through 8090)"; registered_before="${registered_before#* }"
  # The Lamp commissioned over its LAN, then its LAN pulled: its commands go through the balancer.
  CRELAY=(--relay ws://balancer:8080 --relay-token-file /run/mattersim/home-token)
  cctl sh -c 'mkdir -p /var/lib/mattersim/trust && cp /opt/mattersim/DeviceProfiles/credentials/paa/*.pem \
    /opt/mattersim/DeviceProfiles/credentials/Chip-Test-CD-Signing-Cert.pem /var/lib/mattersim/trust/'
  code="$("${DCC[@]}" logs --no-color light | awk '/manual code:/ { print $NF }' | tail -n 1)"
  cctl homectl commission --code "$code" --name Lamp --paa-trust-store /var/lib/mattersim/trust >"$LOGS/cloud-commission.log" 2>&1 \
    || fail "cloud: commission Lamp: $(tail -n 2 "$LOGS/cloud-commission.log" | tr '\n' ' ')"
  "${DCC[@]}" exec -T light matter-sim fault --control "$LAMP_STATE" all lan-down >/dev/null || fail "cloud: matter-sim fault lan-down"
  level() { cctl homectl level Lamp "$1" --no-dnssd "${CRELAY[@]}" >/dev/null 2>>"$LOGS/cloud-homectl.log"; }
  level 90 && pass "cloud: LevelControl through the balancer (Lamp to 90)" || fail "cloud: homectl level Lamp 90 through the balancer"
  # The instance holding the Lamp's connection: its record in PostgreSQL, its ID in its log.
  sql() { "${DCC[@]}" exec -T postgres psql -U relay -h /run/postgresql -d postgres -Atc "$1" | tr -d '\r'; }
  instance_of() { "${DCC[@]}" logs --no-color "$1" | sed -n 's/.*instance \([^ ]*\) on PostgreSQL.*/\1/p' | tail -n 1 | tr -d '\r'; }
  holder_id="$(sql "SELECT instanceID FROM relay_connection WHERE deviceID = 'SIM-DL-0001' LIMIT 1")"
  victim=relay; survivor=relay-b
  [ "$holder_id" != "$(instance_of relay-b)" ] || { victim=relay-b; survivor=relay; }
  victim_id="$(instance_of "$victim")"
  # Traffic: commands back to back; the victim SIGKILLed between two of them. Back online: every
  # device connected to the survivor again (its records in PostgreSQL) and listed online.
  level 100 || true
  t_kill="$(now)"
  "${DCC[@]}" kill -s SIGKILL "$victim" >/dev/null 2>&1
  back_online="" next_command=""
  for i in $(seq 120); do  # bounded: a minute and the commands' own timeouts
    if [ -z "$next_command" ] && level $((100 + i)); then next_command="$(since "$t_kill")"; fi
    if [ -z "$back_online" ] \
      && [ "$(sql "SELECT COUNT(DISTINCT deviceID) FROM relay_connection WHERE role = 'device' AND instanceID <> '$victim_id'")" -ge 3 ]; then
      online="$(online_through 8090)"
      [ "${online% *}" -ge 3 ] && back_online="$(since "$t_kill")"
    fi
    [ -n "$next_command" ] && [ -n "$back_online" ] && break
    [ "$(since "$t_kill" | cut -d. -f1)" -lt 60 ] || break
    sleep 0.2
  done
  if [ -n "$back_online" ] && [ -n "$next_command" ]; then
    pass "cloud: $victim (the Lamp's instance) killed: every device online through $survivor after $back_online s, the next command after $next_command s"
  else fail "cloud: after killing $victim: online again ${back_online:-never}, next command ${next_command:-never}"; fi
  registered_after="$(online_through 8090)"; registered_after="${registered_after#* }"
  [ "$registered_after" = "$registered_before" ] && [ "$registered_after" -ge 4 ] \
    && pass "cloud: no registration lost ($registered_after devices registered before and after)" \
    || fail "cloud: $registered_before devices registered before the kill, $registered_after after"
  cloud_line="compose: cloud: up and online through the balancer in $cloud_up_s s; $victim killed: devices back in ${back_online:-never} s, next command in ${next_command:-never} s"
  "${DCC[@]}" logs --no-color >"$LOGS/cloud.log" 2>&1 || true
  "${DCC[@]}" down -v --remove-orphans >>"$LOGS/down.log" 2>&1 || fail "cloud: docker-compose down"
fi

# --- the fleet as a swarm stack ----------------------------------------------------------------
stack_line=""
if [ "$STACK_REPLICAS" -gt 0 ]; then
  STACK="mattersimstack$$"
  stack_total=$((STACK_REPLICAS * STACK_SIZE))
  t_stack="$(now)"
  SWARM_MADE=""
  if [ "$(docker info --format '{{.Swarm.LocalNodeState}}')" = inactive ]; then
    # One node, its control plane and data path on loopback only.
    docker swarm init --advertise-addr 127.0.0.1 --listen-addr 127.0.0.1:2377 >"$LOGS/swarm.log" 2>&1 \
      && SWARM_MADE=yes || { cat "$LOGS/swarm.log" >&2; fail "stack: docker swarm init"; }
  fi
  STACK_DOWN=""
  stack_down() {
    [ -z "$STACK_DOWN" ] || return 0
    STACK_DOWN=yes
    docker stack rm "$STACK" >>"$LOGS/swarm.log" 2>&1
    for _ in $(seq 60); do  # bounded: 30 s for the tasks' containers to go
      [ -z "$(docker ps -aq --filter "label=com.docker.stack.namespace=$STACK")" ] && break
      sleep 0.5
    done
    docker volume ls -q --filter "label=com.docker.stack.namespace=$STACK" | xargs -r docker volume rm >>"$LOGS/swarm.log" 2>&1
    if [ -n "$SWARM_MADE" ]; then
      docker swarm leave --force >>"$LOGS/swarm.log" 2>&1
      docker network rm docker_gwbridge >>"$LOGS/swarm.log" 2>&1 || true
    fi
  }
  on_exit 'stack_down'
  FLEET_REPLICAS="$STACK_REPLICAS" FLEET_SIZE="$STACK_SIZE" docker stack deploy --compose-file "$ROOT/deploy/fleet-stack.yml" "$STACK" \
    >>"$LOGS/swarm.log" 2>&1 || { tail -n 5 "$LOGS/swarm.log" >&2; fail "stack: docker stack deploy"; }
  stack_controller() { docker ps -q --filter "label=com.docker.swarm.service.name=${STACK}_controller" | head -n 1; }
  sctl() { docker exec "$(stack_controller)" "$@"; }
  for _ in $(seq 120); do [ -n "$(stack_controller)" ] && break; sleep 0.5; done  # bounded: a minute
  sctl sh -c 'mkdir -p /var/lib/mattersim/trust && cp /opt/mattersim/DeviceProfiles/credentials/paa/*.pem \
    /opt/mattersim/DeviceProfiles/credentials/Chip-Test-CD-Signing-Cert.pem /var/lib/mattersim/trust/' || fail "stack: the controller's trust store"
  t_stack_commission="$(now)"
  # Rounds of `commission --fleet` until every replica has reported and every node is in
  # (a replica still starting has not reported, or refuses PASE). Bounded: about two minutes.
  stack_commissioned=0
  for round in $(seq 20); do
    sctl homectl commission --fleet --relay ws://relay:8080 --relay-token-file /run/mattersim/home-token --concurrency 16 \
      --paa-trust-store /var/lib/mattersim/trust >"$LOGS/stack-commission-$round.log" 2>&1 || true
    stack_commissioned=$(sctl homectl devices --json --settle 0 2>/dev/null | python3 -c 'import json, sys
try: print(sum(1 for row in json.load(sys.stdin) if (row.get("structure") or "").startswith("Fleet ")))
except ValueError: print(0)' || echo 0)
    [ "$stack_commissioned" -ge "$stack_total" ] && break
    sleep 2
  done
  stack_s="$(since "$t_stack_commission")"
  if [ "$stack_commissioned" -ge "$stack_total" ]; then
    pass "stack: all $stack_total nodes of $STACK_REPLICAS swarm replicas reported through the relay and commissioned"
  else fail "stack: $stack_commissioned of $stack_total commissioned (logs: $LOGS/stack-commission-*.log)"; fi
  t_stack_down="$(now)"
  stack_down || true
  stack_line="compose: stack of $STACK_REPLICAS x $STACK_SIZE: swarm up and deployed in $(awk -v a="$t_stack" -v b="$t_stack_commission" 'BEGIN { printf "%.1f", b - a }') s, $stack_commissioned of $stack_total commissioned in $stack_s s, removed in $(since "$t_stack_down") s"
  left="$(docker ps -aq --filter "label=com.docker.stack.namespace=$STACK" | wc -l)"
  left=$((left + $(docker volume ls -q --filter "label=com.docker.stack.namespace=$STACK" | wc -l)))
  [ -z "$SWARM_MADE" ] || [ "$(docker info --format '{{.Swarm.LocalNodeState}}')" = inactive ] || left=$((left + 1))
  [ "$left" = 0 ] && pass "stack removed, swarm left: nothing of it remains" || fail "stack: $left objects left (log: $LOGS/swarm.log)"
fi

[ -z "$fleet_line" ] || echo "$fleet_line"
[ -z "$cloud_line" ] || echo "$cloud_line"
[ -z "$stack_line" ] || echo "$stack_line"
echo "compose: home up in $up_s s, ${#DEVICES[@]} devices commissioned in $commission_s s, torn down in $down_s s"
echo "compose: $passed passed, $failed failed"
[ "$failed" = 0 ]

#!/usr/bin/env bash
# The project's main job: the demo home (DeviceProfiles/homes/demo-home.yaml) as 29 real
# Matter nodes in one process, on a private fake LAN (network namespaces with their own
# D-Bus and Avahi; nothing touches the real network), with a cloud relay on a "cloud" host
# and a controller walkthrough on a "phone" host: commission every device into its rooms,
# list them by room, control each cluster, press a wall switch bound to a light, test the smoke
# alarm, start the robot vacuum, let an automation answer smoke, spring a leak, unplug a bridged
# bulb, then show connectivity and locality while a fault is injected (the Bedside Lamp's
# LevelControl lives only in the cloud). Needs root.
#
#   scripts/demo.sh                   the walkthrough, then stop cleanly
#   scripts/demo.sh --forever         after the walkthrough keep the home running until Ctrl-C
#   scripts/demo.sh HOME.yaml         another home profile (the walkthrough adapts to it)
#   scripts/demo.sh --network host    the home on this machine's real LAN through the system's
#                                     Avahi daemon, for phones and hubs (see README); no walkthrough
. "$(dirname "$0")/lib/common.sh"
forever=""; network=fake; home="$ROOT/DeviceProfiles/homes/demo-home.yaml"
while [ $# -gt 0 ]; do
  case "$1" in
    --forever) forever=yes; shift ;;
    --network) network="$2"; shift 2 ;;
    -*) echo "demo: unknown option $1 (see the top of scripts/demo.sh)" >&2; exit 2 ;;
    *) home="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; shift ;;
  esac
done
case "$network" in fake|host) ;; *) echo "demo: --network takes fake or host, got '$network'" >&2; exit 2 ;; esac
scripts/setup.sh
echo "demo: building matter-sim, homectl and matter-relay (the first build takes a few minutes)"
build_products matter-sim homectl matter-relay
SIM="$ROOT/.build/debug/matter-sim"; HOMECTL="$ROOT/.build/debug/homectl"; RELAY="$ROOT/.build/debug/matter-relay"
"$SIM" validate "$home"
STATE="$(mktemp -d /tmp/matter-demo.XXXXXX)"

if [ "$network" = host ]; then
  # Hardware in the loop: the nodes advertise through the system's own Avahi daemon, on
  # every interface it serves. Start it yourself (systemctl start avahi-daemon) first.
  avahi-daemon -c 2>/dev/null || { echo "demo: --network host needs the system's avahi-daemon running" >&2; exit 2; }
  # exec: the home replaces this script (no trap would run), so its state stays in $STATE.
  echo "demo: the home on this machine's LAN until Ctrl-C (pair with the manual codes below); state in $STATE"
  exec "$SIM" home "$home" --state-root "$STATE/home"
fi

LAN="fldemo$$"; LAN="${LAN:0:12}"
SIM_PID=""; RELAY_PID=""
cleanup() {
  [ -z "$SIM_PID" ] || kill -INT "$SIM_PID" 2>/dev/null || true
  [ -z "$RELAY_PID" ] || kill -TERM "$RELAY_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  scripts/fakelan.sh down "$LAN" >/dev/null 2>&1 || true
  rm -rf "$STATE"
}
on_exit cleanup
# Host order gives the addresses: home 10.77.0.2, cloud 10.77.0.3, phone 10.77.0.4.
scripts/fakelan.sh up "$LAN" home cloud phone >/dev/null
scripts/fakelan.sh avahi "$LAN" home phone >/dev/null
HOME_IP=10.77.0.2; CLOUD_IP=10.77.0.3

step() { echo; echo "demo: == $* =="; }
# homectl on the phone host; its routine log lines (info, notice) stay out of the walkthrough.
on_phone() {
  scripts/fakelan.sh exec "$LAN" phone -- "$@" 2> >(grep --line-buffered -vE '^[0-9T:+-]+ (trace|debug|info|notice) ' >&2)
}

step "the cloud relay on host 'cloud'"
token=$("$RELAY" home add "Demo Home" --database "$STATE/relay.sqlite" | awk '$1 == "token" { print $2 }')
scripts/fakelan.sh exec "$LAN" cloud -- "$RELAY" serve --host 0.0.0.0 --port 8080 --database "$STATE/relay.sqlite" \
  >"$STATE/relay.log" 2>&1 &
RELAY_PID=$!
# Tokens go in the environment, not on command lines (`ps` shows those to every user).
export HOMECTL_RELAY_TOKEN="$token" MATTER_RELAY_HOME_TOKEN="$token"
RELAY_OPTS=(--relay "ws://$CLOUD_IP:8080")
echo "relay ws://$CLOUD_IP:8080, home token ${token:0:8}…"

step "the home on host 'home' (one matter-sim process, one Matter node per device)"
scripts/fakelan.sh exec "$LAN" home -- "$SIM" home "$home" --state-root "$STATE/home" \
  --relay "ws://$CLOUD_IP:8080" --control "$STATE/control.sock" \
  > >(grep --line-buffered -vE ' (notice|info|warning) ' | sed -u 's/^/  /') 2>"$STATE/home.log" &
SIM_PID=$!
expected=$("$SIM" describe "$home" --no-attributes | grep -c '^    device "' || true)
resolved=0
for _ in $(seq 60); do  # bounded: up to about a minute
  resolved=$(on_phone avahi-browse -prt _matterc._udp 2>/dev/null | awk -F';' '$1 == "=" && $3 == "IPv4"' | cut -d';' -f4 | sort -u | wc -l)
  [ "$resolved" -ge "$expected" ] && break
  sleep 1
done
echo "demo: the phone resolves $resolved of $expected commissionable nodes over mDNS"

TRUST="$STATE/trust"; mkdir -p "$TRUST"
cp DeviceProfiles/credentials/paa/*.pem DeviceProfiles/credentials/Chip-Test-CD-Signing-Cert.pem "$TRUST/"
DB=(--database "$STATE/phone.sqlite")

step "homectl commission --home: every device, into the home's structures and rooms"
on_phone "$HOMECTL" commission --home "$home" "${DB[@]}" --paa-trust-store "$TRUST" --host "$HOME_IP"

step "homectl devices: by room, with connectivity and locality (LAN + relay)"
on_phone "$HOMECTL" devices --home "$STATE/phone.sqlite" "${RELAY_OPTS[@]}" --settle 6

# Devices of the demo home by role; another home profile may not have them. Described once:
# `grep -q` leaving early would cut the listing of a large home off mid-write (SIGPIPE, and
# pipefail then calls the device missing).
DESCRIBED="$("$SIM" describe "$home" --no-attributes)"
has() { grep -q "^    device \"$1\"" <<<"$DESCRIBED"; }
step "control each cluster"
if has "Ceiling Light"; then
  on_phone "$HOMECTL" level "Ceiling Light" 200 --home "$STATE/phone.sqlite" >/dev/null
  on_phone "$HOMECTL" get "Ceiling Light" --home "$STATE/phone.sqlite"        # OnOff + LevelControl
fi
if has "Floor Lamp"; then
  on_phone "$HOMECTL" toggle "Floor Lamp" --home "$STATE/phone.sqlite" >/dev/null
  on_phone "$HOMECTL" get "Floor Lamp" --home "$STATE/phone.sqlite"           # OnOff (plug)
fi
if has "Patio Blind"; then
  on_phone "$HOMECTL" cover "Patio Blind" 40 --home "$STATE/phone.sqlite" >/dev/null
  sleep 3
  on_phone "$HOMECTL" get "Patio Blind" --home "$STATE/phone.sqlite"          # WindowCovering, moving at its speed
fi

# Issue #40: what a person does at the home's newer devices, and what the phone then reads.
act() { "$SIM" act --control "$STATE/control.sock" "$@"; }
get() { on_phone "$HOMECTL" get "$1" --home "$STATE/phone.sqlite" | grep -E "${2:-.}"; }
if has "Living Room Switch" && has "Ceiling Light"; then
  step "the Living Room Switch, bound to the Ceiling Light by commission --home: a press toggles the light, no controller between"
  get "Ceiling Light" 'onOff'
  act "Living Room Switch" press
  sleep 1
  get "Ceiling Light" 'onOff'
fi
if has "Smoke Alarm"; then
  step "the Smoke Alarm: the phone starts its self-test (5 s), then smoke in the hall, then clear"
  on_phone "$HOMECTL" self-test "Smoke Alarm" --home "$STATE/phone.sqlite"
  get "Smoke Alarm" 'alarm|self-test'
  sleep 5  # the self-test's 5 s
  act "Smoke Alarm" smoke critical
  get "Smoke Alarm" 'alarm|smoke'
  act "Smoke Alarm" clear
  get "Smoke Alarm" 'alarm|smoke'
fi
if has "Robot Vacuum"; then
  step "the Robot Vacuum: the phone starts a clean run; on the node clock it cleans, its battery draining"
  on_phone "$HOMECTL" vacuum "Robot Vacuum" start --home "$STATE/phone.sqlite"
  sleep 7  # a half-percent of battery every 6 s of cleaning
  get "Robot Vacuum" 'vacuum|run mode|clean mode|battery'
fi
if has "Smoke Alarm" && has "Ceiling Light"; then
  step "an automation answers the Smoke Alarm: smoke turns the Ceiling Light on and sends the Robot Vacuum home"
  then_vacuum=(); has "Robot Vacuum" && then_vacuum=(--then "Robot Vacuum:dock")
  on_phone "$HOMECTL" automations create "Smoke: light on, vacuum home" --when "Smoke Alarm:smoke" \
    --then "Ceiling Light:on" "${then_vacuum[@]}" --home "$STATE/phone.sqlite"
  on_phone "$HOMECTL" off "Ceiling Light" --home "$STATE/phone.sqlite" >/dev/null
  # The phone runs the home's automations (a hub would too: matter-relay serve --mode hub).
  on_phone "$HOMECTL" automations run --duration 25 --home "$STATE/phone.sqlite" &
  runner=$!
  sleep 8  # its subscriptions to the home's devices
  act "Smoke Alarm" smoke critical
  sleep 4
  get "Ceiling Light" 'onOff'
  ! has "Robot Vacuum" || get "Robot Vacuum" 'vacuum|run mode'
  act "Smoke Alarm" clear
  wait "$runner" || true
  on_phone "$HOMECTL" automations history --home "$STATE/phone.sqlite"
fi
if has "Sink Leak Sensor"; then
  step "the Sink Leak Sensor: a leak under the sink sets off its alarm, then it dries"
  act "Sink Leak Sensor" leak
  get "Sink Leak Sensor" 'water|alarms'
  act "Sink Leak Sensor" dry
  get "Sink Leak Sensor" 'water|alarms'
fi
if has "Lighting Bridge"; then
  step "the Lighting Bridge: one node, three bridged lights; the phone switches the first, then it is unplugged behind the bridge"
  on_phone "$HOMECTL" on "Lighting Bridge" --home "$STATE/phone.sqlite" >/dev/null
  get "Lighting Bridge" 'bridged'
  act "Lighting Bridge" unplug 2
  get "Lighting Bridge" 'bridged'
  act "Lighting Bridge" plug 2
fi

# Issue #21: the device group the home declares, made by `commission --home`.
if on_phone "$HOMECTL" group list --home "$STATE/phone.sqlite" 2>/dev/null | grep -q "Downstairs Lights"; then
  step "device group Downstairs Lights: one group message (IPv6 multicast) switches its three lights"
  on_phone "$HOMECTL" group list --home "$STATE/phone.sqlite"
  on_phone "$HOMECTL" group off "Downstairs Lights" --home "$STATE/phone.sqlite"
  on_phone "$HOMECTL" group on "Downstairs Lights" --home "$STATE/phone.sqlite"
fi

if has "Bedside Lamp"; then
  lamp="Bedside Lamp"
  show() {
    on_phone "$HOMECTL" devices --home "$STATE/phone.sqlite" "${RELAY_OPTS[@]}" --no-dnssd | awk -v lamp="$lamp" 'NR <= 2 || index($0, lamp)'
  }
  step "connectivity and locality of the $lamp (LevelControl only in the cloud)"
  show
  step "fault: $lamp cloud-down (the vendor cloud unreachable): only its LAN traits answer"
  "$SIM" fault --control "$STATE/control.sock" "$lamp" cloud-down
  show
  "$SIM" fault --control "$STATE/control.sock" "$lamp" cloud-up
  step "fault: $lamp lan-down (its LAN cable pulled): everything through the relay"
  "$SIM" fault --control "$STATE/control.sock" "$lamp" lan-down
  on_phone "$HOMECTL" level "$lamp" 120 --home "$STATE/phone.sqlite" "${RELAY_OPTS[@]}" --no-dnssd >/dev/null \
    && echo "level 120 through the relay: ok"
  show
  step "fault: $lamp cloud-down too: offline, and commands fail fast"
  "$SIM" fault --control "$STATE/control.sock" "$lamp" cloud-down
  show
  on_phone "$HOMECTL" on "$lamp" --home "$STATE/phone.sqlite" "${RELAY_OPTS[@]}" --no-dnssd --timeout 4 \
    || echo "demo: (that failure is the point: no route reaches the lamp)"
  step "faults cleared: lan-up, cloud-up"
  "$SIM" fault --control "$STATE/control.sock" "$lamp" lan-up
  "$SIM" fault --control "$STATE/control.sock" "$lamp" cloud-up
  show
fi

if [ -n "$forever" ]; then
  step "the home keeps running until Ctrl-C (homectl on host 'phone': scripts/fakelan.sh exec $LAN phone -- …)"
  wait "$SIM_PID"
  exit 0
fi
step "stopping"
kill -INT "$SIM_PID" 2>/dev/null || true
wait "$SIM_PID" || true
SIM_PID=""
echo "demo: done: $resolved nodes resolved over mDNS, commissioned by homectl, every cluster controlled, connectivity shown through injected faults"

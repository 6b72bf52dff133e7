#!/usr/bin/env bash
# fakelan.sh: a private fake LAN made of Linux network namespaces, for mDNS / DNS-SD tests
# and demos. Nothing here touches the machine's real interfaces: every host is a network
# namespace whose only link is a veth into a bridge that lives in a namespace of its own,
# and every Avahi daemon is told to use that veth (eth0 inside the host) and nothing else.
#
#     [LAN-a] eth0 ==veth== p-a --+
#     [LAN-b] eth0 ==veth== p-b --+-- br0   in [LAN-br]
#     [LAN-c] eth0 ==veth== p-c --+
#
# A host given an Avahi daemon gets a private mount namespace over /run/dbus and
# /run/avahi-daemon with its own D-Bus system bus and avahi-daemon in it; a small holder
# process keeps that mount namespace alive so later commands (`exec`) see the same daemons.
#
# Verbs (all need root):
#   up LAN HOST...             create the bridge namespace and one namespace per HOST
#   join LAN HOST...           add hosts to an existing LAN
#   segment LAN HUB HOST...    give each HOST a segment of its own: its port moves from br0 to a
#                              bridge of its own, which HUB joins with one more interface
#                              (eth1, eth2, ...); the HOSTs no longer hear each other, HUB hears
#                              each on an interface of its own (Avahi keeps a cache per
#                              interface). Before `avahi` on HUB.
#   avahi LAN HOST...          start a private D-Bus + avahi-daemon on each HOST
#   avahi-stop LAN HOST        `avahi-daemon -k` on HOST (the D-Bus stays up)
#   avahi-start LAN HOST       start HOST's avahi-daemon again, wait until it runs
#   avahi-pause LAN HOST       SIGSTOP HOST's avahi-daemon (a daemon too busy to answer);
#   avahi-resume LAN HOST      SIGCONT it
#   exec LAN HOST -- CMD...    run CMD on HOST (inside its daemons' mount namespace); this
#                              process becomes CMD (exec), so its exit status is CMD's
#   down LAN                   kill every process on the LAN, delete its namespaces
#   cleanup [--stale] [PREFIX] remove leftovers named PREFIX* (default: fl); with --stale only
#                              LANs whose owner process is gone
#   run [--lan LAN] [--hosts "a b"] [--avahi "a b"] [--in HOST] -- CMD...
#                              up + avahi + CMD on HOST, and down on exit whatever happens
#   list                       LANs that exist, with their owner pid
#
# Names: LAN matches fl[a-z0-9]{1,10}; HOST matches [a-z][a-z0-9]{0,9} (not "br").
# The owner of a LAN (for `cleanup --stale`) is $FAKELAN_OWNER if set, else the caller.
# Host number i (from 1, in creation order) gets 10.77.0.(i+1)/24 and an IPv6 link-local
# address on eth0; `exec` exports FAKELAN_LAN, FAKELAN_HOST and FAKELAN_ADDR.
# FAKELAN_AVAHI_CACHE_MAX and FAKELAN_AVAHI_OBJECTS_MAX, when `avahi` runs, set the daemons'
# cache-entries-max (default 65536) and objects-per-client-max (default 8192).
# FAKELAN_AVAHI_IPV4=no when `avahi` runs: those daemons do mDNS over IPv6 only (no A records),
# as a Matter-only network would. Every answer then names the same addresses: with both, Avahi
# leaves A records out of IPv6 answers and out of answers to AAAA queries, and the
# connectedhomeip controller holds a node found both ways twice in its table of commissionable
# nodes (10 entries), which six devices fill.
set -euo pipefail

# The harness's shared pieces; this script keeps the caller's working directory (`exec` runs
# commands there) and sets its own traps per verb.
LIB_KEEP_CWD=1 . "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
trap - EXIT INT TERM
unblock_signals bash "$SCRIPT_PATH" "$@"

STATE_ROOT="${FAKELAN_STATE_DIR:-/run/fakelan}"
SELF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"

check_lan() { [[ "$1" =~ ^fl[a-z0-9]{1,10}$ ]] || die "bad LAN name '$1' (fl[a-z0-9]{1,10})"; }

check_host() {
  [[ "$1" =~ ^[a-z][a-z0-9]{0,9}$ ]] && [ "$1" != br ] || die "bad host name '$1' ([a-z][a-z0-9]{0,9}, not br)"
}

state_dir() { echo "$STATE_ROOT/$1"; }

ns_exists() { ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "$1"; }

# Stops every process whose network namespace is NS, politely first.
kill_ns_processes() {
  local ns="$1" pids i
  pids="$(ip netns pids "$ns" 2>/dev/null || true)"
  [ -n "$pids" ] || return 0
  kill $pids 2>/dev/null || true
  for i in $(seq 20); do
    pids="$(ip netns pids "$ns" 2>/dev/null || true)"
    [ -n "$pids" ] || return 0
    sleep 0.1
  done
  kill -9 $pids 2>/dev/null || true
  for i in $(seq 20); do
    [ -n "$(ip netns pids "$ns" 2>/dev/null || true)" ] || return 0
    sleep 0.1
  done
}

lan_namespaces() { ip netns list 2>/dev/null | awk '{print $1}' | grep "^$1-" || true; }

lan_exists() { [ -e "$(state_dir "$1")" ] || [ -n "$(lan_namespaces "$1")" ]; }

# Checks names before anything is made, so that a bad name never leaves half a LAN.
check_new_lan() {
  local lan="$1" host; shift
  check_lan "$lan"
  for host in "$@"; do check_host "$host"; done
  [ "$(printf '%s\n' "$@" | sort | uniq -d)" = "" ] || die "a host is listed twice"
  ! lan_exists "$lan" || die "LAN $lan already exists"
}

cmd_up() {
  local lan="$1"; shift
  mkdir -p "$(state_dir "$lan")"
  echo "${FAKELAN_OWNER:-$PPID}" > "$(state_dir "$lan")/owner"
  : > "$(state_dir "$lan")/hosts"
  ip netns add "$lan-br"
  ip -n "$lan-br" link set lo up
  # Snooping off: nothing on this LAN runs an MLD/IGMP querier, and mDNS must flood.
  ip -n "$lan-br" link add br0 type bridge stp_state 0 mcast_snooping 0
  ip -n "$lan-br" link set br0 up
  cmd_join "$lan" "$@"
}

cmd_join() {
  local lan="$1"; shift
  check_lan "$lan"
  local dir; dir="$(state_dir "$lan")"
  [ -d "$dir" ] && ns_exists "$lan-br" || die "no LAN $lan"
  local host index
  for host in "$@"; do
    check_host "$host"
    ! ns_exists "$lan-$host" || die "host $host already on $lan"
  done
  for host in "$@"; do
    index=$(( $(wc -l < "$dir/hosts") + 1 ))
    [ "$index" -le 250 ] || die "at most 250 hosts on a LAN"
    echo "$host $index" >> "$dir/hosts"
    ip netns add "$lan-$host"
    # No duplicate-address detection: link-local IPv6 is usable at once, so Avahi
    # announces it with the IPv4 address instead of a second later.
    ip netns exec "$lan-$host" sysctl -q -w net.ipv6.conf.all.accept_dad=0 \
      net.ipv6.conf.default.accept_dad=0 >/dev/null
    ip -n "$lan-$host" link set lo up
    # Both ends are created inside namespaces: no veth ever appears on the real host.
    ip -n "$lan-$host" link add eth0 type veth peer name "p-$host" netns "$lan-br"
    ip -n "$lan-br" link set "p-$host" master br0
    ip -n "$lan-br" link set "p-$host" up
    ip -n "$lan-$host" addr add "10.77.0.$((index + 1))/24" dev eth0
    ip -n "$lan-$host" link set eth0 up multicast on
  done
}

# A hub's extra interfaces, one per segment: the hub keeps its own address on each (a /32)
# and reaches each segment's host by a host route, so addresses stay as `up` gave them.
cmd_segment() {
  local lan="$1" hub="$2"; shift 2
  check_lan "$lan"; check_host "$hub"
  local dir hubaddr host n
  dir="$(state_dir "$lan")"
  ns_exists "$lan-$hub" || die "no host $hub on $lan"
  ! holder_pid "$lan" "$hub" >/dev/null || die "segment: before avahi on $hub (its daemon reads its interfaces once)"
  hubaddr="$(host_address "$lan" "$hub")"
  n=0; [ ! -f "$dir/$hub.ifaces" ] || n="$(wc -l < "$dir/$hub.ifaces")"
  for host in "$@"; do
    check_host "$host"
    [ "$host" != "$hub" ] && ns_exists "$lan-$host" || die "segment: no host $host on $lan (or the hub itself)"
    n=$((n + 1))
    ip -n "$lan-br" link add "s-$host" type bridge stp_state 0 mcast_snooping 0
    ip -n "$lan-br" link set "s-$host" up
    ip -n "$lan-br" link set "p-$host" nomaster
    ip -n "$lan-br" link set "p-$host" master "s-$host"
    ip -n "$lan-$hub" link add "eth$n" type veth peer name "h-$host" netns "$lan-br"
    ip -n "$lan-br" link set "h-$host" master "s-$host"
    ip -n "$lan-br" link set "h-$host" up
    ip -n "$lan-$hub" addr add "$hubaddr/32" dev "eth$n"
    ip -n "$lan-$hub" link set "eth$n" up multicast on
    ip -n "$lan-$hub" route add "$(host_address "$lan" "$host")/32" dev "eth$n" src "$hubaddr"
    echo "eth$n" >> "$dir/$hub.ifaces"
  done
}

host_address() {
  local lan="$1" host="$2" index
  index="$(awk -v h="$host" '$1 == h {print $2}' "$(state_dir "$lan")/hosts" 2>/dev/null)"
  [ -n "$index" ] && echo "10.77.0.$((index + 1))"
}

write_avahi_conf() {
  local lan="$1" host="$2"
  case "${FAKELAN_AVAHI_IPV4:-yes}" in yes|no) ;; *) die "FAKELAN_AVAHI_IPV4: yes or no, not '$FAKELAN_AVAHI_IPV4'" ;; esac
  [[ "${FAKELAN_AVAHI_CACHE_MAX:-1}" =~ ^[1-9][0-9]{0,6}$ ]] || die "FAKELAN_AVAHI_CACHE_MAX: a number of records, not '$FAKELAN_AVAHI_CACHE_MAX'"
  [[ "${FAKELAN_AVAHI_OBJECTS_MAX:-1}" =~ ^[1-9][0-9]{0,6}$ ]] || die "FAKELAN_AVAHI_OBJECTS_MAX: a number of objects, not '$FAKELAN_AVAHI_OBJECTS_MAX'"
  local interfaces=eth0
  [ ! -f "$(state_dir "$lan")/$host.ifaces" ] || interfaces="eth0,$(paste -sd, "$(state_dir "$lan")/$host.ifaces")"
  cat > "$(state_dir "$lan")/$host.avahi.conf" <<EOF
[server]
host-name=$lan-$host
use-ipv4=${FAKELAN_AVAHI_IPV4:-yes}
use-ipv6=yes
allow-interfaces=$interfaces
ratelimit-interval-usec=1000000
ratelimit-burst=10000
# Sized for fleets (scripts/fleet-bench.sh, which raises both for more than 5,000 nodes): a
# commissionable node brings ten records (PTR, five subtype PTRs, SRV, TXT, A, AAAA), and a
# browser holds a resolver and two address lookups per service, all objects of its client.
cache-entries-max=${FAKELAN_AVAHI_CACHE_MAX:-65536}
objects-per-client-max=${FAKELAN_AVAHI_OBJECTS_MAX:-8192}
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
[reflector]
enable-reflector=no
EOF
}

holder_pid() {
  local file; file="$(state_dir "$1")/$2.holder"
  [ -f "$file" ] || return 1
  local pid; pid="$(cat "$file")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# AVAHI_SERVER_RUNNING (2): the daemon owns its D-Bus name and has registered its host name.
avahi_running() {
  dbus-send --system --print-reply --dest=org.freedesktop.Avahi / org.freedesktop.Avahi.Server.GetState \
    2>/dev/null | grep -q 'int32 2'
}

# Waits (bounded: 60 s, a machine busy with builds and other LANs can be slow) until HOST's
# daemon answers on its D-Bus (want=up) or is gone (want=down).
wait_avahi() {
  local lan="$1" host="$2" want="$3" i
  for i in $(seq 600); do
    if ( cmd_exec "$lan" "$host" -- bash -c "$(declare -f avahi_running); avahi_running" ); then
      [ "$want" = up ] && return 0
    else
      [ "$want" = down ] && return 0
    fi
    sleep 0.1
  done
  die "avahi-daemon on $lan-$host did not come $want within 60 s"
}

cmd_avahi() {
  local lan="$1"; shift
  check_lan "$lan"
  local host dir pid i
  dir="$(state_dir "$lan")"
  for host in "$@"; do
    check_host "$host"
    ns_exists "$lan-$host" || die "no host $host on $lan"
    ! holder_pid "$lan" "$host" >/dev/null || die "$host on $lan already has its daemons"
    write_avahi_conf "$lan" "$host"
    rm -f "$dir/$host.holder"
    # The holder shell mounts private /run/dbus and /run/avahi-daemon, starts the two
    # daemons and then sleeps forever to keep that mount namespace for `exec`. Avahi runs in
    # the foreground (no -D: its exit is seen at once) and is ready when it answers on D-Bus,
    # not after a fixed wait: under load a fixed wait was too short.
    ip netns exec "$lan-$host" unshare -m --propagation private bash -c '
      set -e
      '"$(declare -f avahi_running)"'
      mkdir -p /run/dbus /run/avahi-daemon
      mount -t tmpfs tmpfs /run/dbus
      mount -t tmpfs tmpfs /run/avahi-daemon
      dbus-daemon --system --fork
      # A subshell starts it so that init, not the holder, is its parent and reaps it
      # (`avahi-daemon -k` waits for the process to be gone, zombies included).
      avahi="$( (avahi-daemon -f "$1" </dev/null >&2 & echo $!) )"
      until avahi_running; do
        kill -0 "$avahi" 2>/dev/null || { echo "fakelan: avahi-daemon exited before it ran"; exit 1; }
        sleep 0.05
      done
      echo $$ > "$2.tmp" && mv "$2.tmp" "$2"
      exec sleep infinity
    ' fakelan-holder "$dir/$host.avahi.conf" "$dir/$host.holder" \
      </dev/null >>"$dir/$host.log" 2>&1 &
    pid=$!
    for i in $(seq 1200); do
      [ -f "$dir/$host.holder" ] && break
      kill -0 "$pid" 2>/dev/null || { tail -n 20 "$dir/$host.log" >&2; die "daemons on $lan-$host failed to start"; }
      sleep 0.1
    done
    if ! [ -f "$dir/$host.holder" ]; then
      kill "$pid" 2>/dev/null || true
      tail -n 20 "$dir/$host.log" >&2
      die "daemons on $lan-$host did not start within 120 s"
    fi
  done
}

cmd_exec() {
  local lan="$1" host="$2"; shift 2
  [ "${1:-}" = "--" ] && shift
  [ $# -gt 0 ] || die "exec: no command"
  check_lan "$lan"; check_host "$host"
  ns_exists "$lan-$host" || die "no host $host on $lan"
  local pid addr
  addr="$(host_address "$lan" "$host" || true)"
  export FAKELAN_LAN="$lan" FAKELAN_HOST="$host" FAKELAN_ADDR="$addr"
  # exec: the caller's child process becomes CMD itself (signals reach it directly).
  if pid="$(holder_pid "$lan" "$host")"; then
    exec nsenter -t "$pid" -n -m --wdns="$PWD" -- "$@"
  else
    exec ip netns exec "$lan-$host" "$@"
  fi
}

cmd_down() {
  local lan="$1"
  check_lan "$lan"
  local ns
  # Hosts first (their daemons and commands), then the bridge.
  for ns in $(lan_namespaces "$lan" | grep -vx "$lan-br"); do kill_ns_processes "$ns"; done
  for ns in $(lan_namespaces "$lan"); do
    kill_ns_processes "$ns"
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf "$(state_dir "$lan")"
}

cmd_cleanup() {
  local stale="" prefix="fl"
  while [ $# -gt 0 ]; do
    case "$1" in
      --stale) stale=yes; shift ;;
      *) prefix="$1"; shift ;;
    esac
  done
  [[ "$prefix" =~ ^fl[a-z0-9]*$ ]] || die "cleanup prefix must start with fl"
  local lans lan owner link
  # LANs known by their namespaces or by their state directories.
  lans="$( { ip netns list 2>/dev/null | awk '{print $1}' | grep "^$prefix" | sed 's/-.*//' || true
             ls "$STATE_ROOT" 2>/dev/null | grep "^$prefix" || true; } | sort -u)"
  for lan in $lans; do
    [[ "$lan" =~ ^fl[a-z0-9]{1,10}$ ]] || continue
    if [ -n "$stale" ] && [ -f "$(state_dir "$lan")/owner" ]; then
      owner="$(cat "$(state_dir "$lan")/owner")"
      if [ -n "$owner" ] && kill -0 "$owner" 2>/dev/null; then continue; fi
    fi
    echo "fakelan: removing $lan" >&2
    cmd_down "$lan"
  done
  # Links are never created outside the LAN namespaces, but a crash of an older tool could
  # leave one: remove any root-namespace link with the prefix too.
  if [ -z "$stale" ]; then
    for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep "^$prefix" || true); do
      ip link del "$link" 2>/dev/null || true
    done
  fi
}

cmd_list() {
  local lan
  for lan in $(ls "$STATE_ROOT" 2>/dev/null); do
    echo "$lan owner=$(cat "$(state_dir "$lan")/owner" 2>/dev/null) hosts=$(awk '{printf "%s ", $1}' "$(state_dir "$lan")/hosts" 2>/dev/null)"
  done
}

cmd_run() {
  local lan="fl$$" hosts="a" avahi="" in=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --lan) lan="$2"; shift 2 ;;
      --hosts) hosts="$2"; shift 2 ;;
      --avahi) avahi="$2"; shift 2 ;;
      --in) in="$2"; shift 2 ;;
      --) shift; break ;;
      *) die "run: unknown option $1" ;;
    esac
  done
  [ $# -gt 0 ] || die "run: no command after --"
  [ -n "$in" ] || in="${hosts%% *}"
  [ -n "$avahi" ] || avahi="$in"
  [ "$avahi" = none ] && avahi=""
  # shellcheck disable=SC2086
  check_new_lan "$lan" $hosts
  local child=""
  # Whatever happens from here on (failure, Ctrl-C, SIGTERM), the LAN goes away.
  trap 'rc=$?; trap - EXIT; [ -n "$child" ] && kill "$child" 2>/dev/null; FAKELAN_OWNER=$$ cmd_down "$lan"; exit $rc' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  FAKELAN_OWNER=$$ cmd_up "$lan" $hosts
  # shellcheck disable=SC2086
  [ -z "$avahi" ] || cmd_avahi "$lan" $avahi
  # In the background so that a signal to this script is handled at once (bash defers
  # traps while a foreground child runs).
  cmd_exec "$lan" "$in" -- "$@" &
  child=$!
  local rc=0
  wait "$child" || rc=$?
  child=""
  exit "$rc"
}

verb="${1:-}"
[ -n "$verb" ] || { sed -n '2,/^set -euo/p' "$SELF" | sed '$d' >&2; exit 2; }
shift
need_root
case "$verb" in
  up)
    [ $# -ge 2 ] || die "up LAN HOST..."
    check_new_lan "$@"
    # A failure half way removes what was made.
    trap 'rc=$?; trap - EXIT; [ "$rc" = 0 ] || cmd_down "$UP_LAN"; exit "$rc"' EXIT
    UP_LAN="$1"
    cmd_up "$@" ;;
  join) [ $# -ge 2 ] || die "join LAN HOST..."; cmd_join "$@" ;;
  segment) [ $# -ge 3 ] || die "segment LAN HUB HOST..."; cmd_segment "$@" ;;
  avahi) [ $# -ge 2 ] || die "avahi LAN HOST..."; cmd_avahi "$@" ;;
  avahi-stop)
    [ $# -eq 2 ] || die "avahi-stop LAN HOST"
    ( cmd_exec "$1" "$2" -- avahi-daemon -k )
    wait_avahi "$1" "$2" down ;;
  avahi-start)
    [ $# -eq 2 ] || die "avahi-start LAN HOST"
    ( cmd_exec "$1" "$2" -- avahi-daemon -f "$(state_dir "$1")/$2.avahi.conf" -D )
    wait_avahi "$1" "$2" up ;;
  avahi-pause|avahi-resume)
    [ $# -eq 2 ] || die "$verb LAN HOST"
    signal=STOP; [ "$verb" = avahi-resume ] && signal=CONT
    pids="$(ip netns pids "$1-$2" 2>/dev/null | while read -r p; do
      if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = avahi-daemon ]; then echo "$p"; fi; done)"
    [ -n "$pids" ] || die "no avahi-daemon on $2"
    # shellcheck disable=SC2086
    kill -s "$signal" $pids ;;
  exec) [ $# -ge 3 ] || die "exec LAN HOST -- CMD..."; cmd_exec "$@" ;;
  down) [ $# -eq 1 ] || die "down LAN"; cmd_down "$1" ;;
  cleanup) cmd_cleanup "$@" ;;
  list) cmd_list ;;
  run) cmd_run "$@" ;;
  *) die "unknown verb $verb" ;;
esac

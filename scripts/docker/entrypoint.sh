#!/bin/sh
# Container entrypoint: a D-Bus system bus and an Avahi daemon of the container's own, limited
# to its network interface (the compose network), then the command. MATTERSIM_MDNS=0 skips
# both (the relay needs no mDNS). Nothing here reaches beyond the container's network.
set -eu

if [ "${MATTERSIM_MDNS:-1}" != 0 ]; then
  # The interface of the default route: the compose network's.
  iface="${MATTERSIM_INTERFACE:-$(ip -o route show default 2>/dev/null | awk '{print $5; exit}')}"
  [ -n "$iface" ] || iface=eth0
  mkdir -p /run/dbus /run/avahi-daemon /etc/avahi
  rm -f /run/dbus/pid /run/avahi-daemon/pid
  cat > /etc/avahi/mattersim.conf <<CONF
[server]
host-name=${HOSTNAME:-mattersim}
use-ipv4=yes
use-ipv6=yes
allow-interfaces=$iface
ratelimit-interval-usec=1000000
ratelimit-burst=10000
cache-entries-max=65536
objects-per-client-max=8192
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
[reflector]
enable-reflector=no
CONF
  dbus-daemon --system --fork
  avahi-daemon -f /etc/avahi/mattersim.conf -D
  i=0
  until avahi-daemon -c 2>/dev/null; do
    i=$((i + 1))
    [ "$i" -le 100 ] || { echo "entrypoint: avahi-daemon did not start" >&2; exit 1; }
    sleep 0.1
  done
fi

# exec: the command gets SIGTERM from `docker stop` directly and withdraws its records.
exec "$@"

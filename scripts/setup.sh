#!/usr/bin/env bash
# Installs what the project needs on Debian 12, idempotently: the C libraries the system-library
# targets link (libavahi-client, libcrypto, libqrencode), the Avahi daemon and D-Bus the tests run in private
# network namespaces, and iproute2 for those namespaces; PostgreSQL 15, which the
# relay's tests start on loopback themselves (never as a service; relay-scale.sh adds HAProxy). Swift 6.3 itself must be on PATH.
set -euo pipefail

"$(dirname "$0")/apt-install.sh" pkg-config libavahi-client-dev libssl-dev libqrencode-dev avahi-daemon avahi-utils dbus \
  iproute2 util-linux openssl postgresql-15
# The stock avahi-daemon service would publish on every real interface: never let the package
# start it. Tests start their own daemons inside private network namespaces only.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet avahi-daemon 2>/dev/null; then
  systemctl stop avahi-daemon avahi-daemon.socket 2>/dev/null || true
fi
command -v swift >/dev/null || { echo "setup: swift (6.3) is not on PATH" >&2; exit 1; }

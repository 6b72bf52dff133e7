#!/usr/bin/env bash
# Installs what the project needs on Debian 12, idempotently: the C libraries the system-library
# targets link (libavahi-client, libcrypto), the Avahi daemon and D-Bus the tests run in private
# network namespaces, and iproute2 for those namespaces. Swift 6.3 itself must be on PATH.
set -euo pipefail

packages=(pkg-config libavahi-client-dev libssl-dev avahi-daemon avahi-utils dbus iproute2 util-linux openssl)
missing=()
for pkg in "${packages[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup: missing Debian packages: ${missing[*]} (run as root, or install them)" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}" >&2
  # A policy-rc.d that says 101 keeps the package scripts from starting avahi-daemon on the
  # machine's real interfaces (the network rule); ours is removed again afterwards.
  guard=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    guard=yes
  fi
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  [ -z "$guard" ] || rm -f /usr/sbin/policy-rc.d
fi
# The stock avahi-daemon service would publish on every real interface: never let the package
# start it. Tests start their own daemons inside private network namespaces only.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet avahi-daemon 2>/dev/null; then
  systemctl stop avahi-daemon avahi-daemon.socket 2>/dev/null || true
fi
command -v swift >/dev/null || { echo "setup: swift (6.3) is not on PATH" >&2; exit 1; }

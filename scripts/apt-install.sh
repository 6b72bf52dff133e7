#!/usr/bin/env bash
# apt-install.sh PACKAGE...: installs the Debian packages of the list that are missing, and
# nothing when all are there. A policy-rc.d that says 101 keeps package scripts from starting
# services meanwhile: the stock avahi-daemon would publish on the machine's real interfaces
# (the network rule). Ours is removed again afterwards.
set -euo pipefail
# Installed means "install ok installed": `dpkg -s` also succeeds for a package removed with
# its configuration files left behind.
installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }
missing=()
for pkg in "$@"; do
  installed "$pkg" || missing+=("$pkg")
done
[ "${#missing[@]}" -gt 0 ] || exit 0
if [ "$(id -u)" != 0 ]; then
  echo "apt-install: missing Debian packages: ${missing[*]} (run as root, or install them)" >&2
  exit 1
fi
# Jobs side by side may install at once: one at a time, each looking again once it is its turn.
exec 9>/run/lock/mattersim-apt-install.lock
flock 9
still=()
for pkg in "${missing[@]}"; do installed "$pkg" || still+=("$pkg"); done
[ "${#still[@]}" -gt 0 ] || exit 0
missing=("${still[@]}")
echo "apt-install: installing ${missing[*]}" >&2
guard=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  guard=yes
fi
trap '[ -z "$guard" ] || rm -f /usr/sbin/policy-rc.d' EXIT
apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

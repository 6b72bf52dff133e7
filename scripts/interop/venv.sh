#!/usr/bin/env bash
# venv.sh: makes sure the reference Matter controller can run here, and prints the path of
# its Python virtual environment. Idempotent; the first run installs, later runs only check.
#
#  - Debian packages: the Avahi daemon, D-Bus and iproute2 for the private fake LAN, and
#    libnl, which the controller's native library links;
#  - a virtual environment with the connectedhomeip Python controller as Home Assistant
#    packages it (PyPI home-assistant-chip-core and home-assistant-chip-clusters, pinned).
#
#   INTEROP_VENV   where the environment lives (default ~/.cache/matter-sim/interop-venv)
#   CHIP_VERSION   the controller's version (default below; both packages share it)
set -euo pipefail

VENV="${INTEROP_VENV:-$HOME/.cache/matter-sim/interop-venv}"
CHIP_VERSION="${CHIP_VERSION:-2025.7.0}"

# python3-venv: Debian's python3 has no venv module without it.
venv_package=(); python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || venv_package=(python3-venv)
"$(dirname "${BASH_SOURCE[0]}")/../apt-install.sh" avahi-daemon avahi-utils dbus iproute2 util-linux \
  libnl-3-200 libnl-route-3-200 "${venv_package[@]}" >&2

ready() {
  [ -x "$VENV/bin/python" ] && "$VENV/bin/python" - "$CHIP_VERSION" <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import version
import chip.ChipDeviceCtrl, chip.clusters  # the native library loads and links
assert version("home-assistant-chip-core") == sys.argv[1]
PY
}

if ! ready; then
  echo "interop venv: creating $VENV with home-assistant-chip-core $CHIP_VERSION (about a minute)" >&2
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check \
    "home-assistant-chip-core==$CHIP_VERSION" "home-assistant-chip-clusters==$CHIP_VERSION" >&2
  ready || { echo "interop venv: the controller does not import in $VENV" >&2; exit 1; }
fi
echo "$VENV"

#!/usr/bin/env bash
# venv.sh: makes sure Home Assistant's Matter server (the Open Home Foundation Matter Server,
# PyPI python-matter-server) can run here, and prints the path of its virtual environment.
# Idempotent: the first run installs, later runs only check.
#
# The server needs Python 3.12 or newer; the first of python3.13, python3.12, pyenv's 3.12/3.13
# and python3 that is new enough makes the environment. It pins its own connectedhomeip build
# (home-assistant-chip-core), which the second-admin helper (second_admin.py) uses too.
#
#   OHF_VENV            where the environment lives (default ~/.cache/matter-sim/ohf-venv)
#   OHF_SERVER_VERSION  python-matter-server's version (default below)
set -euo pipefail

VENV="${OHF_VENV:-$HOME/.cache/matter-sim/ohf-venv}"
VERSION="${OHF_SERVER_VERSION:-8.1.2}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

"$HERE/../apt-install.sh" avahi-daemon avahi-utils dbus iproute2 util-linux libnl-3-200 libnl-route-3-200 >&2

ready() {
  [ -x "$VENV/bin/matter-server" ] && "$VENV/bin/python" - "$VERSION" <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import version
import chip.ChipDeviceCtrl, matter_server.server  # the native library loads and links
assert version("python-matter-server") == sys.argv[1]
PY
}

find_python() {
  local candidate
  for candidate in python3.13 python3.12 \
      "$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python 2>/dev/null | tail -n 1)" \
      "$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python 2>/dev/null | tail -n 1)" python3; do
    [ -n "$candidate" ] || continue
    command -v "$candidate" >/dev/null 2>&1 || [ -x "$candidate" ] || continue
    if "$candidate" -c 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  return 1
}

if ! ready; then
  PYTHON="$(find_python)" || {
    echo "ohf venv: python-matter-server needs Python 3.12 or newer; none found (python3.12, python3.13, pyenv)" >&2
    exit 1
  }
  echo "ohf venv: creating $VENV with python-matter-server $VERSION on $("$PYTHON" -V) (about a minute)" >&2
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  "$PYTHON" -m venv "$VENV" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check "python-matter-server[server]==$VERSION" >&2
  ready || { echo "ohf venv: the server does not import in $VENV" >&2; exit 1; }
fi
echo "$VENV"

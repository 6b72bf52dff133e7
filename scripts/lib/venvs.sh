#!/usr/bin/env bash
# venvs.sh NAME: the one maker of the harness's Python environments. Prints the path of
# environment NAME, making it on first use; later runs only check it (it imports what it must,
# at the pinned version). Each lives in ~/.cache/matter-sim/NAME-venv unless its variable says.
#
#   NAME           what it holds (PyPI)                                        variable
#   interop        the reference controller: home-assistant-chip-core and      INTEROP_VENV
#                  -clusters $CHIP_VERSION (default 2025.7.0)
#   ohf            Home Assistant's Matter server: python-matter-server[server] OHF_VENV
#                  $OHF_SERVER_VERSION (default 8.1.2), on Python 3.12 or newer
#   dm-validator   Espressif's data-model validator esp-matter-dm-validator     DMV_VENV
#   dashboard      selenium, for the browser check                             DASHBOARD_VENV
#   soak           matplotlib, for the soak's plot                             SOAK_VENV
#   circuitmatter  the third-party Python device circuitmatter                 CIRCUITMATTER_VENV
#   cert           the reference controller, as interop, with what connectedhomeip's  CERT_VENV
#                  test framework chip.testing and its cases need (mobly, pyasn1, zeroconf, ...)
#                  and its YAML parser matter.yamltests (lark, click, jinja2)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="$HOME/.cache/matter-sim"
name="${1:-}"

CHIP_VERSION="${CHIP_VERSION:-2025.7.0}"
OHF_SERVER_VERSION="${OHF_SERVER_VERSION:-8.1.2}"
PYTHON=python3
DEBS=()
case "$name" in
  interop)
    DIR="${INTEROP_VENV:-$CACHE/interop-venv}"
    # libnl: the controller's native library links it.
    DEBS=(libnl-3-200 libnl-route-3-200)
    REQUIRE=("home-assistant-chip-core==$CHIP_VERSION" "home-assistant-chip-clusters==$CHIP_VERSION")
    CHECK="import chip.ChipDeviceCtrl, chip.clusters
from importlib.metadata import version
assert version('home-assistant-chip-core') == '$CHIP_VERSION'" ;;
  ohf)
    DIR="${OHF_VENV:-$CACHE/ohf-venv}"
    DEBS=(libnl-3-200 libnl-route-3-200)
    REQUIRE=("python-matter-server[server]==$OHF_SERVER_VERSION")
    CHECK="import chip.ChipDeviceCtrl, matter_server.server
from importlib.metadata import version
assert version('python-matter-server') == '$OHF_SERVER_VERSION'"
    # The server needs Python 3.12 or newer: the first of these that is new enough.
    PYTHON=""
    for candidate in python3.13 python3.12 \
        "$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python 2>/dev/null | tail -n 1)" \
        "$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python 2>/dev/null | tail -n 1)" python3; do
      [ -n "$candidate" ] || continue
      command -v "$candidate" >/dev/null 2>&1 || [ -x "$candidate" ] || continue
      if "$candidate" -c 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
        PYTHON="$candidate"; break
      fi
    done ;;
  dm-validator)
    DIR="${DMV_VENV:-$CACHE/dm-validator-venv}"
    REQUIRE=("esp-matter-dm-validator==1.0.5")
    CHECK="import dmv_tool.validators
from importlib.metadata import version
assert version('esp-matter-dm-validator') == '1.0.5'" ;;
  dashboard)
    DIR="${DASHBOARD_VENV:-$CACHE/dashboard-venv}"
    REQUIRE=('selenium>=4.20,<5'); CHECK="import selenium" ;;
  soak)
    DIR="${SOAK_VENV:-$CACHE/soak-venv}"
    REQUIRE=('matplotlib>=3.8,<4'); CHECK="import matplotlib" ;;
  cert)
    DIR="${CERT_VENV:-$CACHE/cert-venv}"
    DEBS=(libnl-3-200 libnl-route-3-200)
    REQUIRE=("home-assistant-chip-core==$CHIP_VERSION" "home-assistant-chip-clusters==$CHIP_VERSION"
      "mobly==1.12.4" "pyasn1==0.6.1" "pyasn1-modules==0.4.1" "zeroconf==0.147.0" "langcodes==3.5.0"
      "nest_asyncio==1.6.0" "lark==1.3.1" "click==8.1.8" "jinja2==3.1.6")
    CHECK="import chip.ChipDeviceCtrl, chip.clusters, mobly, pyasn1_modules, zeroconf, langcodes, nest_asyncio, lark, click, jinja2
from importlib.metadata import version
assert version('home-assistant-chip-core') == '$CHIP_VERSION'" ;;
  circuitmatter)
    DIR="${CIRCUITMATTER_VENV:-$CACHE/circuitmatter-venv}"
    REQUIRE=("circuitmatter==0.4.1"); CHECK="import circuitmatter" ;;
  *) echo "venvs: NAME is one of interop, cert, ohf, dm-validator, dashboard, soak, circuitmatter (not '$name')" >&2; exit 2 ;;
esac

# Jobs side by side may ask for the same environment: one makes it, the others wait for it.
mkdir -p "$(dirname "$DIR")"
exec 9>"$DIR.lock"
flock 9
if [ "${#DEBS[@]}" -gt 0 ]; then "$HERE/../apt-install.sh" "${DEBS[@]}" >&2; fi
if ! { [ -x "$DIR/bin/python" ] && "$DIR/bin/python" -c "$CHECK" >/dev/null 2>&1; }; then
  [ -n "$PYTHON" ] || { echo "venvs: $name needs Python 3.12 or newer; none found (python3.12, python3.13, pyenv)" >&2; exit 1; }
  # python3-venv: Debian's python3 has no venv module without it.
  "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1 || "$HERE/../apt-install.sh" python3-venv >&2
  echo "venvs: creating $DIR (${REQUIRE[*]}) on $("$PYTHON" -V 2>&1)" >&2
  rm -rf "$DIR"; mkdir -p "$(dirname "$DIR")"
  "$PYTHON" -m venv "$DIR" >&2
  "$DIR/bin/pip" install -q --disable-pip-version-check "${REQUIRE[@]}" >&2
  "$DIR/bin/python" -c "$CHECK" >/dev/null 2>&1 || { echo "venvs: $name does not import in $DIR after installing" >&2; exit 1; }
fi
echo "$DIR"

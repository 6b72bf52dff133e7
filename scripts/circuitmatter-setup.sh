#!/usr/bin/env bash
# circuitmatter-setup.sh: a Python venv with the third-party `circuitmatter` device (PyPI),
# for the HomeAPI interop test. Idempotent: does nothing when the venv already imports it.
# Prints the venv's python on stdout.
#   CIRCUITMATTER_VENV  where the venv lives (default ~/.cache/matter-sim/circuitmatter-venv)
set -euo pipefail
VENV="${CIRCUITMATTER_VENV:-$HOME/.cache/matter-sim/circuitmatter-venv}"
PY="$VENV/bin/python"
if [ -x "$PY" ] && "$PY" -c 'import circuitmatter' >/dev/null 2>&1; then
  echo "$PY"; exit 0
fi
command -v avahi-publish-service >/dev/null || { echo "circuitmatter-setup: needs avahi-utils (apt-get install avahi-utils)" >&2; exit 2; }
mkdir -p "$(dirname "$VENV")"
python3 -m venv "$VENV" >&2
"$PY" -m pip install --quiet --upgrade pip >&2 || true
"$PY" -m pip install --quiet "circuitmatter==0.4.1" >&2
"$PY" -c 'import circuitmatter' >&2
echo "$PY"

#!/usr/bin/env bash
# Runs a device command, and runs it again each time it exits (at most 3 runs), writing the
# running command's PID to $INTEROP_DEVICE_DIR/device.pid so that an interop checker can
# restart the device process (restart_check.py).
set -u
pidfile="${INTEROP_DEVICE_DIR:-.}/device.pid"
for run in 1 2 3; do
  "$@" &
  echo $! > "$pidfile"
  wait $!
  echo "restarting-device: run $run ended ($?)" >&2
done

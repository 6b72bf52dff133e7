#!/usr/bin/env bash
# device-supervisor.sh: runs a device command (one node, or a whole home) in a process group
# of its own and writes the group's ID to $DIR/device.pgid, so a checker can cut the power
# (SIGKILL to the whole group: no clean shutdown, nothing flushed). When the command ends, the
# supervisor waits for $DIR/power-on, removes it and starts the command again in the same
# directory, so the node comes back with its stored state. $DIR/stop (or SIGTERM) ends it.
#
#   device-supervisor.sh DIR -- COMMAND...
set -u
dir="$1"; shift; [ "${1:-}" = "--" ] && shift
child=""
trap '[ -z "$child" ] || kill -TERM -- "-$child" 2>/dev/null; exit 0' TERM INT
run=0
while [ ! -e "$dir/stop" ]; do
  run=$((run + 1))
  setsid "$@" &
  child=$!
  echo "$child" >"$dir/device.pgid"
  wait "$child"
  echo "device-supervisor: run $run ended ($?)" >&2
  rm -f "$dir/device.pgid"
  child=""
  # Powered off: wait (bounded, 30 minutes) for the checker to power the device on again.
  for _ in $(seq 18000); do
    [ -e "$dir/power-on" ] || [ -e "$dir/stop" ] && break
    sleep 0.1
  done
  [ -e "$dir/power-on" ] || break
  rm -f "$dir/power-on"
done

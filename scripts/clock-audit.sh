#!/usr/bin/env bash
# Where Sources/ and Tests/ read or sleep on real time (ContinuousClock, Task.sleep) rather
# than on an injected MatterClock (issue #20). Each such place says why, in a comment on its
# line or earlier in the same block (the comment covers the rest of the block it is in):
#     // real time: KIND: why
# KIND is one of
#     clock      the real clock's own implementation (SystemClock, AutomationClock's real form)
#     external   waiting on another process or daemon (a child process, Avahi, a socket peer)
#     benchmark  measuring how long something takes, for a person to read
#     user       a wait a person asked for (a CLI duration)
#     watchdog   a test's bound on a broken run (fails it instead of hanging), never a pace
# Prints every place without a reason, then the count of each kind.
#   scripts/clock-audit.sh            report
#   scripts/clock-audit.sh --strict   also exit 1 when a place gives no reason
. "$(dirname "$0")/lib/common.sh"
mapfile -t files < <(grep -rlE 'ContinuousClock|Task\.sleep' Sources Tests --include='*.swift' | sort)
awk '
  FNR == 1 { depth = 0; tagDepth = -1; tagKind = "" }
  {
    if (tagDepth >= 0 && depth < tagDepth) tagDepth = -1
    if (match($0, /real time: (clock|external|benchmark|user|watchdog):/)) {
      tagDepth = depth
      tagKind = substr($0, RSTART + 11, RLENGTH - 12)
    }
    if ($0 ~ /ContinuousClock|Task\.sleep/ && $0 !~ /^[[:space:]]*\/\//) {
      if (tagDepth >= 0) { kinds[tagKind]++ } else { printf "untagged: %s:%d: %s\n", FILENAME, FNR, $0; untagged++ }
    }
    line = $0
    sub(/\/\/.*/, "", line)
    depth += gsub(/{/, "{", line) - gsub(/}/, "}", line)
  }
  END {
    total = untagged
    for (k in kinds) total += kinds[k]
    printf "clock-audit: %d places", total
    n = split("clock external benchmark user watchdog", order, " ")
    for (i = 1; i <= n; i++) printf ", %s %d", order[i], kinds[order[i]] + 0
    printf ", untagged %d\n", untagged + 0
    if (untagged > 0 && strict) exit 1
  }
' strict="$([[ "${1:-}" == "--strict" ]] && echo 1 || echo 0)" "${files[@]}"

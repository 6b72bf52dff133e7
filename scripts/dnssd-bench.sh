#!/usr/bin/env bash
# dnssd-bench.sh: how long until N services published by one process on one host of the
# fake LAN are all resolved (SRV, TXT, addresses) by a browser on another host.
#
#   scripts/dnssd-bench.sh [COUNT] [PROBE]
#
# COUNT defaults to 200; PROBE to the dnssd-probe built under .build (release if there is
# one, else debug). The clock starts when the publishing process starts publishing and
# stops when the browser has resolved the COUNT-th service; both run on the same machine
# (separate network namespaces), so their wall clocks agree. Needs root. Exits non-zero
# when not every service was resolved within 60 seconds.
. "$(dirname "$0")/lib/common.sh"
unblock_signals bash "$SCRIPT_PATH" "$@"

HERE="$ROOT/scripts"
COUNT="${1:-200}"
PROBE="${2:-}"
if [ -z "$PROBE" ]; then
  for candidate in "$HERE/../.build/release/dnssd-probe" "$HERE/../.build/debug/dnssd-probe"; do
    if [ -x "$candidate" ]; then PROBE="$candidate"; break; fi
  done
fi
[ -n "$PROBE" ] && [ -x "$PROBE" ] || { echo "dnssd-bench: no dnssd-probe (swift build --product dnssd-probe)" >&2; exit 2; }
need_root

LAN="flb$$"
WORK="$(mktemp -d /tmp/dnssd-bench.XXXXXX)"
cleanup() {
  set +e
  FAKELAN_OWNER=$$ "$FAKELAN" down "$LAN"
  rm -rf "$WORK"
}
on_exit cleanup

export FAKELAN_OWNER=$$
"$FAKELAN" up "$LAN" pub brw
"$FAKELAN" avahi "$LAN" pub brw

# The browser first, so that it sees every announcement.
"$FAKELAN" exec "$LAN" brw -- "$PROBE" browse --type _matterc._udp --until-count "$COUNT" --timeout 60 \
  >"$WORK/browse.jsonl" 2>"$WORK/browse.log" &
BROWSER=$!
for _ in $(seq 100); do grep -q '"event":"browsing"' "$WORK/browse.jsonl" 2>/dev/null && break; sleep 0.1; done

"$FAKELAN" exec "$LAN" pub -- "$PROBE" publish-commissionable --count "$COUNT" --discriminator 0 \
  --vendor 65521 --product 32768 --device-type 256 --duration 90 \
  >"$WORK/publish.jsonl" 2>"$WORK/publish.log" &

rc=0
wait "$BROWSER" || rc=$?

field() { sed -n "s/.*\"event\":\"$2\".*\"t\":\([0-9]*\).*/\1/p" "$1" | head -n 1; }
started="$(field "$WORK/publish.jsonl" publishing)"
ready="$(field "$WORK/publish.jsonl" ready)"
complete="$(field "$WORK/browse.jsonl" complete)"
resolved="$(grep -c '"event":"added"' "$WORK/browse.jsonl" || true)"

if [ "$rc" != 0 ] || [ -z "$complete" ] || [ -z "$started" ]; then
  echo "dnssd-bench: FAILED: $resolved of $COUNT services resolved (browser exit $rc)" >&2
  tail -n 5 "$WORK/publish.log" "$WORK/browse.log" >&2
  exit 1
fi
echo "dnssd-bench: $COUNT services published by one process on host pub, resolved on host brw"
[ -n "$ready" ] && echo "dnssd-bench: all established by the publisher after $((ready - started)) ms"
echo "dnssd-bench: all $COUNT resolved (host, port, addresses, TXT) after $((complete - started)) ms"

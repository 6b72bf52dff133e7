#!/usr/bin/env bash
# slow-tests.sh: the tests too slow for the test command (each waits out a real timeout of
# the system's, such as D-Bus's 25 s), run on their own. Needs root (fake LANs).
#
#   scripts/slow-tests.sh [swift test arguments...]
. "$(dirname "$0")/lib/common.sh"
need_root
"$ROOT/scripts/setup.sh"
cd "$ROOT"
swift build --build-tests
MATTERSIM_SLOW_TESTS=1 exec swift test --skip-build --no-parallel --filter 'AdvertiseRetryFakeLANTests' "$@"

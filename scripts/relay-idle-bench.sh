#!/usr/bin/env bash
# relay-idle-bench.sh: do idle connections slow other homes' commands? (issue #17 item 5)
# One home's command latency (p50/p99) through a matter-relay server on loopback, without,
# then with IDLE authenticated but idle device connections of other homes.
#
#   scripts/relay-idle-bench.sh [IDLE] [SECONDS] [BINARY]
#
# Defaults: 2000 idle connections, 20 s of load per measurement. The measured home has 10
# devices and one controller sending 100 Toggle commands/s (within the relay's default
# frame-rate limits, which stay on). The idle devices are registered through the admin API
# in homes of 100 and connect with real relay clients that only answer pings. It is
# scripts/relay-bench.sh with RELAY_BENCH_IDLE set; everything stays on 127.0.0.1.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RELAY_BENCH_IDLE="${1:-2000}" exec "$HERE/relay-bench.sh" 10 100 "${2:-20}" "${3:-}"

#!/usr/bin/env bash
# The project's test command: installs what it needs, builds, and runs every test suite.
# Suites run one after another: several start real daemons in network namespaces or time
# real UDP exchanges, and on a 2-core machine parallel suites starve each other.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's time, so a slow one shows in the CI log.
step() {
  local began=$SECONDS
  "$@"
  echo "test.sh: $* took $((SECONDS - began)) s" >&2
}
step scripts/setup.sh
step swift build --build-tests
step swift test --skip-build --no-parallel "$@"
# HomeAPI's generated traits and device types are what the data model says.
step python3 scripts/matter-codegen.py --check
# The guides' own code, byte for byte, builds as an app package against GoogleHomeSDK.
step python3 scripts/check-guide-code.py
step swift build --package-path Examples/GuideCode
# The web dashboard in Debian's chromium (headless, selenium) against the demo home on a fake LAN.
step scripts/dashboard-check.sh
# Scenarios: the two shipped ones pass, a wrong expectation fails (exit 1, JUnit failure).
step scripts/scenario-check.sh
# Power cuts (SIGKILL) during commissioning and writes, and broken state files (#17 item 6).
step scripts/durability.sh 10
# A flood of PBKDFParamRequests: memory stays flat and a real commissioner gets in right after.
step scripts/pase-flood.sh 5000 2
# The cloud relay SIGKILLed mid-traffic and restarted on its database: time back to full service.
step scripts/relay-restart.sh 2
step scripts/lossy-bench.sh 20 200
step scripts/soak.sh 3 50
# Coverage-guided fuzzing (libFuzzer + address sanitizer) of every outside-input decoder, 30 s each.
step scripts/fuzz.sh 30
# The reference Matter controller commissions and drives the simulated devices.
step scripts/interop.sh
# Data-model conformance: Espressif's validator on the reference controller's wildcard read of
# every shipped profile, the demo home's devices and the schema's variants.
step scripts/dm-conformance.sh
# Home Assistant's Matter server commissions, drives, power-cycles and shares every shipped
# device profile, then the demo home in one process and in one process per device.
step scripts/ohf-check.sh
step scripts/ohf-check.sh --home DeviceProfiles/homes/demo-home.yaml
step scripts/ohf-check.sh --home DeviceProfiles/homes/demo-home.yaml --process-per-device
# docker-compose.yml for real: the compose home (and two small fleet replicas) in containers.
step scripts/compose-test.sh --fleet 2 5

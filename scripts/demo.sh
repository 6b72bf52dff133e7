#!/usr/bin/env bash
# The project's main job: a fake home from the embedded demo profile.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build --product matter-sim
exec .build/debug/matter-sim describe DeviceProfiles/homes/demo-home.yaml "$@"

#!/bin/sh
# A fleet replica (docker-compose's `fleet` profile, deploy/fleet-stack.yml): a home of
# FLEET_SIZE generated FLEET_PROFILE devices with serial numbers of its own (from its host
# name), whose nodes' onboarding payloads and address it reports to the relay with the fleet's
# device credential (matter-sim report-onboarding; the relay and credential from the `cloud:`
# block relay-init.sh left in /run/mattersim-relay), then runs it. Controllers read the reports
# back with the home's token: `homectl commission --fleet`.
set -eu
id="$(hostname)"
until [ -s /run/mattersim-relay/cloud.yaml ]; do sleep 0.2; done
relay="$(sed -n 's/^  relay: //p' /run/mattersim-relay/cloud.yaml)"
# This replica's IPv4 address on its network (the one its host name resolves to).
host="${FLEET_HOST:-$(getent ahostsv4 "$id" | awk '{ print $1; exit }')}"
mkdir -p /var/lib/mattersim/fleet
matter-sim fleet "/opt/mattersim/DeviceProfiles/devices/${FLEET_PROFILE:-on-off-plug}.yaml" --count "${FLEET_SIZE:-10}" \
  --name "Fleet $id" --serial-prefix "F$id" --output /var/lib/mattersim/fleet.yaml
matter-sim report-onboarding /var/lib/mattersim/fleet.yaml --relay "$relay" --credential-file /run/mattersim-relay/cloud.yaml \
  --source "$id" --host "$host"
exec matter-sim home /var/lib/mattersim/fleet.yaml --state-root /var/lib/mattersim/fleet

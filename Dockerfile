# MatterSim in containers: one image with matter-sim, homectl, matter-relay and dnssd-probe.
# docker-compose.yml runs a relay, several devices and a controller from it, each container
# with its own D-Bus and Avahi daemon on its own interface (scripts/docker/entrypoint.sh).
#
#   docker-compose build && docker-compose up
#
# The build stage needs Swift 6.3 on Debian 12 (bookworm); override SWIFT_IMAGE to use
# another image with that toolchain.
ARG SWIFT_IMAGE=swift:6.3-bookworm

# What every runtime image holds: Avahi and D-Bus for the node's own mDNS, the C libraries the
# binaries link, and PostgreSQL and HAProxy for docker-compose's cloud profile. (Built offline from a stand-in base image that already has these packages,
# apt-get update only warns and the install finds nothing to do: scripts/compose-test.sh.)
FROM debian:bookworm-slim AS runtime
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      avahi-daemon avahi-utils dbus libavahi-client3 libssl3 libqrencode4 libsqlite3-0 iproute2 ca-certificates \
      postgresql-15 haproxy \
 && rm -rf /var/lib/apt/lists/*
COPY DeviceProfiles /opt/mattersim/DeviceProfiles
COPY scripts/docker/entrypoint.sh /usr/local/bin/mattersim-entrypoint
COPY scripts/docker/relay-init.sh scripts/docker/fleet-replica.sh scripts/docker/postgres-init.sh scripts/docker/haproxy.cfg /opt/mattersim/
WORKDIR /var/lib/mattersim
ENTRYPOINT ["/usr/local/bin/mattersim-entrypoint"]
CMD ["matter-sim", "--help"]

# `docker build --target prebuilt`: binaries the test command already built on this machine,
# with the Swift runtime libraries they link, staged under .build/docker-prebuilt by
# scripts/compose-test.sh (so the compose test does not compile the package a second time).
# It comes before the build stage: a builder without BuildKit stops at the target and never
# needs the Swift image.
FROM runtime AS prebuilt
COPY .build/docker-prebuilt/ /

FROM ${SWIFT_IMAGE} AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      pkg-config libavahi-client-dev libssl-dev libqrencode-dev libsqlite3-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
# Package.swift names the test targets too: their folders must exist.
COPY Tests ./Tests
# One product per `swift build` (given several --product options it builds only the last).
RUN set -e; mkdir -p /out; bin="$(swift build -c release --show-bin-path)"; \
    for p in matter-sim homectl matter-relay dnssd-probe; do \
      swift build -c release --static-swift-stdlib --product "$p"; cp "$bin/$p" /out/; \
    done; \
    for r in "$bin"/*.resources; do [ ! -e "$r" ] || cp -r "$r" /out/; done

# The default target: binaries compiled in the build stage above.
FROM runtime
COPY --from=build /out/ /usr/local/bin/

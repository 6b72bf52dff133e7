# MatterSim in containers: one image with matter-sim, homectl, matter-relay and dnssd-probe.
# docker-compose.yml runs a relay, several devices and a controller from it, each container
# with its own D-Bus and Avahi daemon on its own interface (scripts/docker/entrypoint.sh).
#
#   docker compose build && docker compose up
#
# The build stage needs Swift 6.3 on Debian 12 (bookworm); override SWIFT_IMAGE to use
# another image with that toolchain.
ARG SWIFT_IMAGE=swift:6.3-bookworm

FROM ${SWIFT_IMAGE} AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      pkg-config libavahi-client-dev libssl-dev libsqlite3-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
# Package.swift names the test targets too: their folders must exist.
COPY Tests ./Tests
RUN swift build -c release --static-swift-stdlib \
      --product matter-sim --product homectl --product matter-relay --product dnssd-probe \
 && mkdir -p /out \
 && for p in matter-sim homectl matter-relay dnssd-probe; do cp "$(swift build -c release --show-bin-path)/$p" /out/; done \
 && cp -r "$(swift build -c release --show-bin-path)"/*.resources /out/ 2>/dev/null || true

FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      avahi-daemon avahi-utils dbus libavahi-client3 libssl3 libsqlite3-0 iproute2 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/ /usr/local/bin/
COPY DeviceProfiles /opt/mattersim/DeviceProfiles
COPY scripts/docker/entrypoint.sh /usr/local/bin/mattersim-entrypoint
WORKDIR /var/lib/mattersim
ENTRYPOINT ["/usr/local/bin/mattersim-entrypoint"]
CMD ["matter-sim", "--help"]

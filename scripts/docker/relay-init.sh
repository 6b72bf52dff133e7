#!/bin/sh
# The compose relay's start (docker-compose.yml): makes its secrets on the first start, keeps
# them across restarts, then serves. None is written in the compose file or passed on a
# command line; each is a file readable by root only (umask 077).
#
# * admin token: /var/lib/mattersim/admin-token (the relay's own volume), 43 random characters,
#   or $MATTER_RELAY_ADMIN_TOKEN if set (the relay refuses a weak one);
# * home token: /run/mattersim/home-token (the volume only the controller shares);
# * each device of $RELAY_DEVICES ("name=deviceID ..."): a credential of its own, registered
#   under its device ID, as a `cloud:` block in /run/mattersim-devices/NAME/cloud.yaml (the
#   volume only that device shares). A credential connects that one device and nothing else:
#   it cannot act as a controller or register devices.
#
# RELAY_CLOUD=1 (docker-compose's cloud profile): the registrations live in PostgreSQL and the
# devices are sent to the balancer; every instance runs this, and the first one through the lock
# (in the relay-data volume they share) makes the secrets the others then find.
set -eu
umask 077
home="Compose Home"
if [ -n "${RELAY_CLOUD:-}" ]; then
  db="postgres://relay@postgres:5432/postgres?sslmode=disable"
  relay_url="${RELAY_URL:-ws://balancer:8080}"
  i=0
  until matter-relay home list --database "$db" >/dev/null 2>&1; do  # PostgreSQL still starting
    i=$((i + 1))
    [ "$i" -le 120 ] || { echo "relay-init: PostgreSQL not reached in 60 s" >&2; exit 1; }
    sleep 0.5
  done
  exec 9>/var/lib/mattersim/init.lock
  flock 9
else
  db=/var/lib/mattersim/relay.sqlite
  relay_url="${RELAY_URL:-ws://relay:8080}"
fi

# write FILE: stdin into FILE, whole or not at all.
write() { cat > "$1.tmp" && mv "$1.tmp" "$1"; }

if [ -z "${MATTER_RELAY_ADMIN_TOKEN:-}" ] && [ ! -s /var/lib/mattersim/admin-token ]; then
  tr -dc 'A-Za-z0-9' < /dev/urandom | head -c 43 | write /var/lib/mattersim/admin-token
fi
if [ ! -s /run/mattersim/home-token ]; then
  # A new home, or a new token for it (a home-token volume removed on its own).
  if matter-relay home list --database "$db" | grep -q "  $home  "; then
    matter-relay home rotate-token "$home" --database "$db"
  else
    matter-relay home add "$home" --database "$db"
  fi | sed -n 's/^token //p' | write /run/mattersim/home-token
fi
for entry in ${RELAY_DEVICES:-}; do
  name="${entry%%=*}"; id="${entry#*=}"
  file="/run/mattersim-devices/$name/cloud.yaml"
  [ ! -s "$file" ] || continue
  mkdir -p "/run/mattersim-devices/$name"
  credential="$(matter-relay device add --home "$home" --database "$db" "$id" | sed -n 's/^credential //p')"
  [ -n "$credential" ] || { echo "relay-init: no credential for $name ($id)" >&2; exit 1; }
  printf 'cloud:\n  relay: %s\n  credential: %s\n' "$relay_url" "$credential" | write "$file"
done

[ -z "${RELAY_CLOUD:-}" ] || flock -u 9
if [ -n "${MATTER_RELAY_ADMIN_TOKEN:-}" ]; then
  exec matter-relay serve --host 0.0.0.0 --port 8080 --database "$db"
fi
exec matter-relay serve --host 0.0.0.0 --port 8080 --database "$db" --admin-token-file /var/lib/mattersim/admin-token

#!/bin/sh
# docker-compose's `postgres` (the cloud profile): Debian's PostgreSQL 15 as the relays'
# shared store. The data directory is made on the first start (initdb, superuser `relay`);
# the server listens on the container's networks, of which docker-compose.yml gives it only
# `cloud-db`, an internal network the relays alone share: hence trust authentication there
# and no password to hand around. With POSTGRES_PASSWORD_FILE (deploy/kubernetes.yaml, from a
# Secret) the superuser gets that password and every connection over the network must give it.
set -eu
bin=/usr/lib/postgresql/15/bin
data=/var/lib/postgresql/data
mkdir -p "$data" /run/postgresql
chown postgres "$data" /run/postgresql
chmod 700 "$data"
if [ ! -s "$data/PG_VERSION" ]; then
  if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then
    install -o postgres -m 600 "$POSTGRES_PASSWORD_FILE" /run/postgresql/pwfile
    runuser -u postgres -- "$bin/initdb" -D "$data" -U relay --pwfile=/run/postgresql/pwfile --auth-local=trust \
      --auth-host=scram-sha-256 -E UTF8 --no-instructions >/dev/null
    rm -f /run/postgresql/pwfile
    echo "host all all 0.0.0.0/0 scram-sha-256" >> "$data/pg_hba.conf"
  else
    runuser -u postgres -- "$bin/initdb" -D "$data" -U relay --auth-local=trust --auth-host=trust -E UTF8 --no-instructions >/dev/null
    echo "host all all 0.0.0.0/0 trust" >> "$data/pg_hba.conf"
  fi
fi
# exec: `docker stop` reaches the server itself (a fast shutdown).
exec runuser -u postgres -- "$bin/postgres" -D "$data" -c listen_addresses='*' -c unix_socket_directories=/run/postgresql \
  -c max_connections=100

# scripts/lib/postgres.sh: a throwaway PostgreSQL 15 server for a script, on loopback only.
# Source it after common.sh:
#
#     . "$ROOT/scripts/lib/postgres.sh"
#     start_postgres DIR        (DIR's parents passable by the postgres user) initdb in DIR/data, postgres on 127.0.0.1 on a free port with
#                               its Unix socket in DIR; stopped (immediate) when the script
#                               ends. Sets PG_PORT and PG_URL (superuser relay, database postgres).
# As root the server runs as the `postgres` user (it refuses root). Needs Debian's postgresql-15.
PG_BIN=/usr/lib/postgresql/15/bin

# A TCP port on 127.0.0.1 that nothing listens on now.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }

_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

start_postgres() {
  local dir="$1" tries
  [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ] || die "PostgreSQL 15 is missing in $PG_BIN (scripts/setup.sh installs postgresql-15)"
  mkdir -p "$dir"
  [ "$(id -u)" != 0 ] || chown postgres "$dir"
  chmod 700 "$dir"
  _pg "$PG_BIN/initdb" -D "$dir/data" -U relay --auth=trust -E UTF8 --no-sync --no-instructions >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; die "initdb failed"; }
  for tries in 1 2 3; do  # a port free now may be taken before the server binds it
    PG_PORT="$(free_port)"
    if _pg "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
         -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $dir -c fsync=off -c max_connections=200" start >/dev/null; then
      on_exit "_pg '$PG_BIN/pg_ctl' -D '$dir/data' -m immediate -w stop >/dev/null 2>&1"
      PG_URL="postgres://relay@127.0.0.1:$PG_PORT/postgres?sslmode=disable"
      return 0
    fi
  done
  cat "$dir/server.log" >&2
  die "postgres did not start"
}

#!/bin/sh
# Like the official image's entrypoint, for what the harness uses: on first start, initdb with POSTGRES_USER and
# POSTGRES_PASSWORD (scram-sha-256 over TCP), create POSTGRES_DB, listen on every address; then run the server
# as the postgres user in the foreground.
set -eu
if [ "${1:-}" = postgres ] && [ "$(id -u)" = 0 ]; then
  user=${POSTGRES_USER:-postgres}
  db=${POSTGRES_DB:-$user}
  [ -n "${POSTGRES_PASSWORD:-}" ] || { echo "POSTGRES_PASSWORD is required" >&2; exit 1; }
  mkdir -p "$PGDATA" /var/run/postgresql
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pw=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pw"
    chown postgres "$pw"
    setpriv --reuid=postgres --regid=postgres --init-groups \
      initdb -D "$PGDATA" --username="$user" --pwfile="$pw" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f "$pw"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
    if [ "$db" != postgres ]; then
      echo "CREATE DATABASE \"$db\" OWNER \"$user\";" | setpriv --reuid=postgres --regid=postgres --init-groups \
        postgres --single -D "$PGDATA" -j postgres >/dev/null
    fi
  fi
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$@"
fi
exec "$@"

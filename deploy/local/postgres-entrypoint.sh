#!/bin/sh
# The official postgres image's entrypoint in brief: a new data directory is initialised with
# POSTGRES_USER (default postgres) and POSTGRES_PASSWORD, POSTGRES_DB is created, and
# PostgreSQL then runs in the foreground, listening on every address with passwords required.
set -eu
# `command: ["postgres", "-c", ...]`, as the official image takes it.
[ "${1:-}" = postgres ] && shift
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
user="${POSTGRES_USER:-postgres}"
db="${POSTGRES_DB:-$user}"
bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pwfile="$(mktemp)"
    printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
    "$bin/initdb" -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth=scram-sha-256 >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    "$bin/pg_ctl" -D "$PGDATA" -w -o "-c listen_addresses='' -k /run/postgresql" start >/dev/null
    if [ "$db" != postgres ]; then
        PGPASSWORD="$POSTGRES_PASSWORD" "$bin/psql" -h /run/postgresql -U "$user" -d postgres -qc "CREATE DATABASE \"$db\""
    fi
    "$bin/pg_ctl" -D "$PGDATA" -w stop >/dev/null
fi
exec "$bin/postgres" -D "$PGDATA" -c listen_addresses='*' -k /run/postgresql "$@"

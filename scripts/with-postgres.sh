#!/usr/bin/env bash
# Usage: scripts/with-postgres.sh CMD [ARGS...]
# Starts a throwaway PostgreSQL 15 (private port, unix socket and data in a temp dir, fsync off),
# exports TRIFACTOR_TEST_POSTGRES_URL=postgresql://postgres@127.0.0.1:PORT/postgres, runs CMD,
# then stops the server and removes the dir. Exits with CMD's status.
# Installs Debian's `postgresql` when missing. Works as root (runs the server as `postgres`) or as a user.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }

PGBIN=/usr/lib/postgresql/15/bin
if [ ! -x "$PGBIN/initdb" ]; then
    echo "with-postgres: installing postgresql" >&2
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >&2
fi

DIR=$(mktemp -d "${TMPDIR:-/tmp}/trifactor-pg.XXXXXX")
if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$DIR"
    as_pg() { runuser -u postgres -- "$@"; }
else
    as_pg() { "$@"; }
fi

cleanup() {
    as_pg "$PGBIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT=54329
while port_busy "$PORT"; do PORT=$((PORT + 1)); done

as_pg "$PGBIN/initdb" -D "$DIR/data" -U postgres -A trust -E UTF8 --no-sync >"$DIR/initdb.log" 2>&1 \
    || { cat "$DIR/initdb.log" >&2; exit 1; }
as_pg "$PGBIN/pg_ctl" -D "$DIR/data" -l "$DIR/log" -w -t 30 \
    -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
    start >/dev/null || { cat "$DIR/log" >&2; exit 1; }

export TRIFACTOR_TEST_POSTGRES_URL="postgresql://postgres@127.0.0.1:$PORT/postgres"
echo "with-postgres: PostgreSQL on port $PORT ($TRIFACTOR_TEST_POSTGRES_URL)" >&2
set +e
"$@"
STATUS=$?
set -e
exit "$STATUS"

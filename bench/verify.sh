#!/usr/bin/env bash
# /v2/verify start + check on SQLite and on PostgreSQL in one run (about 2 minutes), as in
# bench/topologies.sh (load.py verify: 16 clients, 2,000 test numbers, limits open), with:
#   - each load's CPU seconds: trifactord, PostgreSQL (its postmaster and backends), the machine;
#   - the statements PostgreSQL runs for 50 start + check pairs one after another (log_statement=all);
#   - the same statements of one pair replayed by pgbench (prepared, 4 connections: trifactord's pool),
#     with no trifactord in the loop: what the database alone gives on this machine.
# Prints one line per measurement and the ratios PostgreSQL / SQLite of each round.
# Runs under scripts/with-postgres.sh. Knobs: TRIFACTORD, BENCH_DURATION (10), BENCH_ROUNDS (2), BENCH_KEEP=1.
set -euo pipefail
# Throwaway databases: every trifactord command here may migrate them (as serve does on SQLite).
export TRIFACTOR_MIGRATE_ON_START=always
cd "$(dirname "$0")/.."
[ -n "${TRIFACTOR_TEST_POSTGRES_URL:-}" ] || exec scripts/with-postgres.sh "$0" "$@"
TRIFACTORD=${TRIFACTORD:-.build/release/trifactord}
DUR=${BENCH_DURATION:-10}
ROUNDS=${BENCH_ROUNDS:-2}
die() { echo "bench: $*" >&2; exit 1; }
[ -x "$TRIFACTORD" ] || die "no $TRIFACTORD (swift build -c release --product trifactord)"
TMP=$(mktemp -d /tmp/trifactor-verify.XXXXXX)
PIDS=()
cleanup() {
    kill "${PIDS[@]}" 2>/dev/null || true
    wait 2>/dev/null || true
    if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "bench: outputs kept in $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PGBIN=/usr/lib/postgresql/15/bin
PGPORT=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.urlparse(sys.argv[1]).port)' "$TRIFACTOR_TEST_POSTGRES_URL")
psql_() { "$PGBIN/psql" -h 127.0.0.1 -p "$PGPORT" -U postgres -Atq "$@"; }
PGDATA_DIR=$(psql_ -c 'SHOW data_directory')
POSTMASTER=$(head -1 "$PGDATA_DIR/postmaster.pid")
PGLOG="$(dirname "$PGDATA_DIR")/log"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_http() { for _ in $(seq 200); do [ "$(curl -s -o /dev/null -w '%{http_code}' "$1" || true)" = 200 ] && return 0; sleep 0.1; done; return 1; }
cpu() { python3 bench/oidc/cpu.py "$@"; }
machine() { awk -v hz="$(getconf CLK_TCK)" '/^cpu /{printf "%.2f %.2f\n", ($2+$3+$4+$7+$8+$9)/hz, ($2+$3+$4+$5+$6+$7+$8+$9)/hz}' /proc/stat; }
NUMBERS=$(python3 -c "print(','.join(f'4474001{n:05d}=1234' for n in range(2000)))")
OPEN=(--verify-ip-burst 1000000 --verify-ip-rate 1000000 --verify-key-burst 1000000 --verify-key-rate 1000000
      --verify-country-burst 1000000 --verify-country-rate 1000000 --verify-budget-prefix 1000000/h,10000000/d
      --verify-budget-country 1000000/h,10000000/d --verify-budget-total 1000000/h,10000000/d --verify-conversion 0.2,100000000,24)
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "PostgreSQL: $(psql_ -c "SELECT string_agg(name || '=' || setting, ' ') FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes')")"

measure() {  # DB ROUND: a fresh instance, 2 s warm-up, then DUR s
    local db=$1 r=$2 url dbpid=""
    if [ "$db" = sqlite ]; then
        url="sqlite:$TMP/$db-$r.db"
    else
        psql_ -c "CREATE DATABASE v$r"
        url="postgresql://postgres@127.0.0.1:$PGPORT/v$r"
        dbpid=$POSTMASTER
    fi
    local port; port=$(free_port)
    local base="http://127.0.0.1:$port"
    TRIFACTOR_TEST_NUMBERS=$NUMBERS "$TRIFACTORD" serve --migrate-on-start always --dev --listen "127.0.0.1:$port" --database-url "$url" \
        --key-file "$TMP/trifactor.key" "${OPEN[@]}" >/dev/null 2>"$TMP/$db-$r.log" &
    local pid=$!
    PIDS+=("$pid")
    wait_http "$base/ready" || { tail "$TMP/$db-$r.log" >&2; die "trifactord ($db) did not start"; }
    local key k s
    key=$("$TRIFACTORD" keys create --name bench --json --database-url "$url" --key-file "$TMP/trifactor.key")
    k=$(echo "$key" | python3 -c 'import json,sys; print(json.load(sys.stdin)["api_key"])')
    s=$(echo "$key" | python3 -c 'import json,sys; print(json.load(sys.stdin)["api_secret"])')
    python3 bench/load.py verify "$base" "$TMP/$db-$r-warmup.txt" --threads 16 --seconds 2 --numbers 2000 --key "$k" --secret "$s"
    local s0 d0 m0
    s0=$(cpu "$pid"); d0=$(cpu $dbpid); m0=$(machine)
    python3 bench/load.py verify "$base" "$TMP/$db-$r.txt" --threads 16 --seconds "$DUR" --numbers 2000 --key "$k" --secret "$s"
    { echo "server_cpu $(python3 -c "print(f'{$(cpu "$pid") - $s0:.2f}')")"
      echo "db_cpu $(python3 -c "print(f'{$(cpu $dbpid) - $d0:.2f}')")"
      echo "$m0 $(machine)" | awk '{printf "machine_busy %.2f\nmachine_total %.2f\n", $3 - $1, $4 - $2}'; } >> "$TMP/$db-$r.txt"
    if [ "$db" = pg ] && [ "$r" = 1 ]; then
        psql_ -c "ALTER SYSTEM SET log_statement = 'all'" && psql_ -c 'SELECT pg_reload_conf()' >/dev/null
        sleep 0.5
        local from; from=$(wc -l < "$PGLOG")
        python3 bench/verify_replay.py pairs "$base" "$k" "$s" 50
        sleep 0.3
        tail -n +"$((from + 1))" "$PGLOG" > "$TMP/statements.log"
        psql_ -c 'ALTER SYSTEM RESET log_statement' && psql_ -c 'SELECT pg_reload_conf()' >/dev/null
        python3 bench/verify_replay.py count "$TMP/statements.log" 50
        python3 bench/verify_replay.py script "$TMP/statements.log" > "$TMP/pair.pgbench"
        REPLAY_URL=$url
    fi
    kill "$pid"
    python3 bench/verify_replay.py line "$db" "$r" "$TMP/$db-$r.txt" "$DUR"
}

for r in $(seq 1 "$ROUNDS"); do
    measure sqlite "$r"
    measure pg "$r"
    python3 bench/verify_replay.py ratio "$TMP/sqlite-$r.txt" "$TMP/pg-$r.txt" "$DUR"
done

echo "pgbench: the statements of one pair (the last of the 50), prepared, 4 connections, ${DUR} s, twice:"
for i in 1 2; do
    /usr/bin/time -f '%U %S' -o "$TMP/pgbench.time" "$PGBIN/pgbench" -h 127.0.0.1 -p "$PGPORT" -U postgres -n -M prepared \
        -f "$TMP/pair.pgbench" -c 4 -j 2 -T "$DUR" "${REPLAY_URL##*/}" > "$TMP/pgbench-$i.txt" 2>&1 &
    bp=$!
    sleep 1
    d0=$(cpu "$POSTMASTER"); m0=$(machine)
    sleep $((DUR - 2))
    d1=$(cpu "$POSTMASTER"); m1=$(machine)  # backends end with pgbench: read while it runs
    wait "$bp" || { cat "$TMP/pgbench-$i.txt" >&2; die "pgbench failed"; }
    tps=$(grep -oP 'tps = \K[0-9.]+' "$TMP/pgbench-$i.txt" | head -1)
    python3 -c "
import sys
tps, d0, d1, m0b, m0t, m1b, m1t, secs = map(float, sys.argv[1:])
db = d1 - d0
print(f'  {tps:,.0f} pairs/s; PostgreSQL {db / (tps * secs) * 1000:.3f} ms of CPU a pair, {db / (m1t - m0t) * 100:.0f}% of the machine; machine busy {(m1b - m0b) / (m1t - m0t) * 100:.0f}%')
" "$tps" "$d0" "$d1" $m0 $m1 "$((DUR - 2))"
done

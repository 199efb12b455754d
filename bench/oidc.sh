#!/usr/bin/env bash
# The OpenID Provider's token endpoint and hosted sign-in, in one run (about 5 minutes):
#   the ceilings: nginx serving a static 200 with the same wrk shape, ES256 signatures per second
#   (openssl speed, both cores), Argon2id verifications per second (bench/argon2_baseline.c);
#   trifactord --oidc 1 on SQLite, then on PostgreSQL: its idle RSS (after one discovery and
#   one JWKS request), refresh-token grants (wrk, one family per thread: bench/oidc/refresh.lua),
#   client_credentials grants, and full hosted sign-ins (email, password, TOTP, code exchange;
#   bench/oidc/hosted.py); on PostgreSQL also the statements and transactions per grant;
#   django-oauth-toolkit (gunicorn, 2 sync workers, SQLite in WAL mode) doing the same two grants.
# bench/oidc/report.py prints the table and PASS/MISS lines; exits 0 on a MISS, non-zero only when
# something failed (a setup step, a tool, or any grant that was not a 200).
# Runs under scripts/with-postgres.sh (make bench). Knobs (env): TRIFACTORD, BENCH_DURATION (s, 10),
# BENCH_FAMILIES (refresh-token families = wrk threads = connections, 16), BENCH_SIGNIN_USERS (600),
# BENCH_KEEP=1 keeps the temp dir, BENCH_PEER=0 skips django-oauth-toolkit.
set -euo pipefail
# Throwaway databases: every trifactord command here may migrate them (as serve does on SQLite).
export TRIFACTOR_MIGRATE_ON_START=always
cd "$(dirname "$0")/.."
[ -n "${TRIFACTOR_TEST_POSTGRES_URL:-}" ] || exec scripts/with-postgres.sh "$0" "$@"
TRIFACTORD=${TRIFACTORD:-.build/release/trifactord}
DUR=${BENCH_DURATION:-10}
N=${BENCH_FAMILIES:-16}
SIGNIN_USERS=${BENCH_SIGNIN_USERS:-600}
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
export TRIFACTOR_ARGON2_OPSLIMIT=${TRIFACTOR_ARGON2_OPSLIMIT:-2} TRIFACTOR_ARGON2_MEMORY_KIB=${TRIFACTOR_ARGON2_MEMORY_KIB:-19456}
die() { echo "bench: $*" >&2; exit 1; }
for tool in wrk gcc curl python3 pkg-config openssl; do command -v "$tool" >/dev/null || die "$tool is missing (scripts/install-deps.sh bench)"; done
[ -x "$NGINX" ] || die "nginx is missing (scripts/install-deps.sh bench)"
[ -x "$TRIFACTORD" ] || die "no $TRIFACTORD (swift build -c release --product trifactord)"

TMP=$(mktemp -d /tmp/trifactor-oidc.XXXXXX)
PIDS=()
cleanup() {
    kill "${PIDS[@]}" 2>/dev/null || true
    [ -f "$TMP/dot/gunicorn.pid" ] && kill "$(cat "$TMP/dot/gunicorn.pid")" 2>/dev/null || true
    wait 2>/dev/null || true
    if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "bench: outputs kept in $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_http() { for _ in $(seq 200); do [ "$(curl -s -o /dev/null -w '%{http_code}' "$1" || true)" = 200 ] && return 0; sleep 0.1; done; return 1; }
cpu() { python3 bench/oidc/cpu.py "$@"; }
# The machine's busy and total CPU seconds so far, all processes (/proc/stat): on a shared machine,
# what others took shows next to what the load took.
machine() { awk -v hz="$(getconf CLK_TCK)" '/^cpu /{printf "%.2f %.2f\n", ($2+$3+$4+$7+$8+$9)/hz, ($2+$3+$4+$5+$6+$7+$8+$9)/hz}' /proc/stat; }
# load NAME "SERVER_PIDS" "DB_PIDS" WRK_ARGS...: wrk --latency into $TMP/NAME.txt, with the CPU seconds
# of wrk, the server, its database and the whole machine over the run in $TMP/NAME.cpu.
load() {
    local name=$1 server=$2 db=$3; shift 3
    local s0 d0 t0 m0
    s0=$(cpu $server); d0=$(cpu $db); t0=$(date +%s.%N); m0=$(machine)
    /usr/bin/time -f 'wrk_cpu %U %S' -o "$TMP/$name.time" timeout 120 wrk --latency "$@" > "$TMP/$name.txt" 2>&1 \
        || { cat "$TMP/$name.txt" >&2; die "wrk ($name) failed"; }
    { echo "elapsed $(python3 -c "import time; print(f'{time.time() - $t0:.2f}')")"
      awk '{printf "wrk %.2f\n", $2 + $3}' "$TMP/$name.time"
      echo "server $(python3 -c "print(f'{$(cpu $server) - $s0:.2f}')")"
      echo "db $(python3 -c "print(f'{$(cpu $db) - $d0:.2f}')")"
      echo "$m0 $(machine)" | awk '{printf "machine_busy %.2f\nmachine_total %.2f\n", $3 - $1, $4 - $2}'; } > "$TMP/$name.cpu"
}
OPEN=(--signin-ip-burst 1000000 --signin-ip-rate 1000000 --signup-ip-burst 1000000 --signup-ip-rate 1000000)
PGBIN=/usr/lib/postgresql/15/bin
PGPORT=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.urlparse(sys.argv[1]).port)' "$TRIFACTOR_TEST_POSTGRES_URL")
psql_() { "$PGBIN/psql" -h 127.0.0.1 -p "$PGPORT" -U postgres -Atqc "$@"; }
PGDATA_DIR=$(psql_ 'SHOW data_directory')
POSTMASTER=$(head -1 "$PGDATA_DIR/postmaster.pid")

{
    echo "date $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "machine $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -sr)"
    echo "cores $(nproc)"
    echo "families $N"
    echo "duration $DUR"
    echo "versions $("$NGINX" -v 2>&1 | sed 's/.*\///'), $(openssl version | cut -d' ' -f1-2), PostgreSQL $(psql_ 'SHOW server_version' | cut -d' ' -f1)"
} > "$TMP/settings.txt"
sed -n 's/^machine /Machine: /p' "$TMP/settings.txt"
WRK=(-t"$N" -c"$N")

echo "[1/6] ceilings: nginx static 200 (wrk -t$N -c$N), ES256 signing (openssl speed, $(nproc) processes), Argon2id"
NPORT=$(free_port)
mkdir -p "$TMP/nginx"
cat > "$TMP/nginx/nginx.conf" <<CONF
worker_processes 2;
daemon off;
error_log $TMP/nginx/error.log warn;
pid $TMP/nginx/nginx.pid;
events { worker_connections 1024; }
http {
  access_log $TMP/nginx/access.log;
  keepalive_requests 1000000;
  client_body_temp_path $TMP/nginx/body; proxy_temp_path $TMP/nginx/proxy; fastcgi_temp_path $TMP/nginx/fastcgi;
  uwsgi_temp_path $TMP/nginx/uwsgi; scgi_temp_path $TMP/nginx/scgi;
  server { listen 127.0.0.1:$NPORT; location / { default_type application/json; return 200 '{"status":"ok"}'; } }
}
CONF
"$NGINX" -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" >/dev/null 2>"$TMP/nginx/stderr" &
NGINX_PID=$!
PIDS+=("$NGINX_PID")
wait_http "http://127.0.0.1:$NPORT/" || die "nginx did not start"
load nginx-warmup "$NGINX_PID" "" "${WRK[@]}" -d2s "http://127.0.0.1:$NPORT/"
load nginx "$NGINX_PID" "" "${WRK[@]}" -d"${DUR}s" "http://127.0.0.1:$NPORT/"
kill "$NGINX_PID"; rm -f "$TMP/nginx/access.log"
openssl speed -seconds 3 -multi "$(nproc)" ecdsap256 > "$TMP/openssl.txt" 2>&1 || { tail "$TMP/openssl.txt" >&2; die "openssl speed failed"; }
gcc -O2 -o "$TMP/argon2_baseline" bench/argon2_baseline.c $(pkg-config --cflags --libs libsodium) -lpthread \
    || die "cannot compile bench/argon2_baseline.c (libsodium-dev?)"
"$TMP/argon2_baseline" "$TRIFACTOR_ARGON2_OPSLIMIT" "$TRIFACTOR_ARGON2_MEMORY_KIB" "$(nproc)" 5 > "$TMP/baseline.txt"

# measure NAME DATABASE_URL DB_PIDS: one instance, its client, then every load on it.
measure() {
    local t=$1 url=$2 db=$3
    local port; port=$(free_port)
    local base="http://127.0.0.1:$port"
    "$TRIFACTORD" clients create --name Bench --id bench --redirect-uris "http://127.0.0.1:9/cb" \
        --grants "authorization_code refresh_token client_credentials" --scopes "openid email offline_access reports" \
        --first-party --json --database-url "$url" --key-file "$TMP/$t.key" > "$TMP/$t-client.json" 2>"$TMP/$t-client.err" \
        || { cat "$TMP/$t-client.err" >&2; die "clients create ($t) failed"; }
    local secret; secret=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["client_secret"])' "$TMP/$t-client.json")
    "$TRIFACTORD" serve --migrate-on-start always --oidc 1 --public-url "$base" --listen "127.0.0.1:$port" --dev --database-url "$url" \
        --key-file "$TMP/$t.key" "${OPEN[@]}" >/dev/null 2>"$TMP/$t.log" &
    local pid=$!
    PIDS+=("$pid")
    wait_http "$base/ready" || { tail "$TMP/$t.log" >&2; die "trifactord ($t) did not start"; }
    echo "  $t: idle RSS after one discovery and one JWKS request"
    local jwks; jwks=$(curl -fsS "$base/.well-known/openid-configuration" | python3 -c 'import json,sys; print(json.load(sys.stdin)["jwks_uri"])')
    curl -fsS -o /dev/null "$jwks"
    sleep 1
    echo "rss_kib $(awk '/^VmRSS/{print $2}' "/proc/$pid/status")" > "$TMP/$t-rss.txt"

    echo "  $t: $((3 * N)) refresh-token families through the hosted pages"
    python3 bench/oidc/hosted.py families "$base" "$TMP/$t-families" --count $((3 * N)) --client bench --secret="$secret"
    sed -n "1,${N}p" "$TMP/$t-families" > "$TMP/$t-tokens-warmup"
    sed -n "$((N + 1)),$((2 * N))p" "$TMP/$t-families" > "$TMP/$t-tokens"
    sed -n "$((2 * N + 1))p" "$TMP/$t-families" > "$TMP/$t-tokens-count"
    local basic; basic=$(printf 'bench:%s' "$secret" | base64 -w0)
    echo "  $t: refresh-token grants, wrk -t$N -c$N (2 s warm-up on other families, then ${DUR} s)"
    OIDC_BASIC=$basic OIDC_TOKENS="$TMP/$t-tokens-warmup" load "$t-refresh-warmup" "$pid" "$db" "${WRK[@]}" -d2s -s bench/oidc/refresh.lua "$base/token"
    OIDC_BASIC=$basic OIDC_TOKENS="$TMP/$t-tokens" load "$t-refresh" "$pid" "$db" "${WRK[@]}" -d"${DUR}s" -s bench/oidc/refresh.lua "$base/token"
    echo "  $t: client_credentials grants, wrk -t$N -c$N"
    OIDC_BASIC=$basic OIDC_SCOPE=reports load "$t-cc-warmup" "$pid" "$db" "${WRK[@]}" -d2s -s bench/oidc/client_credentials.lua "$base/token"
    OIDC_BASIC=$basic OIDC_SCOPE=reports load "$t-cc" "$pid" "$db" "${WRK[@]}" -d"${DUR}s" -s bench/oidc/client_credentials.lua "$base/token"
    if [ "$t" = pg ]; then
        echo "  pg: the statements of 100 grants of each kind, one after another (log_statement=all)"
        count_statements "$base" "$secret"
    fi
    echo "  $t: hosted sign-ins (email, password, TOTP, code exchange): $SIGNIN_USERS users set up, then 16 browsers for ${DUR} s"
    python3 bench/oidc/hosted.py signin "$base" "$TMP/$t-signin.txt" --client bench --secret="$secret" \
        --users "$SIGNIN_USERS" --threads 16 --seconds "$DUR" --server-pids "$pid" --db-pids "$db" \
        || die "the hosted sign-in bench ($t) failed"
    grep -c '"status":5' "$TMP/$t.log" | sed 's/^/server_5xx /' > "$TMP/$t-log.txt" || true
    grep -ci '"level":"error"\|"level":"critical"' "$TMP/$t.log" | sed 's/^/server_errors /' >> "$TMP/$t-log.txt" || true
    kill "$pid"
}

# count_statements BASE SECRET: the statements PostgreSQL runs for 100 refresh-token grants, then for 100
# client_credentials grants, each one after another (log_statement=all, counted in the server's log by
# text; the pollers' few statements in the same second fall below 100 and out of the per-grant count).
count_statements() {
    local log; log="$(dirname "$PGDATA_DIR")/log"
    [ -r "$log" ] || { echo "    (no readable PostgreSQL log at $log: not counted)"; return 0; }
    psql_ "ALTER SYSTEM SET log_statement = 'all'" && psql_ 'SELECT pg_reload_conf()' >/dev/null
    sleep 0.5
    local kind from
    for kind in refresh_token client_credentials; do
        from=$(wc -l < "$log")
        python3 bench/oidc/hosted.py grants "$1" "$TMP/pg-tokens-count" --client bench --secret="$2" --count 100 --kind "$kind"
        tail -n +"$((from + 1))" "$log" | grep -E 'LOG:  (statement|execute [^:]*): ' | sed -E 's/^.*LOG:  (statement|execute [^:]*): //' \
            | cut -c1-110 | sort | uniq -c | sort -rn > "$TMP/pg-$kind-statements.txt"
    done
    psql_ 'ALTER SYSTEM RESET log_statement' && psql_ 'SELECT pg_reload_conf()' >/dev/null
}

echo "[2/6] trifactord --oidc 1 on SQLite"
measure sqlite "sqlite:$TMP/t.db" ""

echo "[3/6] trifactord --oidc 1 on PostgreSQL"
psql_ 'CREATE DATABASE oidc'
measure pg "postgresql://postgres@127.0.0.1:$PGPORT/oidc" "$POSTMASTER"

if [ "${BENCH_PEER:-1}" = 1 ]; then
    echo "[4/6] django-oauth-toolkit (gunicorn, 2 sync workers, SQLite WAL): $((2 * N)) families through its ORM"
    DPORT=$(free_port)
    line=$(bench/oidc/peer.sh "$TMP" "$DPORT" $((2 * N)) | grep '^PEER_READY') || die "django-oauth-toolkit did not start"
    read -r _ _ DBASIC DBASIC_CC <<< "$line"
    DPID=$(cat "$TMP/dot/gunicorn.pid")
    sed -n "1,${N}p" "$TMP/dot/tokens" > "$TMP/dot-tokens-warmup"
    sed -n "$((N + 1)),$((2 * N))p" "$TMP/dot/tokens" > "$TMP/dot-tokens"
    echo "[5/6] django-oauth-toolkit: refresh-token and client_credentials grants at /o/token/, wrk -t$N -c$N"
    OIDC_BASIC=$DBASIC OIDC_TOKENS="$TMP/dot-tokens-warmup" load dot-refresh-warmup "$DPID" "" "${WRK[@]}" -d2s -s bench/oidc/refresh.lua "http://127.0.0.1:$DPORT/o/token/"
    OIDC_BASIC=$DBASIC OIDC_TOKENS="$TMP/dot-tokens" load dot-refresh "$DPID" "" "${WRK[@]}" -d"${DUR}s" -s bench/oidc/refresh.lua "http://127.0.0.1:$DPORT/o/token/"
    OIDC_BASIC=$DBASIC_CC OIDC_SCOPE=reports load dot-cc-warmup "$DPID" "" "${WRK[@]}" -d2s -s bench/oidc/client_credentials.lua "http://127.0.0.1:$DPORT/o/token/"
    OIDC_BASIC=$DBASIC_CC OIDC_SCOPE=reports load dot-cc "$DPID" "" "${WRK[@]}" -d"${DUR}s" -s bench/oidc/client_credentials.lua "http://127.0.0.1:$DPORT/o/token/"
    kill "$DPID"
fi

echo "[6/6] report"
python3 bench/oidc/report.py "$TMP"

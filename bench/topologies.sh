#!/usr/bin/env bash
# The same work on every topology, in one run, and the peer (about 6 minutes):
#   nginx static 200 (the HTTP ceiling), and the same through nginx as a proxy with the balancer's
#   settings (the ceiling of anything behind that proxy on this machine); trifactord on SQLite; one instance on PostgreSQL; two
#   instances on PostgreSQL behind nginx; privacyIDEA 3.14 (gunicorn, SQLite) with its PIN hash at
#   Trifactor's Argon2id cost and at its defaults.
# Work per topology: GET /v1/session (wrk), multi-factor sign-ins (password + TOTP), /v2/verify
# start + check (test numbers), passwordless push sign-ins (the device approves), and GET
# /v1/session p99 during a login storm. Then 10,000 idle keep-alive connections on one instance:
# its RSS and /health latency. bench/topologies.py prints the table and the ratios.
# Runs under scripts/with-postgres.sh (make bench). Knobs: TRIFACTORD, BENCH_DURATION (10),
# BENCH_KEEP=1, BENCH_PEER=0 (skip privacyIDEA).
set -euo pipefail
# Throwaway databases: every trifactord command here may migrate them (as serve does on SQLite).
export TRIFACTOR_MIGRATE_ON_START=always
cd "$(dirname "$0")/.."
[ -n "${TRIFACTOR_TEST_POSTGRES_URL:-}" ] || exec scripts/with-postgres.sh "$0" "$@"
TRIFACTORD=${TRIFACTORD:-.build/release/trifactord}
DUR=${BENCH_DURATION:-10}
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
export TRIFACTOR_ARGON2_OPSLIMIT=${TRIFACTOR_ARGON2_OPSLIMIT:-2} TRIFACTOR_ARGON2_MEMORY_KIB=${TRIFACTOR_ARGON2_MEMORY_KIB:-19456}
TMP=$(mktemp -d /tmp/trifactor-topologies.XXXXXX)
chmod 755 "$TMP"
PIDS=()
cleanup() {
    kill "${PIDS[@]}" 2>/dev/null || true
    wait 2>/dev/null || true
    [ -f "$TMP/pi-argon2/gunicorn.pid" ] && bench/privacyidea/stop.sh "$TMP" argon2 >/dev/null 2>&1 || true
    [ -f "$TMP/pi-default/gunicorn.pid" ] && bench/privacyidea/stop.sh "$TMP" default >/dev/null 2>&1 || true
    if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "bench: outputs kept in $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
die() { echo "bench: $*" >&2; exit 1; }
[ -x "$TRIFACTORD" ] || die "no $TRIFACTORD (swift build -c release --product trifactord)"

# A venv for the device keys of the push load (cryptography).
VENV=.build/bench-venv
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -c 'import cryptography' 2>/dev/null || "$VENV/bin/pip" install -q --disable-pip-version-check -r bench/requirements.txt
PY="$VENV/bin/python"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_http() { for _ in $(seq 200); do [ "$(curl -s -o /dev/null -w '%{http_code}' "$1" || true)" = 200 ] && return 0; sleep 0.1; done; return 1; }
run_wrk() { local out=$1; shift; timeout 120 wrk --latency "$@" > "$out" 2>&1 || { cat "$out" >&2; die "wrk failed"; }; }
NUMBERS=$(python3 -c "print(','.join(f'4474001{n:05d}=1234' for n in range(2000)))")
OPEN=(--signin-ip-burst 1000000 --signin-ip-rate 1000000 --signup-ip-burst 1000000 --signup-ip-rate 1000000
      --verify-ip-burst 1000000 --verify-ip-rate 1000000 --verify-key-burst 1000000 --verify-key-rate 1000000
      --verify-country-burst 1000000 --verify-country-rate 1000000 --verify-budget-prefix 1000000/h,10000000/d
      --verify-budget-country 1000000/h,10000000/d --verify-budget-total 1000000/h,10000000/d --verify-conversion 0.2,100000000,24
      --max-connections 12000 --max-connections-per-ip 0 --header-timeout 120 --idle-timeout 120)

start_instance() {  # NAME DATABASE_URL: sets P to its port
    P=$(free_port)
    TRIFACTOR_TEST_NUMBERS=$NUMBERS "$TRIFACTORD" serve --migrate-on-start always --dev --listen "127.0.0.1:$P" --database-url "$2" --key-file "$TMP/trifactor.key" \
        --trusted-proxies 127.0.0.1 "${OPEN[@]}" >/dev/null 2>"$TMP/$1.log" &
    PIDS+=($!)
    echo "$!" > "$TMP/$1.pid"
    wait_http "http://127.0.0.1:$P/ready" || { tail "$TMP/$1.log" >&2; die "$1 did not start"; }
}

start_nginx() {  # NAME BODY (the http block's servers)
    mkdir -p "$TMP/$1"
    cat > "$TMP/$1/nginx.conf" <<CONF
worker_processes 2;
daemon off;
error_log $TMP/$1/error.log warn;
pid $TMP/$1/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path $TMP/$1/body; proxy_temp_path $TMP/$1/proxy; fastcgi_temp_path $TMP/$1/fastcgi;
  uwsgi_temp_path $TMP/$1/uwsgi; scgi_temp_path $TMP/$1/scgi;
  $2
}
CONF
    "$NGINX" -p "$TMP/$1" -c "$TMP/$1/nginx.conf" >/dev/null 2>"$TMP/$1/stderr" &
    PIDS+=($!)
}

measure() {  # TOPOLOGY BASE DATABASE_URL
    local t=$1 base=$2 db=$3
    echo "  $t: sign-up and session"
    local email="bench-$t@example.com" password="bench-Pa55phrase-$t-$RANDOM"
    curl -fsS -o /dev/null -H 'Content-Type: application/json' -d "{\"email\":\"$email\",\"password\":\"$password\"}" "$base/v1/accounts"
    local token; token=$(curl -fsS -H 'Content-Type: application/json' -d "{\"email\":\"$email\",\"password\":\"$password\"}" "$base/v1/sessions" \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
    run_wrk "$TMP/$t-session.txt" -t2 -c32 -d2s -H "Authorization: Bearer $token" "$base/v1/session"
    run_wrk "$TMP/$t-session.txt" -t2 -c32 -d"${DUR}s" -H "Authorization: Bearer $token" "$base/v1/session"
    echo "  $t: multi-factor sign-ins"
    python3 bench/mfa_signin.py "$base" "$TMP/$t-mfa.txt" --users 500 --threads 16 --seconds "$DUR" >/dev/null
    echo "  $t: verifications"
    local key; key=$("$TRIFACTORD" keys create --name "bench-$t" --json --database-url "$db")
    python3 bench/load.py verify "$base" "$TMP/$t-verify.txt" --threads 16 --seconds "$DUR" --numbers 2000 \
        --key "$(echo "$key" | python3 -c 'import json,sys; print(json.load(sys.stdin)["api_key"])')" \
        --secret "$(echo "$key" | python3 -c 'import json,sys; print(json.load(sys.stdin)["api_secret"])')"
    echo "  $t: push sign-ins"
    "$PY" bench/load.py push "$base" "$TMP/$t-push.txt" --users 400 --threads 16 --seconds "$DUR"
    echo "  $t: GET /v1/session during a login storm"
    BENCH_EMAIL=$email BENCH_PASSWORD=$password timeout 60 wrk -t1 -c16 -d"$((DUR + 4))s" -s bench/login.lua "$base/v1/sessions" > "$TMP/$t-storm.txt" 2>&1 &
    local storm=$!
    sleep 2
    run_wrk "$TMP/$t-session_storm.txt" -t1 -c4 -d"${DUR}s" -H "Authorization: Bearer $token" "$base/v1/session"
    wait "$storm" || true
}

echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -sr)"
echo "[1/6] nginx static 200, directly and through a proxy"
NPORT=$(free_port)
# With an access log line per request, as trifactord logs each request: the baseline of the ratios.
start_nginx nginx-static "server { listen 127.0.0.1:$NPORT; access_log $TMP/nginx-access.log; location / { default_type application/json; return 200 '{\"status\":\"ok\"}'; } }"
wait_http "http://127.0.0.1:$NPORT/" || die "nginx did not start"
run_wrk "$TMP/nginx.txt" -t2 -c32 -d2s "http://127.0.0.1:$NPORT/"
run_wrk "$TMP/nginx.txt" -t2 -c32 -d"${DUR}s" "http://127.0.0.1:$NPORT/"
# The same 200 through a proxy configured as the balancer of [4/6]: the most any upstream can
# give behind it on this machine, with the proxy and its upstream sharing the cores.
PXPORT=$(free_port)
start_nginx nginx-proxy "upstream s { server 127.0.0.1:$NPORT; keepalive 64; }
  server { listen 127.0.0.1:$PXPORT; location / { proxy_pass http://s; proxy_http_version 1.1; proxy_set_header Connection \"\";
           proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for; } }"
wait_http "http://127.0.0.1:$PXPORT/" || die "nginx (proxy) did not start"
run_wrk "$TMP/nginx-proxied.txt" -t2 -c32 -d2s "http://127.0.0.1:$PXPORT/"
run_wrk "$TMP/nginx-proxied.txt" -t2 -c32 -d"${DUR}s" "http://127.0.0.1:$PXPORT/"
kill "$(cat "$TMP/nginx-proxy/nginx.pid")"

echo "[2/6] trifactord on SQLite"
rm -f "$TMP/nginx-access.log"
start_instance sqlite "sqlite:$TMP/t.db"
echo "  sqlite: 10,000 idle keep-alive connections, on the new instance"
python3 bench/load.py idle "http://127.0.0.1:$P" "$TMP/idle.txt" --pid "$(cat "$TMP/sqlite.pid")" --connections 10000
measure sqlite "http://127.0.0.1:$P" "sqlite:$TMP/t.db"
echo "  sqlite: 10,000 idle keep-alive connections again, after the loads"
python3 bench/load.py idle "http://127.0.0.1:$P" "$TMP/idle_after.txt" --pid "$(cat "$TMP/sqlite.pid")" --connections 10000
kill "$(cat "$TMP/sqlite.pid")"

PGBIN=/usr/lib/postgresql/15/bin
PGPORT=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.urlparse(sys.argv[1]).port)' "$TRIFACTOR_TEST_POSTGRES_URL")
for db in one two; do "$PGBIN/psql" -h 127.0.0.1 -p "$PGPORT" -U postgres -qc "CREATE DATABASE $db" >/dev/null; done
ONE="postgresql://postgres@127.0.0.1:$PGPORT/one"; TWO="postgresql://postgres@127.0.0.1:$PGPORT/two"

echo "[3/6] one instance on PostgreSQL"
start_instance pg1 "$ONE"
measure pg1 "http://127.0.0.1:$P" "$ONE"
kill "$(cat "$TMP/pg1.pid")"

echo "[4/6] two instances on PostgreSQL behind nginx"
start_instance pg2a "$TWO"; A=$P
start_instance pg2b "$TWO"; B=$P
LB=$(free_port)
start_nginx nginx-lb "upstream t { server 127.0.0.1:$A; server 127.0.0.1:$B; keepalive 64; }
  server { listen 127.0.0.1:$LB; location / { proxy_pass http://t; proxy_http_version 1.1; proxy_set_header Connection \"\";
           proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for; } }"
wait_http "http://127.0.0.1:$LB/ready" || die "nginx (balancer) did not start"
measure pg2 "http://127.0.0.1:$LB" "$TWO"
kill "$(cat "$TMP/pg2a.pid")" "$(cat "$TMP/pg2b.pid")"

if [ "${BENCH_PEER:-1}" = 1 ]; then
    for mode in argon2 default; do
        echo "[5/6] privacyIDEA 3.14 ($mode PIN hash): POST /validate/check with PIN + TOTP"
        PIPORT=$(free_port)
        line=$(bench/privacyidea/peer.sh "$TMP" "$PIPORT" "$mode" | grep '^PEER_READY') || die "privacyIDEA ($mode) did not start"
        secret=$(echo "$line" | awk '{print $4}')
        python3 bench/privacyidea/check_load.py "http://127.0.0.1:$PIPORT" "$secret" "$TMP/pi-$mode.txt" --threads 16 --seconds "$DUR" >/dev/null
        bench/privacyidea/stop.sh "$TMP" "$mode" >/dev/null
    done
fi

echo "[6/6] Argon2id verify baseline (C, libsodium), $(nproc) threads"
gcc -O2 -o "$TMP/argon2_baseline" bench/argon2_baseline.c $(pkg-config --cflags --libs libsodium) -lpthread
"$TMP/argon2_baseline" "$TRIFACTOR_ARGON2_OPSLIMIT" "$TRIFACTOR_ARGON2_MEMORY_KIB" "$(nproc)" 5 > "$TMP/baseline.txt"
python3 bench/topologies.py "$TMP"

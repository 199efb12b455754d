#!/usr/bin/env bash
# Trifactor benchmark (about 2 minutes): nginx static vs trifactord GET
# /health and GET /v1/session, a login storm with GET /v1/session latency
# measured during it, the full multi-factor sign-in (password, then TOTP),
# and an Argon2id baseline in C. Prints a table and a
# PASS/MISS summary; exits 0 on a MISS, non-zero only when something failed.
#
# Knobs (env): TRIFACTORD (binary), BENCH_DURATION (s, default 10),
# BENCH_THREADS / BENCH_CONNECTIONS (wrk, default 2 / 32), BENCH_STORM_DURATION
# (s, default 15), BENCH_STORM_CONNECTIONS (default 16), BENCH_PAIRS (interleaved
# nginx/session pairs for the ratio, default 9), BENCH_KEEP=1 keeps the
# temp dir (server log, wrk outputs). TRIFACTOR_ARGON2_OPSLIMIT /
# TRIFACTOR_ARGON2_MEMORY_KIB apply to the server and the baseline alike.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=bench
TRIFACTORD=${TRIFACTORD:-.build/release/trifactord}
DUR=${BENCH_DURATION:-10}
THREADS=${BENCH_THREADS:-2}
CONNS=${BENCH_CONNECTIONS:-32}
STORM_DUR=${BENCH_STORM_DURATION:-15}
STORM_CONNS=${BENCH_STORM_CONNECTIONS:-16}
PAIRS=${BENCH_PAIRS:-9}
export TRIFACTOR_ARGON2_OPSLIMIT=${TRIFACTOR_ARGON2_OPSLIMIT:-2}
export TRIFACTOR_ARGON2_MEMORY_KIB=${TRIFACTOR_ARGON2_MEMORY_KIB:-19456}
NPROC=$(nproc)

die() { echo "bench: $*" >&2; exit 1; }
for tool in wrk nginx gcc curl python3 pkg-config; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || die "$tool is missing (scripts/install-deps.sh bench)"
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$TRIFACTORD" ] || die "no server binary at $TRIFACTORD (swift build -c release --product trifactord)"

TMP=$(mktemp -d /tmp/trifactor-bench.XXXXXX)
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "bench: outputs kept in $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_http() {  # URL: up to 15 s for a 200
  local i
  for i in $(seq 150); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$1" || true)" = 200 ] && return 0
    sleep 0.1
  done
  return 1
}
run_wrk() {  # NAME ARGS...: wrk --latency, bounded in time, output in $TMP/NAME.txt
  local name=$1; shift
  timeout 120 wrk --latency "$@" > "$TMP/$name.txt" 2>&1 || { cat "$TMP/$name.txt" >&2; die "wrk ($name) failed"; }
}
WRK=(-t"$THREADS" -c"$CONNS" -d"${DUR}s")

echo "Machine: $NPROC cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(uname -sr)"
echo "wrk settings: -t$THREADS -c$CONNS -d${DUR}s (steps 1-3); each target warmed up 2 s first"
echo "Argon2id: t=$TRIFACTOR_ARGON2_OPSLIMIT m=${TRIFACTOR_ARGON2_MEMORY_KIB} KiB"

# Baseline program, compiled first so a toolchain problem fails fast.
gcc -O2 -o "$TMP/argon2_baseline" "$BENCH/argon2_baseline.c" $(pkg-config --cflags --libs libsodium) -lpthread \
  || die "cannot compile $BENCH/argon2_baseline.c (libsodium-dev?)"

# 1. nginx, twice: with an access log line per request (as trifactord writes
# one per request: the baseline for the ratios) and with logging off.
start_nginx() {  # $1 = access_log directive
  NGINX_PORT=$(free_port)
  rm -rf "$TMP/nginx"; mkdir -p "$TMP/nginx"
  cat > "$TMP/nginx/nginx.conf" <<EOF
worker_processes 2;
daemon off;
error_log $TMP/nginx/error.log warn;
pid $TMP/nginx/nginx.pid;
events { worker_connections 1024; }
http {
  $1;
  client_body_temp_path $TMP/nginx/body;
  proxy_temp_path $TMP/nginx/proxy;
  fastcgi_temp_path $TMP/nginx/fastcgi;
  uwsgi_temp_path $TMP/nginx/uwsgi;
  scgi_temp_path $TMP/nginx/scgi;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location / { default_type application/json; return 200 '{"status":"ok"}'; }
  }
}
EOF
  "$NGINX" -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" 2>"$TMP/nginx/stderr" &
  NGINX_PID=$!
  PIDS+=("$NGINX_PID")
  wait_http "http://127.0.0.1:$NGINX_PORT/" || { cat "$TMP/nginx/stderr" "$TMP/nginx/error.log" >&2 2>/dev/null; die "nginx did not start"; }
}
echo "[1/6] nginx static 200, access log on, then off"
start_nginx "access_log $TMP/nginx-access.log"
run_wrk warmup -t"$THREADS" -c"$CONNS" -d2s "http://127.0.0.1:$NGINX_PORT/"
run_wrk nginx "${WRK[@]}" "http://127.0.0.1:$NGINX_PORT/"
kill "$NGINX_PID"; wait "$NGINX_PID" 2>/dev/null || true
start_nginx "access_log off"
run_wrk warmup -t"$THREADS" -c"$CONNS" -d2s "http://127.0.0.1:$NGINX_PORT/"
run_wrk nginx_nolog "${WRK[@]}" "http://127.0.0.1:$NGINX_PORT/"
kill "$NGINX_PID"; wait "$NGINX_PID" 2>/dev/null || true
rm -f "$TMP/nginx-access.log"

# trifactord, with the sign-in and sign-up limits out of the way.
PORT=$(free_port)
BASE="http://127.0.0.1:$PORT"
# Dev mode: the multi-factor step reads its users' email codes from the dev outbox.
TRIFACTOR_SIGNIN_IP_BURST=1000000 TRIFACTOR_SIGNIN_IP_RATE=1000000 \
TRIFACTOR_SIGNUP_IP_BURST=1000000 TRIFACTOR_SIGNUP_IP_RATE=1000000 TRIFACTOR_DEV=1 \
  "$TRIFACTORD" serve --listen "127.0.0.1:$PORT" --database-url "sqlite:$TMP/bench.db" --key-file "$TMP/bench.key" 2>"$TMP/trifactord.log" &
SERVER_PID=$!
PIDS+=("$SERVER_PID")
wait_http "$BASE/health" || { tail -20 "$TMP/trifactord.log" >&2; die "trifactord did not start"; }

echo "[2/6] trifactord GET /health on port $PORT"
run_wrk warmup -t"$THREADS" -c"$CONNS" -d2s "$BASE/health"
run_wrk health "${WRK[@]}" "$BASE/health"

export BENCH_EMAIL="bench-$$@example.com" BENCH_PASSWORD="bench-Pa55phrase-$$-$RANDOM"
code=$(curl -s -o "$TMP/signup.json" -w '%{http_code}' -H 'Content-Type: application/json' \
  -d "{\"email\":\"$BENCH_EMAIL\",\"password\":\"$BENCH_PASSWORD\",\"display_name\":\"Bench\"}" "$BASE/v1/accounts")
[ "$code" = 202 ] || { cat "$TMP/signup.json" >&2; die "sign-up answered $code"; }
code=$(curl -s -o "$TMP/signin.json" -w '%{http_code}' -H 'Content-Type: application/json' \
  -d "{\"email\":\"$BENCH_EMAIL\",\"password\":\"$BENCH_PASSWORD\"}" "$BASE/v1/sessions")
[ "$code" = 201 ] || { cat "$TMP/signin.json" >&2; die "sign-in answered $code"; }
TOKEN=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["token"])' "$TMP/signin.json")
AUTH="Authorization: Bearer $TOKEN"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "$AUTH" "$BASE/v1/session")
[ "$code" = 200 ] || die "GET /v1/session with the new token answered $code"

echo "[3/6] trifactord GET /v1/session (valid token)"
run_wrk warmup -t"$THREADS" -c"$CONNS" -d2s -H "$AUTH" "$BASE/v1/session"
run_wrk session "${WRK[@]}" -H "$AUTH" "$BASE/v1/session"
run_wrk session_quiet -t1 -c4 -d5s -H "$AUTH" "$BASE/v1/session"
# The machine's speed drifts between runs (a shared VM): the ratio that counts is the median of
# BENCH_PAIRS back-to-back pairs, nginx then trifactord, 4 s each, so both sides see the same moment.
start_nginx "access_log $TMP/nginx-access.log"
for i in $(seq 1 "$PAIRS"); do
  run_wrk "pair_nginx_$i" -t"$THREADS" -c"$CONNS" -d4s "http://127.0.0.1:$NGINX_PORT/"
  run_wrk "pair_session_$i" -t"$THREADS" -c"$CONNS" -d4s -H "$AUTH" "$BASE/v1/session"
done
kill "$NGINX_PID"; wait "$NGINX_PID" 2>/dev/null || true
rm -f "$TMP/nginx-access.log"

echo "[4/6] login storm alone (-t1 -c$STORM_CONNS -d10s), then again with GET /v1/session -t1 -c4 on other connections"
timeout 120 wrk --latency -t1 -c"$STORM_CONNS" -d10s -s "$BENCH/login.lua" "$BASE/v1/sessions" > "$TMP/storm_alone.txt" 2>&1 \
  || { cat "$TMP/storm_alone.txt" >&2; die "wrk (storm alone) failed"; }
timeout 120 wrk --latency -t1 -c"$STORM_CONNS" -d"${STORM_DUR}s" -s "$BENCH/login.lua" "$BASE/v1/sessions" > "$TMP/storm.txt" 2>&1 &
STORM_PID=$!
sleep 3
run_wrk session_storm -t1 -c4 -d"$((STORM_DUR - 5))s" -H "$AUTH" "$BASE/v1/session"
wait "$STORM_PID" || { cat "$TMP/storm.txt" >&2; die "wrk (storm) failed"; }
grep -q '"status":503' "$TMP/trifactord.log" && echo "  (server log has 503 answers)"

echo "[5/6] multi-factor sign-in (password, then TOTP): ${MFA_USERS:-800} users set up, then 16 clients for 10 s"
python3 "$BENCH/mfa_signin.py" "$BASE" "$TMP/mfa.txt" --users "${MFA_USERS:-800}" --threads 16 --seconds 10 || die "the multi-factor sign-in bench failed"
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true

echo "[6/6] Argon2id verify baseline: $NPROC threads, 5 s"
"$TMP/argon2_baseline" "$TRIFACTOR_ARGON2_OPSLIMIT" "$TRIFACTOR_ARGON2_MEMORY_KIB" "$NPROC" 5 > "$TMP/baseline.txt" \
  || die "argon2 baseline failed"

echo "nginx worker_processes 2 (ratios against nginx with its access log on); trifactord defaults except sign-in/up rate limits; SQLite in $TMP; wrk -t$THREADS -c$CONNS -d${DUR}s" > "$TMP/settings.txt"
python3 "$BENCH/report.py" "$TMP"

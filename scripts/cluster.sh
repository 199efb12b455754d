#!/usr/bin/env bash
# Usage: scripts/cluster.sh  (make cluster)
# A throwaway cluster: PostgreSQL (scripts/with-postgres.sh), two trifactord instances in dev mode
# on :8081 and :8082 sharing it, and Debian's nginx on :8080 balancing between them (passive
# failover: a connection refused, a timeout or a 502/503 before anything was sent moves the request
# to the other instance; POSTs already sent are never replayed). Trifactor Bank runs on :8090
# against the cluster's address. Ctrl-C stops all of it and removes the data.
# Knobs: CLUSTER_PORT (8080), CLUSTER_BANK=0 (no bank), TRIFACTORD / TRIFACTOR_BANK (binaries).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ -z "${TRIFACTOR_TEST_POSTGRES_URL:-}" ]; then exec scripts/with-postgres.sh "$0" "$@"; fi

PORT=${CLUSTER_PORT:-8080}
A=$((PORT + 1)); B=$((PORT + 2))
TRIFACTORD=${TRIFACTORD:-.build/release/trifactord}
BANK_BIN=${TRIFACTOR_BANK:-.build/release/trifactor-bank}
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$TRIFACTORD" ] || { echo "cluster: no $TRIFACTORD (swift build -c release --product trifactord)" >&2; exit 1; }
[ -x "$NGINX" ] || { echo "cluster: nginx is missing (scripts/install-deps.sh bench)" >&2; exit 1; }
DIR=$(mktemp -d "${TMPDIR:-/tmp}/trifactor-cluster.XXXXXX")
chmod 700 "$DIR"
PIDS=()
stop() {
    trap - INT TERM EXIT
    kill -TERM "${PIDS[@]}" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$DIR"
}
trap stop INT TERM EXIT

wait_ready() {  # URL PID LOG
    for _ in $(seq 1 150); do
        curl -fsS "$1" >/dev/null 2>&1 && return 0
        kill -0 "$2" 2>/dev/null || { echo "cluster: $1 did not start; its log:" >&2; tail -20 "$3" >&2; exit 1; }
        sleep 0.1
    done
    echo "cluster: $1 not ready after 15 s" >&2; exit 1
}

instance() {  # PORT: one trifactord on the shared database, the proxy trusted for client addresses
    TRIFACTOR_DEV=1 TRIFACTOR_DATABASE_URL=$TRIFACTOR_TEST_POSTGRES_URL TRIFACTOR_KEY_FILE=$DIR/trifactor.key \
    TRIFACTOR_MIGRATE_ON_START=always \
    TRIFACTOR_TRUSTED_PROXIES=127.0.0.1 TRIFACTOR_LISTEN=127.0.0.1:$1 \
    TRIFACTOR_ORIGINS=http://127.0.0.1:8090,http://localhost:8090 \
        "$TRIFACTORD" serve 2>>"$DIR/trifactord-$1.log" &
    PIDS+=($!)
    wait_ready "http://127.0.0.1:$1/ready" "$!" "$DIR/trifactord-$1.log"
}
instance "$A"   # the first creates the key file both use
instance "$B"

mkdir -p "$DIR/nginx"
cat > "$DIR/nginx/nginx.conf" <<CONF
worker_processes 2;
daemon off;
error_log $DIR/nginx/error.log warn;
pid $DIR/nginx/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $DIR/nginx/body;
  proxy_temp_path $DIR/nginx/proxy;
  fastcgi_temp_path $DIR/nginx/fastcgi;
  uwsgi_temp_path $DIR/nginx/uwsgi;
  scgi_temp_path $DIR/nginx/scgi;
  upstream trifactord {
    # Passive health: an instance that fails is left alone for 5 s. (Active /ready checks need
    # nginx Plus; an external balancer should poll GET /ready.)
    server 127.0.0.1:$A max_fails=1 fail_timeout=5s;
    server 127.0.0.1:$B max_fails=1 fail_timeout=5s;
    keepalive 64;
  }
  server {
    listen 127.0.0.1:$PORT;
    client_max_body_size 1m;
    location / {
      proxy_pass http://trifactord;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$host;
      proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
      proxy_next_upstream error timeout http_502 http_503;
      proxy_next_upstream_tries 2;
      proxy_connect_timeout 2s;
      proxy_read_timeout 70s;   # long polls wait up to 30 s
    }
  }
}
CONF
"$NGINX" -p "$DIR/nginx" -c "$DIR/nginx/nginx.conf" 2>"$DIR/nginx/stderr" &
PIDS+=($!)
wait_ready "http://127.0.0.1:$PORT/ready" "$!" "$DIR/nginx/stderr"

if [ "${CLUSTER_BANK:-1}" = 1 ] && [ -x "$BANK_BIN" ]; then
    TRIFACTOR_BANK_TRIFACTOR_URL=http://127.0.0.1:$PORT TRIFACTOR_BANK_LISTEN=127.0.0.1:8090 TRIFACTOR_BANK_DEV=1 \
    TRIFACTOR_BANK_DATABASE_URL=sqlite:$DIR/bank.db TRIFACTOR_BANK_SECRET_FILE=$DIR/bank.secret \
        "$BANK_BIN" 2>>"$DIR/bank.log" &
    PIDS+=($!)
    echo "  Trifactor Bank: http://127.0.0.1:8090"
fi
echo "  cluster: http://127.0.0.1:$PORT (nginx) -> trifactord :$A and :$B on $TRIFACTOR_TEST_POSTGRES_URL"
echo "  dev phone: http://127.0.0.1:$PORT/dev/phone   logs: $DIR/*.log   Ctrl-C stops all"
wait -n "${PIDS[@]}"
echo "cluster: a process ended; stopping the rest" >&2

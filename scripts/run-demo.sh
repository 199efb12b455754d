#!/usr/bin/env bash
# Usage: scripts/run-demo.sh  (make run)
# Runs the demo: trifactord in dev mode on :8080 and Trifactor Bank on :8090, its relying
# party, with SQLite files in $DATA (default ./data). Prints the bank's URL first (http://localhost:8090/:
# WebAuthn needs a domain, so passkeys fail at 127.0.0.1); Ctrl-C
# (or SIGTERM) stops both. Expects release builds of trifactord and trifactor-bank.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
DATA=${DATA:-data}
BANK_PORT=${BANK_PORT:-8090}
install -d -m 700 "$DATA"

TRIFACTOR_DEV=${TRIFACTOR_DEV:-1} \
TRIFACTOR_DATABASE_URL=${TRIFACTOR_DATABASE_URL:-sqlite:$DATA/trifactor.db} \
TRIFACTOR_TRUSTED_PROXIES=${TRIFACTOR_TRUSTED_PROXIES:-127.0.0.1} \
TRIFACTOR_BRANDS=${TRIFACTOR_BRANDS:-Trifactor Bank} \
TRIFACTOR_ORIGINS=${TRIFACTOR_ORIGINS:-http://127.0.0.1:$BANK_PORT,http://localhost:$BANK_PORT} \
  .build/release/trifactord serve 2>>"$DATA/trifactord.log" &
TRIFACTORD=$!
stop() { kill -TERM "$TRIFACTORD" "${BANK:-}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap stop INT TERM EXIT

for _ in $(seq 1 100); do
    curl -fsS http://127.0.0.1:8080/health >/dev/null 2>&1 && break
    kill -0 "$TRIFACTORD" 2>/dev/null || { echo "run-demo: trifactord did not start; see $DATA/trifactord.log" >&2; exit 1; }
    sleep 0.1
done

TRIFACTOR_BANK_TRIFACTOR_URL=http://127.0.0.1:8080 TRIFACTOR_BANK_LISTEN=127.0.0.1:$BANK_PORT TRIFACTOR_BANK_DEV=1 \
TRIFACTOR_BANK_DATABASE_URL=${TRIFACTOR_BANK_DATABASE_URL:-sqlite:$DATA/bank.db} TRIFACTOR_BANK_SECRET_FILE=$DATA/bank.secret \
  .build/release/trifactor-bank 2>>"$DATA/bank.log" &
BANK=$!
sleep 0.5
echo "  open the bank at http://localhost:$BANK_PORT/ (passkeys need the name localhost, not 127.0.0.1)"
echo "  trifactord (API and dev phone): http://127.0.0.1:8080/dev/phone   logs: $DATA/*.log   Ctrl-C stops both"
wait -n "$TRIFACTORD" "$BANK"

#!/usr/bin/env bash
# Usage: scripts/run-demo.sh  (make run)
# Runs the demo: trifactord in dev mode on :8080, an OpenID Provider, and Trifactor Bank on :8090, its relying
# party on the standard path (a FAPI 2.0 client registered here on first start: its customers sign in and approve
# transfers on trifactord's hosted pages), with SQLite files in $DATA (default ./data).
# BANK_PATH=sdk runs the bank on the SDK path instead (its own sign-in pages, TrifactorKit's calls). Prints the bank's URL first (http://localhost:8090/:
# WebAuthn needs a domain, so passkeys fail at 127.0.0.1); Ctrl-C
# (or SIGTERM) stops both. Expects release builds of trifactord and trifactor-bank.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
DATA=${DATA:-data}
BANK_PORT=${BANK_PORT:-8090}
install -d -m 700 "$DATA"

BANK_PATH=${BANK_PATH:-standard}
export TRIFACTOR_DATABASE_URL=${TRIFACTOR_DATABASE_URL:-sqlite:$DATA/trifactor.db}
export TRIFACTOR_KEY_FILE=${TRIFACTOR_KEY_FILE:-$DATA/trifactor.key}
# The issuer is named localhost, as the bank is: passkeys (WebAuthn) need a domain, not an address.
# The demo's customers all use the dev phone's one mobile, so the limits per number and per prefix are a demo's
# (a production server keeps the defaults: 5 per number in a burst).
TRIFACTOR_VERIFY_NUMBER_BURST=${TRIFACTOR_VERIFY_NUMBER_BURST:-50} \
TRIFACTOR_VERIFY_BUDGET_PREFIX=${TRIFACTOR_VERIFY_BUDGET_PREFIX:-1000/h,10000/d} \
TRIFACTOR_DEV=${TRIFACTOR_DEV:-1} TRIFACTOR_OIDC=1 TRIFACTOR_PUBLIC_URL=http://localhost:8080 \
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

# The bank's client: its public key registered (again, should the key file be new), callbacks on both names.
BANK_ENV=()
if [ "$BANK_PATH" = standard ]; then
    TRIFACTOR_BANK_CLIENT_KEY=$DATA/bank-client.key .build/release/trifactor-bank jwks >"$DATA/bank-client.jwks.json"
    CLIENT=(--name "Trifactor Bank" --fapi2 --first-party --profile-in-id-token --auth-method private_key_jwt
            --jwks-file "$DATA/bank-client.jwks.json" --scopes "openid email"
            --grants "authorization_code urn:openid:params:grant-type:ciba" --ciba poll --ciba-text
            --redirect-uris "http://localhost:$BANK_PORT/signin/callback http://127.0.0.1:$BANK_PORT/signin/callback"
            --post-logout-uris "http://localhost:$BANK_PORT/?signed_out=1 http://127.0.0.1:$BANK_PORT/?signed_out=1"
            --backchannel-logout-uri "http://127.0.0.1:$BANK_PORT/backchannel-logout")
    if .build/release/trifactord clients show trifactor-bank >/dev/null 2>&1; then
        .build/release/trifactord clients update trifactor-bank "${CLIENT[@]}" >/dev/null
    else
        .build/release/trifactord clients create --id trifactor-bank "${CLIENT[@]}" >/dev/null
    fi
    BANK_ENV=(TRIFACTOR_BANK_CLIENT_ID=trifactor-bank TRIFACTOR_BANK_ISSUER=http://localhost:8080 TRIFACTOR_BANK_CLIENT_KEY="$DATA/bank-client.key"
              TRIFACTOR_BANK_DPOP_KEY="$DATA/bank-dpop.key")
fi

env "${BANK_ENV[@]}" TRIFACTOR_BANK_TRIFACTOR_URL=http://127.0.0.1:8080 TRIFACTOR_BANK_LISTEN=127.0.0.1:$BANK_PORT TRIFACTOR_BANK_DEV=1 \
TRIFACTOR_BANK_DATABASE_URL=${TRIFACTOR_BANK_DATABASE_URL:-sqlite:$DATA/bank.db} TRIFACTOR_BANK_SECRET_FILE=$DATA/bank.secret \
  .build/release/trifactor-bank 2>>"$DATA/bank.log" &
BANK=$!
sleep 0.5
echo "  open the bank at http://localhost:$BANK_PORT/ (passkeys need the name localhost, not 127.0.0.1)"
echo "  trifactord (API and dev phone): http://127.0.0.1:8080/dev/phone   logs: $DATA/*.log   Ctrl-C stops both"
wait -n "$TRIFACTORD" "$BANK"

#!/usr/bin/env bash
# django-oauth-toolkit as a benchmark peer for Trifactor's token endpoint.
#
# Usage: bench/oidc/peer.sh OUT_DIR PORT FAMILIES
#
# Creates (or reuses) the venv .build/dot-venv from requirements.txt beside
# this script, generates a minimal Django project in OUT_DIR/dot (SQLite in WAL
# mode with synchronous=NORMAL, as trifactord opens its SQLite; IMMEDIATE
# transactions and a 30 s busy timeout, so that two workers writing at once
# wait instead of failing), migrates it, then through the ORM creates:
#   - an Application "bench" (confidential, authorization-code: the grant its
#     refresh tokens come from) and one "bench-cc" (confidential,
#     client-credentials), both with a plaintext secret (hash_client_secret=False:
#     trifactord checks a client secret with one SHA-256; django-oauth-toolkit's
#     default hashes it with Django's PBKDF2, 1,000,000 iterations a request),
#   - FAMILIES users, each with an AccessToken and a RefreshToken of its own
#     family (ROTATE_REFRESH_TOKEN on, its default; REFRESH_TOKEN_REUSE_PROTECTION
#     on, so that a spent token used again revokes its family, as trifactord does),
# and starts gunicorn (2 sync workers, one per core, like the privacyIDEA peer)
# on 127.0.0.1:PORT in the background (pid in OUT_DIR/dot/gunicorn.pid).
# The refresh tokens go to OUT_DIR/dot/tokens, one a line. Ends with the line
#   PEER_READY PORT BASIC_AUTH_OF_bench BASIC_AUTH_OF_bench-cc
# Its access tokens are random strings stored in its database: no signing.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 OUT_DIR PORT FAMILIES" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
mkdir -p "$1"
DIR=$(cd "$1" && pwd)/dot
PORT=$2
FAMILIES=$3
VENV=$REPO/.build/dot-venv
REQ=$HERE/requirements.txt
STAMP=$VENV/.requirements.sha256
die() { echo "peer(django-oauth-toolkit): $*" >&2; exit 1; }
log() { echo "peer(django-oauth-toolkit): $*" >&2; }

if [ ! -x "$VENV/bin/python" ]; then
  log "creating venv $VENV"
  python3 -m venv "$VENV" || die "python3 -m venv failed (apt-get install python3-venv)"
fi
SUM=$(sha256sum "$REQ" | cut -d' ' -f1)
if [ "$(cat "$STAMP" 2>/dev/null || true)" != "$SUM" ]; then
  log "installing $REQ into $VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQ" || die "pip install failed"
  echo "$SUM" > "$STAMP"
fi
PY=$VENV/bin/python

rm -rf "$DIR"
mkdir -p "$DIR/benchsite"
touch "$DIR/benchsite/__init__.py"
cat > "$DIR/benchsite/settings.py" <<EOF
# Written by bench/oidc/peer.sh: the least a django-oauth-toolkit token endpoint needs.
SECRET_KEY = "$("$PY" -c 'import secrets; print(secrets.token_hex(32))')"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = ["django.contrib.auth", "django.contrib.contenttypes", "oauth2_provider"]
MIDDLEWARE = []
ROOT_URLCONF = "benchsite.urls"
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": "$DIR/dot.sqlite",
        "OPTIONS": {"timeout": 30, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA synchronous=NORMAL"},
    }
}
# Only for creating the bench users fast; the token endpoint never checks a user's password.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
OAUTH2_PROVIDER = {
    "SCOPES": {"openid": "OpenID", "offline_access": "Offline", "reports": "Reports"},
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "PKCE_REQUIRED": False,
}
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}
EOF
cat > "$DIR/benchsite/urls.py" <<'EOF'
from django.urls import include, path

urlpatterns = [path("o/", include("oauth2_provider.urls", namespace="oauth2_provider"))]
EOF
cat > "$DIR/benchsite/wsgi.py" <<'EOF'
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchsite.settings")
application = get_wsgi_application()
EOF

export DJANGO_SETTINGS_MODULE=benchsite.settings PYTHONPATH=$DIR
"$PY" -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); assert c.execute("PRAGMA journal_mode=WAL").fetchone()[0]=="wal"' \
  "$DIR/dot.sqlite" || die "could not switch SQLite to WAL"
"$PY" -m django migrate -v0 >"$DIR/setup.log" 2>&1 || { tail -20 "$DIR/setup.log" >&2; die "migrate failed"; }

"$PY" - "$DIR" "$FAMILIES" >>"$DIR/setup.log" 2>"$DIR/setup.err" <<'PYEOF' || { tail -20 "$DIR/setup.err" >&2; die "setup failed"; }
import base64, secrets, sys, uuid
from datetime import timedelta

import django

django.setup()
from django.contrib.auth import get_user_model
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, RefreshToken

out, families = sys.argv[1], int(sys.argv[2])


def app(client_id, grant):
    secret = secrets.token_urlsafe(32)
    Application.objects.create(
        client_id=client_id, client_secret=secret, hash_client_secret=False, name=client_id,
        client_type=Application.CLIENT_CONFIDENTIAL, authorization_grant_type=grant,
        redirect_uris="http://127.0.0.1:9/cb", skip_authorization=True, algorithm=Application.NO_ALGORITHM)
    return base64.b64encode(f"{client_id}:{secret}".encode()).decode()


basic = app("bench", Application.GRANT_AUTHORIZATION_CODE)
basic_cc = app("bench-cc", Application.GRANT_CLIENT_CREDENTIALS)
application = Application.objects.get(client_id="bench")
tokens = []
for i in range(families):
    user = get_user_model().objects.create_user(f"family{i}", f"family{i}@example.com", "unused")
    access = AccessToken.objects.create(
        user=user, application=application, token=secrets.token_urlsafe(30),
        expires=timezone.now() + timedelta(hours=1), scope="openid offline_access")
    refresh = RefreshToken.objects.create(
        user=user, application=application, token=secrets.token_urlsafe(30), access_token=access,
        token_family=uuid.uuid4())
    tokens.append(refresh.token)
with open(f"{out}/tokens", "w") as f:
    f.write("".join(t + "\n" for t in tokens))
print(f"BASIC {basic} {basic_cc}")
PYEOF
read -r _ BASIC BASIC_CC < <(grep '^BASIC ' "$DIR/setup.log")

"$VENV/bin/gunicorn" --bind "127.0.0.1:$PORT" --workers 2 --worker-class sync --timeout 120 \
  --error-logfile "$DIR/gunicorn.log" --log-level warning --chdir "$DIR" \
  benchsite.wsgi:application </dev/null >>"$DIR/gunicorn.log" 2>&1 &
PID=$!
ready=0
for _ in $(seq 150); do
  kill -0 "$PID" 2>/dev/null || { tail -20 "$DIR/gunicorn.log" >&2; die "gunicorn exited"; }
  code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$PORT/o/token/" || true)
  [ "$code" = 400 ] || [ "$code" = 401 ] && { ready=1; break; }
  sleep 0.2
done
[ $ready = 1 ] || { tail -20 "$DIR/gunicorn.log" >&2; die "gunicorn did not answer on port $PORT"; }
# One request per worker, so that the measured run starts warm.
for _ in 1 2 3 4; do
  curl -s -o /dev/null -H "Authorization: Basic $BASIC_CC" -d 'grant_type=client_credentials&scope=reports' \
    "http://127.0.0.1:$PORT/o/token/"
done
echo "$PID" > "$DIR/gunicorn.pid"
echo "PEER_READY $PORT $BASIC $BASIC_CC"

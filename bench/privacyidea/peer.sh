#!/usr/bin/env bash
# privacyIDEA 3.14 as a benchmark peer for Trifactor.
#
# Usage: bench/privacyidea/peer.sh OUT_DIR PORT MODE      (MODE: argon2 | default)
#
# Creates (or reuses) the venv .build/privacyidea-venv from requirements.txt
# beside this script, builds a fresh privacyIDEA instance in OUT_DIR/pi-MODE
# (SQLite, encryption key, audit keys, an internal SQL user resolver with
# PI_BENCH_USERS users bench0..benchN-1 in the default realm "bench", each with
# a TOTP token: sha1, 6 digits, 30 s, the same known base32 secret, PIN 1234),
# starts gunicorn (2 workers) on 127.0.0.1:PORT in the background (pid in
# OUT_DIR/pi-MODE/gunicorn.pid) and ends with the line
#   PEER_READY MODE PORT SECRET_BASE32
# Stop it with bench/privacyidea/stop.sh OUT_DIR MODE.
#
# MODE argon2: token PINs are hashed with Argon2id t=2, m=19456 KiB, p=1
#   (Trifactor's cost) through PI_HASH_ALGO_LIST / PI_HASH_ALGO_PARAMS in pi.cfg.
# MODE default: privacyIDEA's own defaults (Argon2id t=9 with argon2-cffi's
#   m=65536 KiB, p=4 as passlib takes them).
#
# Knobs (env): PI_BENCH_USERS (default 1000; each user can pass /validate/check
# once per 30-s TOTP step, so it must exceed checks/s * 30), PI_BENCH_SECRET
# (base32), PI_BENCH_AUDIT (logger: audit entries as JSON lines in
# OUT_DIR/pi-MODE/audit.log, the default; sql: privacyIDEA's signed SQL audit),
# PI_BENCH_WORKER_CLASS (sync | gthread, default sync), PI_BENCH_THREADS
# (gthread threads per worker, default 2), PI_BENCH_WAL (1: SQLite in WAL mode
# like Trifactor, the default; 0: privacyIDEA's rollback journal).
set -euo pipefail

usage() { echo "usage: $0 OUT_DIR PORT MODE   (MODE: argon2 | default)" >&2; exit 2; }
[ $# -eq 3 ] || usage
MODE=$3
case "$MODE" in argon2|default) ;; *) usage ;; esac
PORT=$2
[[ "$PORT" =~ ^[0-9]+$ ]] || usage

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
mkdir -p "$1"
OUT_DIR=$(cd "$1" && pwd)
DIR=$OUT_DIR/pi-$MODE
VENV=$REPO/.build/privacyidea-venv
REQ=$HERE/requirements.txt
STAMP=$VENV/.requirements.sha256
SECRET=${PI_BENCH_SECRET:-JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP}
USERS=${PI_BENCH_USERS:-1000}
AUDIT=${PI_BENCH_AUDIT:-logger}
WORKER_CLASS=${PI_BENCH_WORKER_CLASS:-sync}
THREADS=${PI_BENCH_THREADS:-2}
WAL=${PI_BENCH_WAL:-1}
PIN=1234

die() { echo "peer(privacyidea): $*" >&2; exit 1; }
log() { echo "peer(privacyidea): $*" >&2; }
T0=$(date +%s)

# 1. The venv, (re)installed only when requirements.txt changed.
if [ ! -x "$VENV/bin/python" ]; then
  log "creating venv $VENV"
  mkdir -p "$(dirname "$VENV")"
  python3 -m venv "$VENV" || die "python3 -m venv failed (apt-get install python3-venv)"
fi
SUM=$(sha256sum "$REQ" | cut -d' ' -f1)
if [ "$(cat "$STAMP" 2>/dev/null || true)" != "$SUM" ]; then
  log "installing $REQ into $VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQ" || die "pip install failed"
  echo "$SUM" > "$STAMP"
fi
T1=$(date +%s)
PY=$VENV/bin/python
PIMANAGE=$VENV/bin/pi-manage

# 2. A fresh instance directory (stop a server still running from it first).
if [ -f "$DIR/gunicorn.pid" ]; then
  "$HERE/stop.sh" "$OUT_DIR" "$MODE" || true
fi
rm -rf "$DIR"
mkdir -p "$DIR"
rnd() { "$PY" -c 'import secrets; print(secrets.token_hex(32))'; }

if [ "$MODE" = argon2 ]; then
  # privacyidea/lib/crypto.py: build_pass_context() builds a passlib CryptContext
  # from PI_HASH_ALGO_LIST (first entry hashes, all verify) and PI_HASH_ALGO_PARAMS
  # merged over DEFAULT_HASH_ALGO_PARAMS = {'argon2__rounds': 9}; token PINs go
  # through pass_hash()/verify_pass_hash() (models/token.py set_hashed_pin/check_pin).
  HASH_CFG="PI_HASH_ALGO_LIST = ['argon2', 'pbkdf2_sha512']
PI_HASH_ALGO_PARAMS = {'argon2__type': 'ID', 'argon2__rounds': 2,
                       'argon2__memory_cost': 19456, 'argon2__parallelism': 1}"
  EXPECT_PREFIX='$argon2id$v=19$m=19456,t=2,p=1$'
else
  HASH_CFG="# PI_HASH_ALGO_LIST / PI_HASH_ALGO_PARAMS left at privacyIDEA's defaults"
  EXPECT_PREFIX='$argon2id$'
fi

if [ "$AUDIT" = sql ]; then
  AUDIT_CFG="PI_AUDIT_MODULE = 'privacyidea.lib.auditmodules.sqlaudit'"
else
  AUDIT_CFG="PI_AUDIT_MODULE = 'privacyidea.lib.auditmodules.loggeraudit'"
fi

cat > "$DIR/pi.cfg" <<EOF
# privacyIDEA benchmark instance ($MODE), written by bench/privacyidea/peer.sh
SQLALCHEMY_DATABASE_URI = 'sqlite:///$DIR/pi.sqlite'
SECRET_KEY = '$(rnd)'
PI_PEPPER = '$(rnd)'
PI_ENCFILE = '$DIR/enckey'
PI_AUDIT_KEY_PRIVATE = '$DIR/private.pem'
PI_AUDIT_KEY_PUBLIC = '$DIR/public.pem'
$AUDIT_CFG
PI_AUDIT_SERVERNAME = 'bench-$MODE'
PI_LOGFILE = '$DIR/privacyidea.log'
PI_LOGLEVEL = 30
PI_LOGCONFIG = '$DIR/logging.cfg'
PI_NODE = 'bench-$MODE'
PI_NODE_UUID = '$("$PY" -c 'import uuid; print(uuid.uuid4())')'
SUPERUSER_REALM = ['superuser']
PI_BASE_URL = 'http://127.0.0.1:$PORT'
$HASH_CFG
EOF

# privacyIDEA's log at WARNING; the logger audit module writes at INFO to its own file.
cat > "$DIR/logging.cfg" <<EOF
[formatters]
keys=detail,plain

[handlers]
keys=file,audit

[loggers]
keys=root,privacyidea,audit

[formatter_detail]
class=privacyidea.lib.log.SecureFormatter
format=[%(asctime)s][%(process)d][%(thread)d][%(levelname)s][%(name)s:%(lineno)d] %(message)s

[formatter_plain]
format=%(message)s

[handler_file]
class=logging.FileHandler
level=WARNING
formatter=detail
args=('$DIR/privacyidea.log', 'a')

[handler_audit]
class=logging.FileHandler
level=INFO
formatter=plain
args=('$DIR/audit.log', 'a')

[logger_root]
level=WARNING
handlers=file

[logger_privacyidea]
level=WARNING
handlers=file
qualname=privacyidea
propagate=0

[logger_audit]
level=INFO
handlers=audit
qualname=privacyidea.lib.auditmodules.loggeraudit
propagate=0
EOF

export PRIVACYIDEA_CONFIGFILE=$DIR/pi.cfg
cd "$DIR"
pim() { "$PIMANAGE" "$@" >>"$DIR/setup.log" 2>&1 || { tail -30 "$DIR/setup.log" >&2; die "pi-manage $* failed"; }; }

# 3. Keys, tables, resolver and realm (pi-manage 3.14 groups these under "setup" and "config").
log "setting up the instance in $DIR"
pim setup create_enckey
pim setup create_audit_keys
pim setup create_tables
pim config resolver create_internal benchusers
pim config realm create bench benchusers
if [ "$WAL" = 1 ]; then
  "$PY" -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute("PRAGMA journal_mode=WAL").fetchone()[0]); c.close()' \
    "$DIR/pi.sqlite" >>"$DIR/setup.log" 2>&1 || die "could not switch SQLite to WAL"
fi
T2=$(date +%s)

# 4. Users and tokens. bench0 gets its TOTP token and PIN through privacyIDEA's
# own init_token() (the PIN through pass_hash() with the configured context).
# The other users get copies of that token: every row that references it (any
# table with a token_id column: token, tokenowner, tokenrealm, tokeninfo) is
# copied in SQL with a new serial, token id and owner, so each token has the
# same secret, the same stored PIN hash (the same Argon2id cost) and its own
# counter. init_token() costs ~60-90 ms a token here, a copy well under 1 ms;
# PI_BENCH_ENROL=init enrols every user through init_token() instead.
log "enrolling $USERS users with a TOTP token each"
"$PY" - "$DIR" "$USERS" "$SECRET" "$PIN" "$EXPECT_PREFIX" "${PI_BENCH_ENROL:-copy}" >>"$DIR/setup.log" 2>"$DIR/setup.err" <<'PYEOF' || { tail -30 "$DIR/setup.err" >&2; die "enrolment failed"; }
import base64, os, sqlite3, sys, time
out_dir, n_users, secret, pin, expect, how = sys.argv[1:7]
n_users = int(n_users)
db_file = os.path.join(out_dir, "pi.sqlite")
otpkey = base64.b32decode(secret.upper() + "=" * (-len(secret) % 8)).hex()

con = sqlite3.connect(db_file)
con.executemany("INSERT INTO users_benchusers (username, givenname, surname, email) VALUES (?, ?, ?, ?)",
                [(f"bench{i}", "Bench", str(i), f"bench{i}@example.com") for i in range(n_users)])
con.commit()
con.close()

from privacyidea.app import create_app
from privacyidea.lib.realm import set_default_realm
from privacyidea.lib.token import init_token, get_one_token
from privacyidea.lib.user import User
from privacyidea.models import db


def serial(i):
    return f"BENCH{i:05d}"


def enrol(i, pin_hash_seed=None):
    params = {"type": "totp", "otpkey": otpkey, "otplen": 6, "hashlib": "sha1",
              "timeStep": 30, "serial": serial(i)}
    if pin_hash_seed is None:
        params["pin"] = pin
    tok = init_token(params, user=User(f"bench{i}", "bench"))
    if pin_hash_seed is not None:
        tok.set_pin_hash_seed(*pin_hash_seed)
        tok.save()
    return tok


app = create_app(config_name="production", config_file=os.path.join(out_dir, "pi.cfg"), silent=True)
t = time.time()
with app.app_context():
    set_default_realm("bench")
    first = enrol(0).get_pin_hash_seed()
    if how == "init":
        for i in range(1, n_users):
            enrol(i, first)
    db.session.commit()
    db.session.remove()

if how != "init" and n_users > 1:
    con = sqlite3.connect(db_file)
    src_id = con.execute("SELECT id FROM token WHERE serial = ?", (serial(0),)).fetchone()[0]
    uids = dict(con.execute("SELECT username, id FROM users_benchusers"))
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    cols = {tb: [r[1] for r in con.execute(f'PRAGMA table_info("{tb}")')] for tb in tables}
    linked = [tb for tb in tables if "token_id" in cols[tb] and tb != "token"
              and con.execute(f'SELECT 1 FROM "{tb}" WHERE token_id = ?', (src_id,)).fetchone()]
    print(f"copying token {serial(0)} (tables token, {', '.join(linked)})", file=sys.stderr)
    tok_cols = [c for c in cols["token"] if c not in ("id", "serial")]
    src_tok = con.execute(f"SELECT {', '.join(tok_cols)} FROM token WHERE id = ?", (src_id,)).fetchone()
    src_rows = {}
    for tb in linked:
        cs = [c for c in cols[tb] if c not in ("id", "token_id")]
        quoted = ", ".join('"%s"' % c for c in cs)
        src_rows[tb] = (cs, con.execute(f'SELECT {quoted} FROM "{tb}" WHERE token_id = ?', (src_id,)).fetchall())
    with con:
        for i in range(1, n_users):
            cur = con.execute(f"INSERT INTO token (serial, {', '.join(tok_cols)}) "
                              f"VALUES ({', '.join('?' * (len(tok_cols) + 1))})", (serial(i), *src_tok))
            new_id = cur.lastrowid
            for tb, (cs, rows) in src_rows.items():
                for row in rows:
                    row = dict(zip(cs, row))
                    if tb == "tokenowner":
                        row["user_id"] = str(uids[f"bench{i}"])
                    names = ", ".join(f'"{c}"' for c in row)
                    con.execute(f'INSERT INTO "{tb}" (token_id, {names}) VALUES (?{", ?" * len(row)})',
                                (new_id, *row.values()))
    con.close()

with app.app_context():
    ok = True
    for i in sorted({0, n_users // 2, n_users - 1}):
        tok = get_one_token(serial=serial(i))
        owner = tok.user.login if tok.user else None
        ok = ok and owner == f"bench{i}" and tok.token.check_pin(pin)
    stored = get_one_token(serial=serial(0)).token.pin_hash
    last = get_one_token(serial=serial(n_users - 1)).token.pin_hash
print(f"enrolled {n_users} tokens ({how}) in {time.time() - t:.1f} s; owners and PIN checks ok: {ok}",
      file=sys.stderr)
prefix = stored.rsplit("$", 2)[0] + "$"
print(f"PIN_HASH_PREFIX {prefix}")
if not stored.startswith(expect) or last != stored or not ok:
    sys.exit(f"unexpected PIN hash {prefix!r} (wanted {expect!r}) or owner/PIN check failed")
PYEOF
PREFIX=$(sed -n 's/^PIN_HASH_PREFIX //p' "$DIR/setup.log" | tail -1)
log "stored token PIN hash prefix: $PREFIX"
T3=$(date +%s)

# 5. gunicorn, 2 workers, in the background.
GUNICORN_ARGS=(--bind "127.0.0.1:$PORT" --workers 2 --worker-class "$WORKER_CLASS"
  --timeout 120 --error-logfile "$DIR/gunicorn.log" --log-level warning --chdir "$DIR")
[ "$WORKER_CLASS" = gthread ] && GUNICORN_ARGS+=(--threads "$THREADS" --keep-alive 30)
setsid "$VENV/bin/gunicorn" "${GUNICORN_ARGS[@]}" \
  "privacyidea.app:create_app(config_name='production', config_file='$DIR/pi.cfg', silent=True)" \
  </dev/null >>"$DIR/gunicorn.log" 2>&1 &
echo $! > "$DIR/gunicorn.pid"
PID=$!

# Ready when /healthz/ answers, then one throw-away /validate/check for an
# unknown user per worker so that the measured run starts warm.
ready=0
for _ in $(seq 300); do
  kill -0 "$PID" 2>/dev/null || { tail -30 "$DIR/gunicorn.log" >&2; die "gunicorn exited"; }
  if "$PY" - "$PORT" <<'PYEOF' 2>/dev/null; then ready=1; break; fi
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=5)
c.request("GET", "/healthz/")
sys.exit(0 if c.getresponse().status == 200 else 1)
PYEOF
  sleep 0.2
done
[ $ready = 1 ] || { tail -30 "$DIR/gunicorn.log" >&2; die "gunicorn did not answer on port $PORT"; }
"$PY" - "$PORT" <<'PYEOF' >/dev/null 2>&1 || true
import http.client, sys
for _ in range(4):
    c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
    c.request("POST", "/validate/check", body="user=warmup-nobody&pass=0",
              headers={"Content-Type": "application/x-www-form-urlencoded"})
    c.getresponse().read()
    c.close()
PYEOF
T4=$(date +%s)
log "timings: venv $((T1 - T0)) s, instance $((T2 - T1)) s, enrolment $((T3 - T2)) s, server start $((T4 - T3)) s"
log "gunicorn pid $PID ($WORKER_CLASS, 2 workers), audit: $AUDIT, SQLite WAL: $WAL, users: $USERS"
echo "PEER_READY $MODE $PORT $SECRET"

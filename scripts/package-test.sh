#!/usr/bin/env bash
# make package-test (root; about 10 minutes the first time: static release builds of this tree and of the
# previous commit, kept afterwards): builds the Debian package, installs it with apt-get on this machine, and
# checks what an operator gets. Not in `make test`: it needs root and changes the machine (a system user,
# /etc/trifactor, /var/lib/trifactor), and removes and purges the package again at the end.
#   - an upgrade: the package of PREVIOUS (a commit; by default the last one before this version's number was
#     set, so the two packages' versions differ; built from its own tree with its own scripts/build-deb.sh, kept
#     in .build/previous/COMMIT) installed, an account with an authenticator app made with it and a setting
#     under its former name, this package installed over it: the same seed signs in, the former name still
#     works and is named;
#   - the files, user and modes; the version and man pages;
#   - the systemd unit verifies and scores 2.0 or lower (systemd-analyze security --offline=yes);
#   - the service user starts the installed binary with the installed settings and it serves /ready, with
#     an account written;
#   - trifactord doctor, as the service user, the server running: it proves the public URL is this deployment;
#     a key file made readable is found (exit 2), and gone once fixed;
#   - the package installed over itself keeps the data and the operator's edited settings;
#   - removing keeps the data; purging deletes it and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "package-test: run as root (it installs the package)" >&2; exit 1; }
fail() { echo "package-test: FAIL: $*" >&2; exit 1; }
ok() { echo "package-test: ok: $*"; }
DEB=$(scripts/build-deb.sh | tail -1)
ok "built $DEB ($(du -h "$DEB" | cut -f1))"
dpkg-deb -c "$DEB" | awk '{print $1, $2, $6, $7, $8}' > "${DEB%.deb}.files.txt"
VERSION=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/API/Dev.swift)
if [ -z "${PREVIOUS:-}" ]; then
    # The commit that set this version's number, and the one before it: the previous release's tree.
    BUMP=$(git log -1 --format=%H -S"static let current = \"$VERSION\"" -- Sources/API/Dev.swift)
    [ -n "$BUMP" ] || fail "no commit sets version $VERSION in Sources/API/Dev.swift: give PREVIOUS=COMMIT"
    PREVIOUS=$BUMP~1
fi
PREVIOUS_COMMIT=$(git rev-parse --verify "$PREVIOUS^{commit}") || fail "PREVIOUS=$PREVIOUS is not a commit"
PREVIOUS_DIR=.build/previous/$PREVIOUS_COMMIT
if ! ls "$PREVIOUS_DIR"/trifactor_*.deb >/dev/null 2>&1; then
    git cat-file -e "$PREVIOUS_COMMIT:scripts/build-deb.sh" 2>/dev/null \
        || fail "the previous commit ${PREVIOUS_COMMIT:0:12} has no scripts/build-deb.sh (it came with 0.10.0's packaging): give PREVIOUS=a later commit"
    rm -rf "$PREVIOUS_DIR" && mkdir -p "$PREVIOUS_DIR/src"
    git archive "$PREVIOUS_COMMIT" | tar -x -C "$PREVIOUS_DIR/src"
    (cd "$PREVIOUS_DIR/src" && DEB_OUT=.. scripts/build-deb.sh >/dev/null) || fail "building the previous commit's package"
    rm -rf "$PREVIOUS_DIR/src"
fi
PREVIOUS_DEB=$(ls "$PREVIOUS_DIR"/trifactor_*.deb 2>/dev/null | head -1 || true)
[ -n "$PREVIOUS_DEB" ] || fail "the previous commit's build made no package in $PREVIOUS_DIR"
ok "the previous commit's package: $PREVIOUS_DEB"

dpkg -s trifactor >/dev/null 2>&1 && apt-get purge -y trifactor >/dev/null
export DEBIAN_FRONTEND=noninteractive
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
serve() {  # the installed binary, as the service user, with the installed settings (the port apart)
    (set -a; . /etc/trifactor/trifactord.env; set +a; cd /var/lib/trifactor
     TRIFACTOR_LISTEN=127.0.0.1:$PORT exec runuser -u trifactor -- /usr/bin/trifactord serve) 2>>/tmp/package-test-serve.log &
    SERVER=$!
    for _ in $(seq 100); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/ready" || true)" = 200 ] && return 0
        sleep 0.2
    done
    tail -5 /tmp/package-test-serve.log >&2; fail "the installed trifactord did not serve /ready"
}
stop() { kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=; }
as_service() { (set -a; . /etc/trifactor/trifactord.env; set +a; cd /var/lib/trifactor; runuser -u trifactor -- /usr/bin/trifactord "$@"); }
: > /tmp/package-test-serve.log
STATE=$(mktemp)
SERVER=
trap 'rm -f "$STATE"; [ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null || true' EXIT

# The upgrade: an account with an authenticator app made by the previous build survives this one.
apt-get install -y "./$PREVIOUS_DEB" >/dev/null || fail "apt-get install of the previous package"
OLD_VERSION=$(dpkg-query -W -f='${Version}' trifactor)
serve
EMAIL=$(python3 scripts/upgrade-check.py sign-up "http://127.0.0.1:$PORT" "$STATE") || fail "sign-up on the previous build"
stop
USER_ID=$(as_service users find --email "$EMAIL" --json | python3 -c 'import json, sys; d = json.load(sys.stdin); print((d[0] if isinstance(d, list) else d)["id"])') \
    || fail "users find on the previous build"
as_service users verify-email "$USER_ID" >/dev/null || fail "verify-email on the previous build"
serve
python3 scripts/upgrade-check.py enroll "http://127.0.0.1:$PORT" "$STATE" || fail "TOTP enrollment on the previous build"
stop
ok "the previous build ($OLD_VERSION) made $EMAIL with an authenticator app"
# An operator's setting under a name this build renamed (docs/operations/upgrades.md).
echo "TRIFACTOR_RP_ID=bank.example" >> /etc/trifactor/trifactord.env
apt-get install -y "./$DEB" >/dev/null || fail "apt-get install of this package over the previous one"
NEW_VERSION=$(dpkg-query -W -f='${Version}' trifactor)
[ "$NEW_VERSION" != "$OLD_VERSION" ] || fail "the upgrade kept version $OLD_VERSION"
serve
python3 scripts/upgrade-check.py sign-in "http://127.0.0.1:$PORT" "$STATE" || fail "the kept TOTP seed after the upgrade"
stop
grep -q '"deprecated_setting".*TRIFACTOR_RP_ID is now TRIFACTOR_WEBAUTHN_RP_ID' /tmp/package-test-serve.log \
    || fail "serve did not name the former setting name"
sed -i '/^TRIFACTOR_RP_ID=/d' /etc/trifactor/trifactord.env
ok "upgraded $OLD_VERSION -> $NEW_VERSION: $EMAIL signs in with its password and a code from the same seed (AAL2); TRIFACTOR_RP_ID still read, and named"
ok "installed with apt-get; Depends: $(dpkg-query -W -f='${Depends}' trifactor)"

getent passwd trifactor | grep -q ':/usr/sbin/nologin$' || fail "no trifactor system user with nologin"
[ "$(stat -c '%a %U %G' /var/lib/trifactor)" = "700 trifactor trifactor" ] || fail "/var/lib/trifactor: $(stat -c '%a %U %G' /var/lib/trifactor)"
[ "$(stat -c '%a %U %G' /etc/trifactor)" = "750 root trifactor" ] || fail "/etc/trifactor: $(stat -c '%a %U %G' /etc/trifactor)"
[ "$(stat -c '%a %U %G' /etc/trifactor/trifactord.env)" = "640 root trifactor" ] || fail "trifactord.env mode"
ok "user trifactor, /var/lib/trifactor 0700, /etc/trifactor 0750 root:trifactor, trifactord.env 0640"
/usr/bin/trifactord --version | grep -q '^trifactord ' || fail "trifactord --version"
for page in trifactord.8 trifactor.1 trifactor-bank.1; do
    [ -f "/usr/share/man/man${page##*.}/$page.gz" ] || fail "no man page $page"
done
zcat /usr/share/man/man8/trifactord.8.gz | grep -q 'migrate' || fail "the man page lacks the commands"
ok "$(/usr/bin/trifactord --version), man pages trifactord(8), trifactor(1), trifactor-bank(1)"

UNIT=/usr/lib/systemd/system/trifactord.service
systemd-analyze verify --man=no "$UNIT" || fail "systemd-analyze verify"
SCORE=$(systemd-analyze security --offline=yes "$UNIT" 2>&1 | sed -n 's/.*Overall exposure level for trifactord.service: \([0-9.]*\).*/\1/p')
python3 -c "import sys; sys.exit(0 if float('$SCORE') <= 2.0 else 1)" || fail "exposure $SCORE > 2.0"
ok "unit verifies; systemd-analyze security: $SCORE"

serve
STATUS=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
    -d '{"email":"packaged@example.com","password":"correct horse battery staple"}' "http://127.0.0.1:$PORT/v1/accounts")
[ "$STATUS" = 202 ] || fail "sign-up answered $STATUS"
stop
as_service users find --email packaged@example.com | grep -q packaged@example.com || fail "the account is not there"
[ "$(stat -c '%a %U' /var/lib/trifactor/trifactor.key)" = "600 trifactor" ] || fail "key file mode"
ok "the service user serves /ready with the installed settings; an account written; key file 0600 trifactor"

# The doctor, as the service user with the installed settings, the server running.
serve
set +e; DOCTOR=$(TRIFACTOR_PUBLIC_URL=http://127.0.0.1:$PORT as_service doctor 2>&1); set -e
stop
echo "$DOCTOR" | grep -q "^ok       public_url: http://127.0.0.1:$PORT reaches this deployment" \
    || { echo "$DOCTOR" >&2; fail "the doctor did not prove the public URL"; }
# A planted mistake found, then gone.
chmod 644 /var/lib/trifactor/trifactor.key
set +e; DOCTOR=$(as_service doctor 2>&1); CODE=$?; set -e
[ "$CODE" = 2 ] && echo "$DOCTOR" | grep -q "^error    key_file: .*chmod 600 /var/lib/trifactor/trifactor.key" \
    || { echo "$DOCTOR" >&2; fail "the doctor did not find the readable key file (exit $CODE)"; }
chmod 600 /var/lib/trifactor/trifactor.key
set +e; DOCTOR=$(as_service doctor 2>&1); CODE=$?; set -e
! echo "$DOCTOR" | grep -q "^error" || { echo "$DOCTOR" >&2; fail "the doctor finds errors in the installed package (exit $CODE)"; }
ok "trifactord doctor as the service user: a readable key file is an error (exit 2), and gone once fixed (exit $CODE)"

echo "# an operator's line" >> /etc/trifactor/trifactord.env
apt-get install -y --reinstall -o Dpkg::Options::=--force-confold "./$DEB" >/dev/null || fail "upgrade"
grep -q "an operator's line" /etc/trifactor/trifactord.env || fail "the upgrade overwrote the settings"
as_service users find --email packaged@example.com | grep -q packaged@example.com || fail "the upgrade lost the account"
ok "the package installed over itself kept the edited settings and the data"

apt-get remove -y trifactor >/dev/null
[ -f /var/lib/trifactor/trifactor.db ] && [ -f /etc/trifactor/trifactord.env ] || fail "remove deleted data or settings"
ok "remove kept /var/lib/trifactor and /etc/trifactor"
PURGE=$(apt-get purge -y trifactor 2>&1)
echo "$PURGE" | grep -q "deleting /var/lib/trifactor" || fail "purge did not say what it deletes"
[ ! -e /var/lib/trifactor ] && [ ! -e /etc/trifactor ] || fail "purge left data"
ok "purge said what it deletes, and deleted it"
echo "package-test: all checks passed ($DEB)"

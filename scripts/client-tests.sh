#!/usr/bin/env bash
# Usage: scripts/client-tests.sh [PYTEST ARGS...]
# Drives trifactord with published Python clients (Tests/python-clients): the official `vonage` SDK
# against the Verify v2 API, and `pyotp` against TOTP enrollment and sign-in.
# Creates a venv at .build/sdk-venv when missing (installing Debian's python3-venv when
# Python's venv module is unusable), installs Tests/python-clients/requirements.txt when it changed,
# then runs pytest against $TRIFACTORD (default .build/debug/trifactord; build it first with
# `swift build --product trifactord`). Exits with pytest's status.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

VENV=.build/sdk-venv
REQS=Tests/python-clients/requirements.txt
STAMP=$VENV/.requirements.sha256

if [ ! -x "$VENV/bin/python" ]; then
    if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
        SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
        echo "sdk-tests: installing python3-venv" >&2
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-venv >&2
    fi
    rm -rf "$VENV"
    mkdir -p "$(dirname "$VENV")"
    python3 -m venv "$VENV" || { rm -rf "$VENV"; echo "sdk-tests: could not create $VENV" >&2; exit 1; }
fi

want=$(sha256sum "$REQS" | cut -d' ' -f1)
if [ "$(cat "$STAMP" 2>/dev/null || true)" != "$want" ]; then
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQS"
    echo "$want" > "$STAMP"
fi

export TRIFACTORD="${TRIFACTORD:-.build/debug/trifactord}"
export PYTHONDONTWRITEBYTECODE=1
set +e
"$VENV/bin/python" -m pytest -q -p no:cacheprovider Tests/python-clients "$@"
status=$?
set -e
exit $status

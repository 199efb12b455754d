#!/usr/bin/env bash
# Stops the gunicorn that bench/privacyidea/peer.sh OUT_DIR PORT MODE started.
# Usage: bench/privacyidea/stop.sh OUT_DIR MODE
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OUT_DIR MODE" >&2; exit 2; }
PIDFILE=$1/pi-$2/gunicorn.pid
[ -f "$PIDFILE" ] || { echo "stop(privacyidea): no $PIDFILE" >&2; exit 0; }
PID=$(cat "$PIDFILE")
if [[ "$PID" =~ ^[0-9]+$ ]] && kill -0 "$PID" 2>/dev/null; then
  kill -TERM "$PID"  # gunicorn master: graceful stop of its workers
  for _ in $(seq 100); do
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$PID" 2>/dev/null; then
    kill -KILL -- "-$PID" 2>/dev/null || kill -KILL "$PID" 2>/dev/null || true
  fi
  echo "stop(privacyidea): stopped gunicorn $PID" >&2
fi
rm -f "$PIDFILE"

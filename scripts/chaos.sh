#!/usr/bin/env bash
# Usage: scripts/chaos.sh  (make chaos)
# The cluster fault scenarios (Tests/python-clients/test_cluster_faults.py) in CHAOS_ROUNDS rounds
# (default 5), each with CHAOS_SECONDS (default 30) of load after an instance is killed. Stops at the
# first failing round; prints each round's figures.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROUNDS=${CHAOS_ROUNDS:-5}
export CHAOS_SECONDS=${CHAOS_SECONDS:-30}
for round in $(seq 1 "$ROUNDS"); do
    echo "chaos: round $round of $ROUNDS (${CHAOS_SECONDS} s of load after each kill)"
    scripts/client-tests.sh -k cluster_faults -s -q -p no:cacheprovider | grep -E "^E |under load|restart and|killed during|passed|failed"
done

#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what it needs, builds once
# and starts the local stack (infra/bootstrap.sh), then runs
# test/support/run-suite.ts: ESLint, the check that the committed Go-generated
# fixtures are what the Go generator writes and the check that every SQL
# statement also runs on current ClickHouse (chdb) beside the unit tests and
# the local cluster's start; then the integration files in lanes
# (docs/tests.md "Lanes"), and a summary with every file's seconds.
#
#   AGENTLEDGER_TEST_LANES=serial   every file alone, one after another (to measure)
#   AGENTLEDGER_TEST_ONLY=a.test.ts,cluster,node,unit   only these files or lanes
#   AGENTLEDGER_TEST_CLUSTER=0      without the local cluster (its files skip)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
start=$SECONDS

# Node.js 22+ on PATH for everything below (infra/node.sh).
. infra/node.sh
bash infra/bootstrap.sh
echo "[test] run-suite…"
AGENTLEDGER_TEST_SERVICES="${AGENTLEDGER_TEST_SERVICES:-local}" AGENTLEDGER_TEST_CLUSTER="${AGENTLEDGER_TEST_CLUSTER:-1}" \
  node dist/test/support/run-suite.js
echo "[test] done in $((SECONDS - start)) s"

#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what it needs, starts the
# local stack (Kafka, ClickHouse, Redis) and runs `npm test` (lint, typecheck,
# unit tests, integration tests against the real services), plus the check
# that the committed Go-generated fixtures are what the Go generator writes,
# and that every SQL statement also runs on current ClickHouse (chdb).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
start=$SECONDS

bash infra/bootstrap.sh
echo "[test] checking Go-generated fixtures…"
bash test/fixtures/envelopes/regen.sh --check
# The franz-go producer of test/integration/producers.test.ts: its modules
# (pinned in go.sum) from the Go module proxy now, so the test only builds.
if command -v go >/dev/null 2>&1; then
  echo "[test] downloading the franz-go producer's Go modules…"
  (cd test/fixtures/producers/franz && GOWORK=off GOFLAGS=-buildvcs=false go mod download)
fi
echo "[test] checking every migration and query on current ClickHouse (chdb)…"
bash test/modern/run.sh
echo "[test] npm test…"
# The local cluster's tests (test/integration/cluster-*.test.ts: the stack,
# the migrations and the fault tests) run too: each starts the cluster beside
# the stack and stops it when done.
AGENTLEDGER_TEST_SERVICES="${AGENTLEDGER_TEST_SERVICES:-local}" AGENTLEDGER_TEST_CLUSTER="${AGENTLEDGER_TEST_CLUSTER:-1}" npm test
echo "[test] done in $((SECONDS - start)) s"

#!/usr/bin/env bash
# The newcomer's first command: installs what it needs, brings up the local
# stack, applies the ClickHouse migrations and checks every service.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash infra/bootstrap.sh
echo "[demo] applying ClickHouse migrations…"
node bin/agentledger.js migrate
echo "[demo] checking the services…"
node bin/agentledger.js doctor
echo "[demo] the stack is up; stop it with: infra/stack.sh down"

#!/usr/bin/env bash
# Everything both README commands need before they run anything: Debian
# packages and Kafka jars (infra/stack.sh install), npm packages (npm ci when
# package-lock.json changed), the TypeScript build, and the running stack.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

say() { echo "[bootstrap] $*"; }

command -v node >/dev/null || { echo "[bootstrap] ERROR: Node.js 20+ is required (apt-get install nodejs npm)" >&2; exit 1; }
node_major="$(node -p 'process.versions.node.split(".")[0]')"
((node_major >= 20)) || { echo "[bootstrap] ERROR: Node.js 20+ is required, found $(node --version)" >&2; exit 1; }

bash infra/stack.sh install

lock_sum="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [[ -f node_modules/.agentledger-lock.sha256 && "$(cat node_modules/.agentledger-lock.sha256)" == "$lock_sum" ]]; then
  say "npm packages up to date"
else
  say "installing npm packages (npm ci)…"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_sum" >node_modules/.agentledger-lock.sha256
fi

say "building (tsc, into a fresh dist/)…"
rm -rf dist && npx tsc -p tsconfig.json

bash infra/stack.sh up

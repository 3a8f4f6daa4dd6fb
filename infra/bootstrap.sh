#!/usr/bin/env bash
# Everything both README commands need before they run anything: Node.js 22
# or later (infra/node.sh), Debian packages and Kafka jars (infra/stack.sh
# install), npm packages (npm ci when package-lock.json changed), the
# TypeScript build, and the running stack.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

say() { echo "[bootstrap] $*"; }

# Node.js 22 or later first on PATH (Node 24 installed into .state/node when
# the machine's is older); the callers source it too, so what they run after
# this script uses the same Node.
. infra/node.sh
say "Node.js $(node --version)"

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

# Sourced by infra/test.sh, infra/demo.sh and infra/bootstrap.sh (not run):
# puts a supported Node.js first on PATH. agentledger runs on Node 22 and 24
# (README "Node.js"); the machine's `node` is used when it is 22 or later.
# Older (Debian bookworm ships 18, many machines still have 20, past its end
# of life in April 2026), Node 24 LTS is installed from the npm registry's
# `node` package into .state/node, once, and used from there.
#   AGENTLEDGER_NODE_VERSION   the version installed then (default below)
#   AGENTLEDGER_NODE_MIN       the oldest major used as found (22; CI sets 24)
# shellcheck shell=bash

AGENTLEDGER_NODE_VERSION="${AGENTLEDGER_NODE_VERSION:-24.21.0}"
AGENTLEDGER_NODE_MIN="${AGENTLEDGER_NODE_MIN:-22}"

agentledger_node() {
  local root dir major
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  dir="$root/.state/node"
  if [[ -x $dir/node_modules/.bin/node ]]; then
    export PATH="$dir/node_modules/.bin:$PATH"
  fi
  command -v node >/dev/null || { echo "[node] ERROR: Node.js is required to install Node.js 24 (apt-get install nodejs npm)" >&2; return 1; }
  major="$(node -p 'process.versions.node.split(".")[0]')"
  ((major >= AGENTLEDGER_NODE_MIN)) && return 0
  command -v npm >/dev/null || { echo "[node] ERROR: npm is required to install Node.js 24 (apt-get install npm)" >&2; return 1; }
  echo "[node] Node.js $(node --version) is older than $AGENTLEDGER_NODE_MIN: installing Node.js $AGENTLEDGER_NODE_VERSION from the npm registry into .state/node…"
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "node@$AGENTLEDGER_NODE_VERSION" >/dev/null
  [[ -x $dir/node_modules/.bin/node ]] || { echo "[node] ERROR: npm installed no node binary into $dir" >&2; return 1; }
  export PATH="$dir/node_modules/.bin:$PATH"
  echo "[node] using $(node --version) from .state/node"
}

agentledger_node

#!/usr/bin/env bash
# Installs Node 22 and pi 1.6.0 (the agent the Node tests drive) from the npm registry into
# $SESSIONDB_NODE_HOME (default ~/.cache/sessiondb-node), once; prints the path of node.
# The machine's own node may be older than the 22.19 pi and the binding need. SESSIONDB_NODE
# names a node to use instead (the release workflow's, on platforms npm's node package lacks).
set -euo pipefail
home="${SESSIONDB_NODE_HOME:-$HOME/.cache/sessiondb-node}"
mkdir -p "$home" && cd "$home"
[ -f package.json ] || echo '{"name":"sessiondb-node-tests","private":true,"type":"module"}' > package.json
if [ -n "${SESSIONDB_NODE:-}" ]; then
  node="$SESSIONDB_NODE"
else
  case "$(uname -m)" in aarch64 | arm64) arch=arm64 ;; *) arch=x64 ;; esac
  if [ ! -x "node_modules/node-linux-$arch/bin/node" ]; then
    npm install --no-audit --no-fund --loglevel=error "node-linux-$arch@22" >&2
  fi
  node="$home/node_modules/node-linux-$arch/bin/node"
fi
export PATH="$(dirname "$node"):$PATH"
if [ ! -d node_modules/@earendil-works/pi-coding-agent ]; then
  npm install --no-audit --no-fund --loglevel=error @earendil-works/pi-coding-agent@1.6.0 >&2
fi
echo "$node"

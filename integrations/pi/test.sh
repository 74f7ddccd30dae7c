#!/usr/bin/env bash
# The pi package's tests: builds the sessiondb CLI (debug) and runs the package inside pi 1.6.0
# (installed from npm by .ci/node.sh into $SESSIONDB_NODE_HOME) on Node 22.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
(cd "$root" && cargo build --quiet)
NODE="${NODE:-$(command -v node 2>/dev/null || true)}"
if [ -z "$NODE" ] || ! "$NODE" -e 'process.exit(+process.versions.node.split(".")[0] >= 22 ? 0 : 1)'; then
  NODE="$(bash "$root/.ci/node.sh")"
fi
export SESSIONDB_NODE_HOME="${SESSIONDB_NODE_HOME:-$HOME/.cache/sessiondb-node}"
[ -d "$SESSIONDB_NODE_HOME/node_modules/@earendil-works/pi-coding-agent" ] || bash "$root/.ci/node.sh" >/dev/null
export PATH="$root/target/debug:$(dirname "$NODE"):$PATH"
cd "$here"
exec "$NODE" --test test/*.test.mjs

#!/usr/bin/env bash
# The pi package's tests: builds the sessiondb CLI (release, as bindings/node's tests built it)
# and runs the package inside pi 1.6.0 (installed from npm by .ci/node.sh into
# $SESSIONDB_NODE_HOME) on Node 22.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
(cd "$root" && cargo build --release --quiet --bin sessiondb)
export SESSIONDB_NODE_HOME="${SESSIONDB_NODE_HOME:-$HOME/.cache/sessiondb-node}"
# .ci/node.sh installs Node 22 and pi once (later calls only print node's path).
NODE="$(bash "$root/.ci/node.sh")"
export PATH="${CARGO_TARGET_DIR:-$root/target}/release:$(dirname "$NODE"):$PATH"
cd "$here"
exec "$NODE" --test test/*.test.mjs

#!/usr/bin/env bash
# The binding's tests: builds the addon (npm install runs cargo) and the sessiondb CLI, then runs
# `node --test` on Node 22 with pi 1.6.0 from $SESSIONDB_NODE_HOME (.ci/node.sh installs both).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export SESSIONDB_NODE_HOME="${SESSIONDB_NODE_HOME:-$HOME/.cache/sessiondb-node}"
# .ci/node.sh installs Node 22 and pi once (later calls only print node's path).
NODE="$(bash "$root/.ci/node.sh")"
export PATH="$(dirname "$NODE"):$PATH"
cd "$here"
npm install --no-audit --no-fund --loglevel=error
cargo build --release --bin sessiondb --manifest-path "$root/Cargo.toml"
export SESSIONDB_BIN="${CARGO_TARGET_DIR:-$root/target}/release/sessiondb"
node --test 'test/*.test.mjs'

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
# The TUI test (test/launcher-tui.test.mjs) drives sessiondb-pi in tmux; it is skipped without it.
if ! command -v tmux >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	apt-get install -y -qq tmux >/dev/null || echo "test.sh: could not install tmux; the TUI test is skipped" >&2
fi
node --test 'test/*.test.mjs'

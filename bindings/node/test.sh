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
# A test copy of the addon with `panicForTest` (the `test-panic` feature), for test/errors.test.mjs;
# the published addon npm just built lacks it (test/exports.test.mjs).
cargo build --release -p sessiondb-node --features test-panic --manifest-path "$here/Cargo.toml"
for lib in "${CARGO_TARGET_DIR:-$root/target}"/release/libsessiondb_node.{so,dylib}; do
	if [ -f "$lib" ]; then cp "$lib" "$here/sessiondb-test.node"; break; fi
done
cargo build --release --bin sessiondb --manifest-path "$root/Cargo.toml"
export SESSIONDB_BIN="${CARGO_TARGET_DIR:-$root/target}/release/sessiondb"
# The TUI test (test/launcher-tui.test.mjs) drives sessiondb-pi in tmux; it is skipped without it.
if ! command -v tmux >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	apt-get install -y -qq tmux >/dev/null || echo "test.sh: could not install tmux; the TUI test is skipped" >&2
fi
node --test 'test/*.test.mjs'

#!/usr/bin/env bash
# sessiondb serve in headless Debian chromium (playwright-core from npm, no browser download):
# the oracle corpus's pages compared to the CLI, a hostile corpus, the CSP on every response.
# Screenshots of the three pages are written to docs/screenshots/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
NODE="$(bash "$root/.ci/node.sh")"
export PATH="$(dirname "$NODE"):$PATH"
if ! command -v "${CHROMIUM:-/usr/bin/chromium}" >/dev/null; then
  echo "tests/browser: chromium is missing (apt-get install -y chromium; .ci/run installs it)" >&2
  exit 1
fi
cd "$here"
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --loglevel=error
# Release, as bindings/node's tests built it: no second build of the CLI.
cargo build --release --bin sessiondb --manifest-path "$root/Cargo.toml"
export SESSIONDB_BIN="${CARGO_TARGET_DIR:-$root/target}/release/sessiondb"
node --test test.mjs

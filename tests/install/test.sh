#!/usr/bin/env bash
# The npm packages as a user gets them: pack this platform's tarballs (bindings/node/pack.mjs,
# release build), then install.test.mjs installs them with npm under an empty HOME and a PATH
# with no cargo or rustc, and runs sessiondb, sessiondb-pi (pi 1.6.0 from npm) and the JS API.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
NODE="$(bash "$root/.ci/node.sh")"
export PATH="$(dirname "$NODE"):$PATH"
export SESSIONDB_NODE_HOME="${SESSIONDB_NODE_HOME:-$HOME/.cache/sessiondb-node}"
work="$(mktemp -d /tmp/sessiondb-install.XXXXXX)"
trap 'rm -rf "$work"' EXIT
# The release workflow packs first and passes its tarballs in SESSIONDB_TARBALLS.
if [ -z "${SESSIONDB_TARBALLS:-}" ]; then
  node "$root/bindings/node/pack.mjs" --out "$work/tarballs"
  export SESSIONDB_TARBALLS="$work/tarballs"
fi
export SESSIONDB_INSTALL_WORK="$work"
# npm's cache as .ci/node.sh filled it: pi 1.6.0 installs from it (the empty HOME has none).
export SESSIONDB_NPM_CACHE="$(npm config get cache)"
node --test "$here/install.test.mjs"

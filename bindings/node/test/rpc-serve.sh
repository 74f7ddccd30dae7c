#!/usr/bin/env bash
# Runs rpc-serve.mjs with the node on PATH (Node 22, as .ci/node.sh installs it).
here=$(cd "$(dirname "$0")" && pwd)
exec node "$here/rpc-serve.mjs" "$@"

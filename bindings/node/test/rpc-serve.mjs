#!/usr/bin/env node
// A stand-in for the `sessiondb` binary that serves the rpc protocol through the Node binding's
// SessionManager (every call goes through the JS class, as a host's would), so that
// tests/rpc_oracle.rs replays pi's recorded scripts against the binding:
//
//   rpc-serve.mjs --db DB rpc             JSON lines on stdin/stdout, as `sessiondb rpc`
//   rpc-serve.mjs --db DB export PATH     runs `$SESSIONDB_BIN --db DB export PATH`
//
// Run through rpc-serve.sh: RPC_ORACLE_BIN=bindings/node/test/rpc-serve.sh cargo test --test rpc_oracle
import { spawnSync } from "node:child_process";
import { serveRpc } from "../../../tests/fixtures/rpc/serve-rpc.mjs";
import { SessionManager } from "../index.js";

const argv = process.argv.slice(2);
const db = argv[0] === "--db" ? argv[1] : undefined;
const rest = argv[0] === "--db" ? argv.slice(2) : argv;
if (rest[0] === "export") {
	const bin = process.env.SESSIONDB_BIN;
	if (!bin) {
		console.error("rpc-serve.mjs: set SESSIONDB_BIN to the sessiondb CLI");
		process.exit(2);
	}
	const r = spawnSync(bin, [...(db ? ["--db", db] : []), ...rest], { stdio: "inherit" });
	process.exit(r.status ?? 1);
}
if (rest[0] !== "rpc") {
	console.error("usage: rpc-serve.mjs [--db DB] rpc | export PATH");
	process.exit(2);
}
if (db) SessionManager.useDatabase(db);

await serveRpc(SessionManager);

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
import readline from "node:readline";
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

// Where the protocol's null is pi's null rather than undefined (as tests/fixtures/rpc/pi-rpc.mjs).
const NULLABLE = { appendContextEdit: [1], appendCompaction: [1], branchWithSummary: [0] };
const CONSTRUCTORS = new Set(["create", "open", "continueRecent", "forkFrom", "inMemory"]);
const LOOKUPS = new Set(["findById", "list", "listAll"]);
let sm = null;

async function dispatch(method, params) {
	const a = params.map((p, i) => (p === null && !(NULLABLE[method] ?? []).includes(i) ? undefined : p));
	if (CONSTRUCTORS.has(method)) {
		sm = SessionManager[method](...a);
		return { sessionId: sm.getSessionId(), sessionFile: sm.getSessionFile() ?? null, cwd: sm.getCwd() };
	}
	if (LOOKUPS.has(method)) return await SessionManager[method](...a);
	if (!sm) throw new Error("no current session");
	if (typeof sm[method] !== "function") throw new Error(`unknown method ${method}`);
	return sm[method](...a);
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
	if (!line.trim()) continue;
	let id = null;
	let response;
	try {
		const req = JSON.parse(line);
		id = req.id ?? null;
		const result = await dispatch(req.method, req.params ?? []);
		response = { id, result: result === undefined ? null : JSON.parse(JSON.stringify(result)) };
	} catch (e) {
		response = { id, error: { message: String(e?.message ?? e) } };
	}
	process.stdout.write(`${JSON.stringify(response)}\n`);
}

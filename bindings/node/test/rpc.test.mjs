// pi's recorded SessionManager scripts (tests/fixtures/rpc/scripts.json) replayed through the
// binding: tests/rpc_oracle.rs drives rpc-serve.mjs, which serves every request through the
// binding's JS SessionManager, and compares each response and every exported file with pi's.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../../..");

test("pi's rpc oracle scripts give pi's responses through the binding", { timeout: 1_800_000 }, () => {
	assert.ok(process.env.SESSIONDB_BIN, "SESSIONDB_BIN must name the sessiondb CLI (test.sh builds it)");
	const r = spawnSync(process.env.CARGO || "cargo", ["test", "--test", "rpc_oracle", "--", "rpc_replays_match_pi", "--nocapture"], {
		cwd: root,
		env: { ...process.env, RPC_ORACLE_BIN: path.join(here, "rpc-serve.sh") },
		stdio: ["ignore", "inherit", "pipe"],
		encoding: "utf8",
	});
	process.stderr.write(r.stderr.slice(-20000));
	assert.equal(r.status, 0, "tests/rpc_oracle.rs through the binding failed (see above)");
	// The replay really went through the binding: every script reported.
	assert.match(r.stderr, /script-00: \d+ ops, 0 mismatches/);
});

// The package restates none of sessiondb's rules: whether a database is a PostgreSQL server and
// where pi's folders are come from `sessiondb paths --json` (lib/cli.ts), fed the same texts as
// tests/server_urls.rs and the binding's test, and agreeing with pi 1.6.0's own folders.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import { PKG, world } from "./harness.mjs";

const NODE_HOME = process.env.SESSIONDB_NODE_HOME || path.join(os.homedir(), ".cache", "sessiondb-node");
const { createJiti } = await import(pathToFileURL(path.join(NODE_HOME, "node_modules/jiti/lib/jiti.mjs")).href);
const lib = await createJiti(import.meta.url).import(path.join(PKG, "lib", "cli.ts"));
const config = await import(pathToFileURL(path.join(NODE_HOME, "node_modules/@earendil-works/pi-coding-agent/dist/config.js")).href);
const cases = JSON.parse(fs.readFileSync(path.join(PKG, "..", "..", "tests", "fixtures", "server-urls.json"), "utf8"));

const w = world();
after(() => w.cleanup());

function binary() {
	const found = lib.findBinary({}, w.W);
	assert.ok("bin" in found, found.missing);
	return found.bin;
}

test("a PostgreSQL URL is what the binary says it is, the scheme in any case", async () => {
	const bin = binary();
	assert.ok(cases.some(([t, url]) => url && t.startsWith("POSTGRES://")));
	// `--db ""` is refused by the option parser before any rule is asked.
	for (const [text, url] of cases.filter(([t]) => t !== "")) {
		const p = await lib.paths({ bin, db: text });
		assert.equal(p.server, url, JSON.stringify(text));
	}
});

test("the default database and whether it exists come from the binary", async () => {
	const bin = binary();
	const p = await lib.paths({ bin });
	assert.equal(p.database, process.env.SESSIONDB_PATH);
	assert.equal(p.exists, false);
	fs.writeFileSync(process.env.SESSIONDB_PATH, "");
	assert.equal((await lib.paths({ bin })).exists, true);
	fs.rmSync(process.env.SESSIONDB_PATH);
});

test("pi's folders are pi's", async () => {
	const bin = binary();
	let p = await lib.paths({ bin });
	assert.equal(p.agentDir, config.getAgentDir());
	assert.equal(p.sessionsRoot, config.getSessionsDir());
	assert.equal(p.sessionsDir, config.getSessionsDir());
	process.env.PI_CODING_AGENT_SESSION_DIR = path.join(w.W, "flat");
	try {
		p = await lib.paths({ bin });
		assert.equal(p.sessionsDir, path.join(w.W, "flat"));
		assert.equal(p.sessionsRoot, config.getSessionsDir());
	} finally {
		delete process.env.PI_CODING_AGENT_SESSION_DIR;
	}
});

// The binding's rules are the Rust library's: whether a database names a PostgreSQL server
// (fed the texts tests/server_urls.rs and the pi package's test are fed), and pi's folders
// (equal to pi 1.6.0's own getAgentDir and getSessionsDir).
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { test } from "node:test";

const require = createRequire(import.meta.url);
const { layout } = require("../index.cjs");
const cases = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, "..", "..", "..", "tests", "fixtures", "server-urls.json"), "utf8"));

test("a PostgreSQL URL is recognised as Rust recognises it, the scheme in any case", () => {
	assert.ok(cases.some(([t, url]) => url && t.startsWith("POSTGRES://")));
	for (const [text, url] of cases) assert.equal(layout.isServerUrl(text), url, JSON.stringify(text));
});

test("pi's folders are pi's", async () => {
	const home = process.env.SESSIONDB_NODE_HOME || path.join(os.homedir(), ".cache", "sessiondb-node");
	const config = await import(pathToFileURL(path.join(home, "node_modules/@earendil-works/pi-coding-agent/dist/config.js")).href);
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-layout-"));
	const saved = { agent: process.env.PI_CODING_AGENT_DIR, sessions: process.env.PI_CODING_AGENT_SESSION_DIR };
	try {
		process.env.PI_CODING_AGENT_DIR = path.join(W, "agent");
		delete process.env.PI_CODING_AGENT_SESSION_DIR;
		assert.equal(layout.agentDir(), config.getAgentDir());
		assert.equal(layout.sessionsRoot(), config.getSessionsDir());
		assert.equal(layout.sessionsDir(), config.getSessionsDir());
		// pi writes every session to $PI_CODING_AGENT_SESSION_DIR when it is set; its per-project
		// folders stay below getSessionsDir().
		process.env.PI_CODING_AGENT_SESSION_DIR = path.join(W, "flat");
		assert.equal(layout.sessionsDir(), path.join(W, "flat"));
		assert.equal(layout.sessionsRoot(), config.getSessionsDir());
	} finally {
		for (const [k, v] of [["PI_CODING_AGENT_DIR", saved.agent], ["PI_CODING_AGENT_SESSION_DIR", saved.sessions]]) {
			if (v === undefined) delete process.env[k];
			else process.env[k] = v;
		}
		fs.rmSync(W, { recursive: true, force: true });
	}
});

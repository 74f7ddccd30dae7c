// Without a working sessiondb, pi still starts and answers; the commands and tools say what to install.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { ai, scriptedUI, startPi, toolResults, world } from "./harness.mjs";

const w = world();
const here = w.project("here");
const nodeDir = path.dirname(process.execPath);
after(() => w.cleanup());

test("no sessiondb on PATH: pi starts, the commands and tools explain what to install", async () => {
	const saved = process.env.PATH;
	process.env.PATH = nodeDir; // node only: no sessiondb, and HOME has no ~/.cargo/bin
	try {
		const ui = scriptedUI();
		const P = await startPi(here, {
			ui,
			responses: [
				ai.fauxAssistantMessage([ai.fauxToolCall("session_search", { query: "anything" })], { stopReason: "toolUse" }),
				ai.fauxAssistantMessage("I cannot search past sessions right now."),
			],
		});
		assert.deepEqual(P.errors, []);
		const s = P.runtime.session;
		assert.ok(s.getAllTools().some((t) => t.name === "session_search"));
		// session_start warned once (its sync starts a second after pi), with the way to install it.
		await waitFor(() => ui.notices.some((n) => n.type === "warning"));
		await new Promise((r) => setTimeout(r, 200));
		const startWarnings = ui.notices.filter((n) => n.type === "warning");
		assert.equal(startWarnings.length, 1, JSON.stringify(ui.notices));
		assert.match(startWarnings[0].message, /sessiondb is not available: no `sessiondb` package, none on PATH and none in ~\/\.cargo\/bin\. Install it with `npm install -g sessiondb`.*SESSIONDB_BIN/);
		for (const cmd of ["/search zanzibar", "/usage"]) {
			ui.notices.length = 0;
			await s.prompt(cmd);
			assert.equal(ui.notices.length, 1, `${cmd}: ${JSON.stringify(ui.notices)}`);
			assert.equal(ui.notices[0].type, "error");
			assert.match(ui.notices[0].message, /sessiondb is not available.*npm install -g sessiondb/);
		}
		await s.prompt("what did we do last week?");
		const [r] = toolResults(s, "session_search");
		assert.equal(r.isError, true);
		assert.match(r.text, /sessiondb is not available.*npm install -g sessiondb/);
		assert.equal(s.getLastAssistantText(), "I cannot search past sessions right now.");
		assert.deepEqual(P.errors, []);
		await P.runtime.dispose();
	} finally {
		process.env.PATH = saved;
	}
});

test("SESSIONDB_BIN naming no executable is reported as such", async () => {
	process.env.SESSIONDB_BIN = path.join(w.W, "nowhere", "sessiondb");
	try {
		const ui = scriptedUI();
		const P = await startPi(here, { ui });
		await P.runtime.session.prompt("/usage");
		assert.match(ui.notices.at(-1).message, /SESSIONDB_BIN names .*nowhere\/sessiondb, which is not an executable file/);
		await P.runtime.dispose();
	} finally {
		delete process.env.SESSIONDB_BIN;
	}
});

test("a failing or hanging sessiondb is a warning and never holds pi up", async () => {
	const bin = path.join(w.W, "bin");
	fs.mkdirSync(bin, { recursive: true });
	const fake = path.join(bin, "sessiondb");
	// Every call hangs for 2 s, then fails as a locked database would.
	fs.writeFileSync(fake, '#!/bin/sh\nsleep 2\necho "sessiondb: error: database is locked" >&2\nexit 2\n', { mode: 0o755 });
	process.env.SESSIONDB_BIN = fake;
	try {
		const ui = scriptedUI();
		const started = Date.now();
		const P = await startPi(here, { ui, responses: [ai.fauxAssistantMessage("still here"), ai.fauxAssistantMessage("still here")] });
		await P.runtime.session.prompt("hello");
		assert.equal(P.runtime.session.getLastAssistantText(), "still here");
		assert.ok(Date.now() - started < 1500, "pi waited for sessiondb");
		assert.deepEqual(ui.notices.filter((n) => n.type === "warning"), [], "the sync is still running");
		const warning = await waitFor(() => ui.notices.find((n) => n.type === "warning"));
		assert.match(warning.message, /sessiondb: sync failed: database is locked/);
		// A session replaced while its syncs still run: their failures find a stale context,
		// which must not surface as an error (or an unhandled rejection, which ends pi).
		await P.runtime.session.prompt("again");
		await P.runtime.newSession();
		await new Promise((r) => setTimeout(r, 4500));
		assert.deepEqual(P.errors, []);
		await P.runtime.dispose();
	} finally {
		delete process.env.SESSIONDB_BIN;
	}
});

async function waitFor(f, ms = 5000) {
	const end = Date.now() + ms;
	for (;;) {
		const v = f();
		if (v) return v;
		if (Date.now() > end) throw new Error("timed out");
		await new Promise((r) => setTimeout(r, 20));
	}
}

// Bad input gets pi's errors or a clear one, and nothing unwinds into Node.
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { SessionManager } from "../index.js";

const require = createRequire(import.meta.url);
const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-errors-"));
process.env.PI_CODING_AGENT_DIR = path.join(W, "agent");
SessionManager.useDatabase(path.join(W, "db.sqlite"));
test.after(() => fs.rmSync(W, { recursive: true, force: true }));

test("a database that cannot be opened names the file and the cause", () => {
	const notDb = path.join(W, "not-a-db.sqlite");
	fs.writeFileSync(notDb, "this is not SQLite, just text long enough to have a header page...".repeat(100));
	assert.throws(() => SessionManager.useDatabase(notDb), (e) => e instanceof Error && e.message.includes(notDb) && /not a database|file is not/i.test(e.message));
	const missing = path.join(W, "no-such-dir", "x", "db.sqlite");
	fs.writeFileSync(path.join(W, "no-such-dir"), "a file where a folder should be");
	assert.throws(() => SessionManager.useDatabase(missing), (e) => e.message.includes(missing));
	assert.throws(() => SessionManager.useDatabase(""), TypeError);
	// The database in use is unchanged.
	assert.equal(SessionManager.databasePath(), path.join(W, "db.sqlite"));
});

test("pi's errors for bad arguments", () => {
	const sm = SessionManager.create(path.join(W, "project"));
	assert.throws(() => sm.branch("nope"), { message: "Entry nope not found" });
	assert.throws(() => sm.appendLabelChange("nope", "x"), { message: "Entry nope not found" });
	assert.throws(() => SessionManager.create(W, undefined, { id: "not a valid id!" }), /session id/i);
	assert.throws(() => SessionManager.forkFrom(path.join(W, "missing.jsonl"), W), /Cannot fork|not found|no such/i);
	assert.equal(sm.getEntry("nope"), undefined);
	assert.deepEqual(sm.getBranch("nope"), []);
	// Values JSON cannot carry fail in JavaScript, as pi's own file write would.
	assert.throws(() => sm.appendMessage({ role: "user", content: "x", timestamp: 1n }), TypeError);
	// The manager still works after every error.
	const id = sm.appendMessage({ role: "user", content: "still here", timestamp: 1 });
	assert.equal(sm.getLeafId(), id);
	assert.equal(sm.getBranch().length, 1);
});

test("a Rust panic becomes a JS exception and the process goes on", () => {
	// panicForTest is compiled only into the test copy test.sh builds (the `test-panic` feature).
	const copy = path.join(import.meta.dirname, "..", "sessiondb-test.node");
	assert.ok(fs.existsSync(copy), `${copy} is missing: bash test.sh builds it (cargo build -p sessiondb-node --features test-panic)`);
	const native = require(copy);
	assert.throws(() => native.panicForTest(), { message: /internal error in panicForTest: deliberate test panic/ });
	const sm = SessionManager.inMemory(W);
	assert.ok(sm.appendMessage({ role: "user", content: "after the panic", timestamp: 2 }));
});

test("entries are parsed once and kept: getBranch() returns the same objects", () => {
	const sm = SessionManager.create(path.join(W, "cache"));
	const a = sm.appendMessage({ role: "user", content: "lone \ud800 surrogate, 1e21 and -0", timestamp: 1e21 });
	sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: 3, z: 1, a: 2 });
	const first = sm.getBranch();
	const again = sm.getBranch();
	assert.equal(first.length, 2);
	assert.equal(first[0], again[0]); // the cached object itself
	assert.equal(sm.getEntries()[1], first[1]);
	assert.equal(first[0].id, a);
	assert.equal(first[0].message.content, "lone \ud800 surrogate, 1e21 and -0");
	assert.equal(first[0].message.timestamp, 1e21);
	assert.deepEqual(Object.keys(first[1].message), ["role", "content", "timestamp", "z", "a"]);
	// Branching elsewhere and appending keeps earlier objects and adds the new line.
	sm.branch(a);
	const c = sm.appendMessage({ role: "user", content: "second branch", timestamp: 4 });
	const b2 = sm.getBranch();
	assert.deepEqual(b2.map((e) => e.id), [a, c]);
	assert.equal(b2[0], first[0]);
	assert.equal(sm.getEntries().length, 3);
});

test("getEntries() first, getBranch() after: one object per line, as with pi", () => {
	const sm = SessionManager.create(path.join(W, "entries-first"));
	const a = sm.appendMessage({ role: "user", content: "one", timestamp: 1 });
	const reopened = SessionManager.open(sm.getSessionFile());
	const all = reopened.getEntries();
	assert.equal(reopened.getBranch()[0], all[0]);
	// A line appended after getEntries(): getBranch() parses it once, getEntries() gets that one.
	reopened.appendMessage({ role: "assistant", content: "two", timestamp: 2 });
	const branch = reopened.getBranch();
	assert.deepEqual(branch.map((e) => e.message.content), ["one", "two"]);
	assert.equal(branch[0].id, a);
	assert.equal(reopened.getEntries()[1], branch[1]);
	assert.equal(reopened.getBranch()[1], branch[1]);
});

test("list and listAll give pi's SessionInfo with Dates and report progress", async () => {
	const cwd = path.join(W, "listed");
	const sm = SessionManager.create(cwd);
	sm.appendMessage({ role: "user", content: "hello list", timestamp: 5 });
	const seen = [];
	const infos = await SessionManager.list(cwd, undefined, (loaded, total) => seen.push([loaded, total]));
	assert.equal(infos.length, 1);
	assert.ok(infos[0].created instanceof Date && infos[0].modified instanceof Date);
	assert.equal(infos[0].firstMessage, "hello list");
	assert.deepEqual(seen, [[1, 1]]);
	const all = await SessionManager.listAll();
	assert.ok(all.some((i) => i.path === sm.getSessionFile()));
	const inDir = await SessionManager.listAll(sm.getSessionDir());
	assert.deepEqual(inDir.map((i) => i.path), [sm.getSessionFile()]);
	const ac = new AbortController();
	ac.abort();
	await assert.rejects(SessionManager.list(cwd, undefined, undefined, ac.signal));
	assert.equal(SessionManager.findById(cwd, sm.getSessionId()), sm.getSessionFile());
	assert.equal(SessionManager.findById(cwd, "01234567-89ab-7def-8123-456789abcdef"), undefined);
});

test("newSession and setSessionFile switch the manager as pi's do", () => {
	const cwd = path.join(W, "switch");
	const sm = SessionManager.create(cwd);
	sm.appendMessage({ role: "user", content: "one", timestamp: 6 });
	const first = sm.getSessionFile();
	assert.equal(sm.usesDefaultSessionDir(), true);
	const second = sm.newSession({ parentSession: first });
	assert.notEqual(second, first);
	assert.equal(sm.getHeader().parentSession, first);
	assert.deepEqual(sm.getBranch(), []);
	sm.setSessionFile(first);
	assert.equal(sm.getSessionFile(), first);
	assert.equal(sm.getBranch()[0].message.content, "one");
});

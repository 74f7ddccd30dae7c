// buildSessionProjection() and buildSessionContext() are read from the database again only when
// the session changes: what each call gets must still be what pi's gets, with pi's sharing
// (the projection's messages are its entries' messages, flattened) and new arrays each call.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { SessionManager } from "../index.js";

assert.ok(process.env.SESSIONDB_NODE_HOME, "SESSIONDB_NODE_HOME must hold pi 1.6.0 (.ci/node.sh installs it)");
const pi = await import(
	pathToFileURL(path.join(process.env.SESSIONDB_NODE_HOME, "node_modules/@earendil-works/pi-coding-agent/dist/index.js")).href
);
const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-projection-"));
process.env.PI_CODING_AGENT_DIR = path.join(W, "agent");
SessionManager.useDatabase(path.join(W, "db.sqlite"));
test.after(() => fs.rmSync(W, { recursive: true, force: true }));

const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: 1 });
const assistant = (text) => ({
	role: "assistant",
	content: [{ type: "text", text }],
	api: "faux",
	provider: "faux",
	model: "faux-1",
	usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
	stopReason: "stop",
	timestamp: 2,
});

/** The same steps on pi's manager and ours, each followed by `check(ours, pi's)`. */
function steps(check) {
	const ours = SessionManager.create(W, path.join(W, "sessions"));
	const theirs = pi.SessionManager.inMemory(W);
	const both = (f) => [f(ours), f(theirs)];
	const ids = [];
	const step = (f) => {
		const [a, b] = both(f);
		ids.push([a, b]);
		check(ours, theirs);
	};
	step((sm) => sm.appendMessage(user("first question")));
	step((sm) => sm.appendMessage(assistant("first answer")));
	step((sm) => sm.appendMessage(user("second question")));
	step((sm) => sm.appendMessage(assistant("second answer")));
	step((sm) => sm.appendCompaction("what came before", sm === ours ? ids[2][0] : ids[2][1], 1000));
	step((sm) => sm.appendMessage(user("third question")));
	both((sm) => sm.branch(sm === ours ? ids[1][0] : ids[1][1]));
	check(ours, theirs);
	both((sm) => sm.resetLeaf());
	check(ours, theirs);
}

/** Values without ids and times, which differ between the two managers. */
const shape = (projection) =>
	JSON.parse(JSON.stringify(projection, (k, v) => (k === "id" || k === "parentId" || k === "timestamp" || k === "firstKeptEntryId" ? undefined : v)));

test("each call equals pi's, with new arrays and the same messages while nothing changes", () => {
	let checked = 0;
	steps((ours, theirs) => {
		const a = ours.buildSessionProjection();
		const b = ours.buildSessionProjection();
		assert.deepEqual(shape(a), shape(theirs.buildSessionProjection()));
		assert.deepEqual(shape(ours.buildSessionContext()), shape(theirs.buildSessionContext()));
		assert.notEqual(a, b);
		assert.notEqual(a.messages, b.messages);
		assert.notEqual(a.entries, b.entries);
		a.entries.forEach((e, i) => {
			assert.notEqual(e, b.entries[i]);
			assert.equal(e.sourceEntry, b.entries[i].sourceEntry);
		});
		// As pi's: the projection's messages are its entries' messages.
		assert.deepEqual(a.messages, a.entries.flatMap((e) => e.messages));
		a.messages.forEach((m, i) => assert.equal(m, a.entries.flatMap((e) => e.messages)[i]));
		a.messages.forEach((m, i) => assert.equal(m, b.messages[i]));
		const c = ours.buildSessionContext();
		c.messages.forEach((m, i) => assert.equal(m, a.messages[i]));
		// A caller changing its arrays changes nothing the next call gets.
		a.messages.push(user("not in the session"));
		a.entries.pop();
		assert.deepEqual(shape(ours.buildSessionProjection()), shape(theirs.buildSessionProjection()));
		checked++;
	});
	assert.equal(checked, 8);
});

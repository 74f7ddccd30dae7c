// A branch longer than 2,000 entries is read lazily: it must still be pi's getBranch(), entry
// for entry (same JSON, same ids and types, array methods and spreading included), while only
// what is looked at gets parsed.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { SessionManager } from "../index.js";

test("a long branch read lazily is pi's branch, entry for entry", () => {
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-lazy-"));
	try {
		SessionManager.useDatabase(path.join(W, "db.sqlite"));
		const sm = SessionManager.create(path.join(W, "p"));
		const ids = [];
		for (let i = 0; i < 2600; i++) {
			if (i % 500 === 250) ids.push(sm.appendModelChange("prov", `model-${i}`));
			else ids.push(sm.appendMessage({ role: i % 2 ? "assistant" : "user", content: `message ${i} \u00e9`, timestamp: i }));
		}
		sm.branch(ids[1000]);
		const side = sm.appendMessage({ role: "user", content: "a side branch", timestamp: 1 });
		sm.branch(ids[2599]);
		ids.push(sm.appendMessage({ role: "user", content: "the last", timestamp: 2 })); // the leaf again on the long branch
		const file = sm.getSessionFile();
		const lazy = SessionManager.open(file).getBranch();
		// pi's getBranch over pi's own parse of the file: the later line of a repeated id wins.
		const piFile = path.join(W, "pi.jsonl");
		const piBranch = (fromId) => {
			SessionManager.open(file).writeSessionFile(piFile);
			const byId = new Map();
			const lines = fs.readFileSync(piFile, "utf8").trim().split("\n").slice(1).map((l) => JSON.parse(l));
			for (const e of lines) byId.set(e.id, e);
			const out = [];
			for (let e = byId.get(fromId ?? lines.at(-1).id); e; e = e.parentId ? byId.get(e.parentId) : undefined) out.push(e);
			return out.reverse();
		};
		const expected = piBranch();
		assert.equal(lazy.length, 2601);
		assert.equal(lazy.length, expected.length);
		assert.ok(Array.isArray(lazy));
		assert.equal(lazy.findIndex((e) => e.id === ids[2500]), 2500);
		assert.equal(lazy[lazy.length - 1].type, "message");
		assert.equal(lazy.filter((e) => e.type === "model_change").length, 5);
		assert.equal(JSON.stringify(lazy), JSON.stringify(expected));
		assert.deepEqual([...lazy].reverse()[0], expected[expected.length - 1]);
		assert.deepEqual(Object.keys(lazy[3]), Object.keys(expected[3]));
		assert.equal(lazy[3].message.content, "message 3 \u00e9");
		assert.ok(!lazy.some((e) => e.id === side));
		// From another entry, and an unknown one.
		const from = SessionManager.open(file);
		assert.equal(JSON.stringify(from.getBranch(ids[2100])), JSON.stringify(expected.slice(0, 2101)));
		assert.deepEqual(from.getBranch("nope"), []);
		// Appends below a path read before: the path grows by the new entries.
		const grow = SessionManager.open(file);
		assert.equal(grow.getBranch().length, 2601);
		const more = { role: "user", content: "more", timestamp: 5 };
		const added = [grow.appendMessage(more), grow.appendCustomEntry("note", { n: 1 })];
		const grown = grow.getBranch();
		assert.equal(grown.length, 2603);
		assert.deepEqual([grown[2601].id, grown[2602].id, grown[2602].type], [...added, "custom"]);
		// As with pi: the appended message is the caller's object (pi's AgentSession looks its
		// entry up by identity), and each getBranch() holds the same entry objects.
		assert.equal(grown[2601].message, more);
		assert.equal(grow.getBranch()[17], grown[17]);
		assert.notEqual(grow.getBranch(), grown);
		assert.equal(grow.getEntries().find((e) => e.id === added[0]).message, more);
		assert.equal(JSON.stringify(grown), JSON.stringify(piBranch()));
		// getEntries() of a long session is lazy too; usages are read without parsing the lines.
		const usage = { input: 3, output: 4.5, cacheRead: 0, cacheWrite: 1, totalTokens: 8.5, cost: { total: 0.1 } };
		grow.appendMessage({ role: "assistant", content: [], usage, timestamp: 6 });
		grow.appendMessage({ role: "toolResult", content: [], usage: null, timestamp: 7 });
		grow.appendUsage("cache_warm", "prov", "m", usage, "note");
		grow.appendCompaction("sum", ids[2500], 10, undefined, undefined, usage);
		const all = SessionManager.open(file).getEntries();
		SessionManager.open(file).writeSessionFile(path.join(W, "s.jsonl")); // pi's file
		const want = fs.readFileSync(path.join(W, "s.jsonl"), "utf8").trim().split("\n").slice(1).map((l) => JSON.parse(l));
		assert.equal(all.length, want.length);
		const usages = (entries) => entries.map((e) => [e.type, e.message?.role, e.usage, e.message?.usage]);
		assert.deepEqual(usages(all), usages(want));
		assert.equal(JSON.stringify(all), JSON.stringify(want));
		const live = SessionManager.open(file);
		assert.equal(live.getEntries().length, want.length);
		const after = live.appendMessage({ role: "user", content: "after", timestamp: 8 });
		const again = live.getEntries();
		assert.equal(again.length, want.length + 1);
		assert.equal(again.at(-1).id, after);
		assert.equal(again[4], live.getEntries()[4]);
	} finally {
		fs.rmSync(W, { recursive: true, force: true });
	}
});

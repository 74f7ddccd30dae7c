// getTree() is built from the stored links (tree.cjs), with a long session's entries parsed only
// when read: it must be pi's getTree() node for node (entries, children in pi's order, labels and
// their timestamps), and building it must parse no more than one window of entries.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

const HOME = process.env.SESSIONDB_NODE_HOME || path.join(os.homedir(), ".cache", "sessiondb-node");
const PI = path.join(HOME, "node_modules", "@earendil-works", "pi-coding-agent");
const cli = process.env.SESSIONDB_BIN;
const here = path.dirname(new URL(import.meta.url).pathname);

/**
 * A 3,000-entry session file with what pi's getTree() sorts and resolves: branch points whose
 * children are out of time order in the file, equal times, invalid and missing timestamps, a
 * repeated id, an orphan, labels set, changed, cleared and set again, a label without a timestamp.
 */
function writeSession(file) {
	const lines = [{ type: "session", version: 3, id: "0199a000-0000-7000-8000-000000000000", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp/p" }];
	const t0 = Date.parse("2026-01-01T00:00:00.000Z");
	let parent = null;
	let n = 0;
	const msg = (role, text, ts, p = parent, id = `e${++n}`) => {
		const content = role === "assistant" ? [{ type: "text", text }] : text;
		lines.push({ type: "message", id, parentId: p, timestamp: ts, message: { role, content, timestamp: 0 } });
		return id;
	};
	const branchPoints = [];
	for (let i = 0; i < 2900; i++) {
		parent = msg(i % 2 ? "assistant" : "user", `entry ${i} \u00e9`, new Date(t0 + i * 1000).toISOString());
		if (i % 300 === 150) branchPoints.push(parent);
	}
	const leaf = parent;
	// Siblings under each branch point, written out of time order.
	for (const [k, p] of branchPoints.entries()) {
		msg("user", `late ${k}`, new Date(t0 + 9e9 + k).toISOString(), p);
		msg("user", `early ${k}`, new Date(t0 - 9e9).toISOString(), p);
		msg("user", `same ${k}`, new Date(t0 - 9e9).toISOString(), p);
		msg("user", `bad time ${k}`, "not a date", p);
		if (k % 2) msg("user", `no time ${k}`, undefined, p);
	}
	msg("assistant", "repeated id, first line", new Date(t0).toISOString(), branchPoints[1], "dup");
	msg("assistant", "repeated id, second line", new Date(t0 + 5).toISOString(), branchPoints[2], "dup");
	msg("user", "an orphan", new Date(t0).toISOString(), "no-such-parent");
	const label = (targetId, value, ts = new Date(t0 + 7).toISOString()) =>
		lines.push({ type: "label", id: `l${++n}`, parentId: leaf, timestamp: ts, targetId, label: value });
	label("e10", "first");
	label("e20", "second");
	label("e10", "first, changed");
	label("e20", undefined);
	label("e30", "third", undefined);
	label("e20", "second again");
	fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
	return lines.length - 1;
}

test("getTree() of a long session is pi's, node for node, and parses one window at most", async (t) => {
	if (!cli || !fs.existsSync(path.join(PI, "package.json"))) {
		t.skip("needs SESSIONDB_BIN and pi 1.6.0 in SESSIONDB_NODE_HOME (test.sh)");
		return;
	}
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-tree-"));
	try {
		const file = path.join(W, "s.jsonl");
		const count = writeSession(file);
		const db = path.join(W, "db.sqlite");
		execFileSync(cli, ["--db", db, "import", file]);
		const { SessionManager } = await import("../index.js");
		SessionManager.useLeases(false);
		SessionManager.useDatabase(db);
		const ours = SessionManager.open(file).getTree();
		const pi = await import(pathToFileURL(path.join(PI, "dist", "core", "session-manager.js")).href);
		const theirs = pi.SessionManager.open(file).getTree();
		// Iteratively: the tree is 2,900 levels deep.
		const a = [...ours];
		const b = [...theirs];
		assert.equal(a.length, b.length);
		let nodes = 0;
		while (b.length > 0) {
			const x = a.pop();
			const y = b.pop();
			nodes++;
			assert.deepEqual(Object.keys(x), Object.keys(y));
			assert.equal(JSON.stringify(x.entry), JSON.stringify(y.entry));
			assert.equal(x.label, y.label);
			assert.equal(x.labelTimestamp, y.labelTimestamp);
			assert.deepEqual(
				x.children.map((c) => c.entry.id),
				y.children.map((c) => c.entry.id),
			);
			a.push(...x.children);
			b.push(...y.children);
		}
		assert.ok(nodes >= count - 1, `${nodes} nodes`);
		// Building the tree and reading what pi's tree selector reads of every node (ids, parents,
		// types, roles) parses at most one window of 256 lines (the root's null parentId).
		const counts = path.join(W, "counts.json");
		const script = `
			const { SessionManager } = require(${JSON.stringify(path.join(here, "..", "index.cjs"))});
			SessionManager.useLeases(false);
			SessionManager.useDatabase(${JSON.stringify(db)});
			const stack = [...SessionManager.open(${JSON.stringify(file)}).getTree()];
			let seen = 0;
			while (stack.length) {
				const n = stack.pop();
				if (n.entry.id && n.entry.type && (n.entry.parentId !== undefined) && (n.entry.type !== "message" || n.entry.message.role)) seen++;
				stack.push(...n.children);
			}
			if (seen < ${count - 10}) throw new Error("saw " + seen);`;
		execFileSync(process.execPath, ["-e", script], { env: { ...process.env, SESSIONDB_COUNT_PARSES: counts } });
		const parsed = JSON.parse(fs.readFileSync(counts, "utf8"));
		assert.ok(parsed.lines <= 256, `parsed ${parsed.lines} lines`);
	} finally {
		fs.rmSync(W, { recursive: true, force: true });
	}
});

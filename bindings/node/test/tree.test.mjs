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
import { writeSession } from "./tree-session.mjs";

const HOME = process.env.SESSIONDB_NODE_HOME || path.join(os.homedir(), ".cache", "sessiondb-node");
const PI = path.join(HOME, "node_modules", "@earendil-works", "pi-coding-agent");
const cli = process.env.SESSIONDB_BIN;
const here = path.dirname(new URL(import.meta.url).pathname);

test("getTree() of a long session is pi's, node for node, and parses one window at most", async (t) => {
	if (!cli || !fs.existsSync(path.join(PI, "package.json"))) {
		t.skip("needs SESSIONDB_BIN and pi 1.6.0 in SESSIONDB_NODE_HOME (test.sh)");
		return;
	}
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-tree-"));
	try {
		const file = path.join(W, "s.jsonl");
		const count = writeSession(file, "/tmp/p", { stringContents: true });
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

test("pi's tree selector on a long session draws plain pi's rows without parsing every assistant", async (t) => {
	if (!cli || !fs.existsSync(path.join(PI, "package.json"))) {
		t.skip("needs SESSIONDB_BIN and pi 1.6.0 in SESSIONDB_NODE_HOME (test.sh)");
		return;
	}
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-tree-rows-"));
	try {
		const file = path.join(W, "s.jsonl");
		writeSession(file, "/tmp/p", { stringContents: true });
		const db = path.join(W, "db.sqlite");
		execFileSync(cli, ["--db", db, "import", file]);
		// pi's TreeList is not exported: the class of a selector's list is patched, as the
		// launcher patches it where pi makes one (pi/tree-selector.mjs).
		const url = (p) => JSON.stringify(pathToFileURL(p).href);
		const script = `
			const dist = ${JSON.stringify(path.join(PI, "dist"))};
			const theme = await import(${url(path.join(PI, "dist", "modes", "interactive", "theme", "theme.js"))});
			theme.initTheme("dark");
			const { TreeSelectorComponent } = await import(${url(path.join(PI, "dist", "modes", "interactive", "components", "tree-selector.js"))});
			const pi = await import(${url(path.join(PI, "dist", "core", "session-manager.js"))});
			const { patch } = await import(${url(path.join(here, "..", "pi", "tree-selector.mjs"))});
			const { SessionManager } = await import(${url(path.join(here, "..", "index.js"))});
			if (!process.env.UNPATCHED) patch(new TreeSelectorComponent([], null, 40, () => {}, () => {}, () => {}).getTreeList().constructor);
			SessionManager.useLeases(false);
			SessionManager.useDatabase(${JSON.stringify(db)});
			const rows = (sm) => {
				const selector = new TreeSelectorComponent(sm.getTree(), sm.getLeafId(), 40, () => {}, () => {}, () => {});
				const list = selector.getTreeList();
				const screens = [list.render(150)];
				// Another filter (applyFilter again), then the first of the rows.
				list.filterMode = "no-tools";
				list.applyFilter();
				screens.push(list.render(150));
				list.selectedIndex = 0;
				screens.push(list.render(150));
				return screens;
			};
			const ours = rows(SessionManager.open(${JSON.stringify(file)}));
			const theirs = rows(pi.SessionManager.open(${JSON.stringify(file)}));
			process.stdout.write(JSON.stringify({ ours, theirs }));
			process.exit(0);`;
		const run = (env) => {
			const counts = path.join(W, "counts.json");
			const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, ...env, SESSIONDB_COUNT_PARSES: counts }, maxBuffer: 1 << 26 });
			return { ...JSON.parse(out), counts: JSON.parse(fs.readFileSync(counts, "utf8")) };
		};
		const { ours, theirs, counts } = run({});
		assert.equal(ours.length, 3);
		assert.match(theirs[0].join("\n"), /\[read: file-2900\.txt\]/);
		assert.deepEqual(ours, theirs);
		// The rows on screen parse a window each; the assistants (about 1,650) are scanned natively.
		assert.ok(counts.rows > 1600, `${counts.rows} assistants scanned`);
		assert.ok(counts.lines <= 1024, `parsed ${counts.lines} lines`);
		// Unpatched, pi's TreeList reads every assistant body (the check above can fail).
		const unpatched = run({ UNPATCHED: "1" });
		assert.deepEqual(unpatched.ours, theirs);
		assert.ok(unpatched.counts.lines > 1600, `unpatched: parsed ${unpatched.counts.lines} lines`);
	} finally {
		fs.rmSync(W, { recursive: true, force: true });
	}
});

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
import { writeRandomSession, writeSession } from "./tree-session.mjs";

const HOME = process.env.SESSIONDB_NODE_HOME || path.join(os.homedir(), ".cache", "sessiondb-node");
const PI = path.join(HOME, "node_modules", "@earendil-works", "pi-coding-agent");
const cli = process.env.SESSIONDB_BIN;
const here = path.dirname(new URL(import.meta.url).pathname);

/** Runs `fn` in a scratch folder (removed after), or skips the test without pi or the CLI. */
async function inScratch(t, name, fn) {
	if (!cli || !fs.existsSync(path.join(PI, "package.json"))) {
		t.skip("needs SESSIONDB_BIN and pi 1.6.0 in SESSIONDB_NODE_HOME (test.sh)");
		return;
	}
	const W = fs.mkdtempSync(path.join(os.tmpdir(), name));
	try {
		await fn(W);
	} finally {
		fs.rmSync(W, { recursive: true, force: true });
	}
}

/**
 * The opening of a module script with pi's TreeSelectorComponent and session manager, this
 * package's SessionManager on `db`, and pi's TreeList patched (unless $UNPATCHED): the class is
 * not exported, so a selector's list's is patched, as the launcher patches it where pi makes one
 * (pi/tree-selector.mjs).
 */
function selectorPrelude(db) {
	const url = (p) => JSON.stringify(pathToFileURL(p).href);
	return `
		const theme = await import(${url(path.join(PI, "dist", "modes", "interactive", "theme", "theme.js"))});
		theme.initTheme("dark");
		const { TreeSelectorComponent } = await import(${url(path.join(PI, "dist", "modes", "interactive", "components", "tree-selector.js"))});
		const pi = await import(${url(path.join(PI, "dist", "core", "session-manager.js"))});
		const { patch } = await import(${url(path.join(here, "..", "pi", "tree-selector.mjs"))});
		const { SessionManager } = await import(${url(path.join(here, "..", "index.js"))});
		if (!process.env.UNPATCHED) patch(new TreeSelectorComponent([], null, 40, () => {}, () => {}, () => {}).getTreeList().constructor);
		SessionManager.useLeases(false);
		SessionManager.useDatabase(${JSON.stringify(db)});`;
}

test("getTree() of a long session is pi's, node for node, and parses one window at most", async (t) => {
	await inScratch(t, "sessiondb-tree-", async (W) => {
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
	});
});

test("pi's tree selector on a long session draws plain pi's rows without parsing every assistant", async (t) => {
	await inScratch(t, "sessiondb-tree-rows-", async (W) => {
		const file = path.join(W, "s.jsonl");
		writeSession(file, "/tmp/p", { stringContents: true });
		const db = path.join(W, "db.sqlite");
		execFileSync(cli, ["--db", db, "import", file]);
		const script = `${selectorPrelude(db)}
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
	});
});

test("pi's tree selector rows over the links are pi's own, field for field, in every filter", async (t) => {
	await inScratch(t, "sessiondb-tree-list-", async (W) => {
		// The fixture of the tests above, and random trees long enough to be read lazily (their
		// assistants answered by stored rows), and one short enough to be parsed at once.
		const files = [path.join(W, "fixture.jsonl")];
		writeSession(files[0], "/tmp/p", { stringContents: true });
		const leaves = {};
		for (const [seed, count] of [[1, 2600], [2, 2600], [3, 3000], [4, 400]]) {
			const file = path.join(W, `random-${seed}.jsonl`);
			const ids = writeRandomSession(file, seed, count);
			// A leaf moved to an earlier entry on some (pi's branch()).
			if (seed % 2 === 0) leaves[file] = ids[Math.floor(ids.length / 3)];
			files.push(file);
		}
		const db = path.join(W, "db.sqlite");
		execFileSync(cli, ["--db", db, "import", ...files]);
		// Patched for both: over pi's own tree (not built from links) pi's passes run.
		const script = `${selectorPrelude(db)}
			const leaves = ${JSON.stringify(leaves)};
			const row = (f) => [f.node.entry.id, f.indent, f.showConnector, f.isLast, JSON.stringify(f.gutters), f.isVirtualRootChild, f.node.label ?? null];
			const state = (list) => ({
				// Asked first: the visible maps' get and has, before anything reads them whole.
				screen: list.render(120),
				lookups: [null, "no-such-id", ...list.flatNodes.map((f) => f.node.entry.id)].map((id) => [
					list.visibleParentMap.get(id),
					list.visibleParentMap.has(id),
					list.visibleChildrenMap.get(id),
					list.visibleChildrenMap.has(id),
				]),
				flat: list.flatNodes.map(row),
				filtered: list.filteredNodes.map(row),
				selectedIndex: list.selectedIndex,
				lastSelectedId: list.lastSelectedId,
				multipleRoots: list.multipleRoots,
				active: [...list.activePathIds],
				visibleParent: [...list.visibleParentMap],
				visibleChildren: [...list.visibleChildrenMap],
				tools: [...list.toolCallMap].map(([id, c]) => [id, c.name, JSON.stringify(c.arguments)]),
				sizes: [list.visibleParentMap.size, list.visibleChildrenMap.size],
			});
			const run = (sm, file, initial) => {
				if (leaves[file]) sm.branch(leaves[file]);
				const out = [];
				const list = new TreeSelectorComponent(sm.getTree(), sm.getLeafId(), 30, () => {}, () => {}, () => {}, initial).getTreeList();
				out.push(state(list));
				for (const mode of ["no-tools", "user-only", "labeled-only", "all", "default"]) {
					list.filterMode = mode;
					list.foldedNodes.clear();
					list.applyFilter();
					out.push(state(list));
				}
				// Fold the first two foldable rows, then a search, then the search cleared.
				for (let k = 0, folded = 0; k < list.filteredNodes.length && folded < 2; k++) {
					const id = list.filteredNodes[k].node.entry.id;
					if (list.isFoldable(id)) {
						list.foldedNodes.add(id);
						list.applyFilter();
						folded++;
						out.push(state(list));
					}
				}
				list.selectedIndex = Math.floor(list.filteredNodes.length / 2);
				out.push(list.findBranchSegmentStart("up"), list.findBranchSegmentStart("down"));
				list.searchQuery = "question 1";
				list.foldedNodes.clear();
				list.applyFilter();
				out.push(state(list));
				list.searchQuery = "";
				list.applyFilter();
				out.push(state(list));
				return out;
			};
			const result = [];
			for (const file of ${JSON.stringify(files)}) {
				const ids = pi.SessionManager.open(file).getEntries().map((e) => e.id);
				// Selected at first: the leaf, an entry half way, an entry of no root's subtree.
				for (const initial of [undefined, ids[Math.floor(ids.length / 2)], ids.find((id) => id.endsWith("loop1"))]) {
					result.push({ file, initial, ours: run(SessionManager.open(file), file, initial), theirs: run(pi.SessionManager.open(file), file, initial) });
				}
			}
			(await import("node:fs")).writeFileSync(${JSON.stringify(path.join(W, "result.json"))}, JSON.stringify(result));
			process.exit(0);`;
		const counts = path.join(W, "counts.json");
		execFileSync(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, SESSIONDB_COUNT_PARSES: counts } });
		const result = JSON.parse(fs.readFileSync(path.join(W, "result.json"), "utf8"));
		assert.equal(result.length, 3 * files.length);
		for (const { file, initial, ours, theirs } of result) {
			assert.ok(theirs[0].flat.length > 300, `${file}: ${theirs[0].flat.length} rows`);
			assert.equal(ours.length, theirs.length, file);
			for (let k = 0; k < theirs.length; k++) assert.deepEqual(ours[k], theirs[k], `${path.basename(file)} (initial ${initial}), step ${k}`);
		}
		// Every list of ours was built over the links (none fell back to pi's passes).
		const parsed = JSON.parse(fs.readFileSync(counts, "utf8"));
		assert.equal(parsed.treeLists, 3 * files.length);
	});
});

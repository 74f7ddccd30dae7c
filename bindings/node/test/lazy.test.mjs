// A branch longer than 2,000 entries is read lazily: it must still be pi's getBranch(), entry
// for entry (same JSON, same ids and types, array methods and spreading included), while only
// what is looked at gets parsed.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import { types } from "node:util";
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
		// An entry on the path held (pi's /tree navigation asks for the old leaf's path, then for
		// the target's): its path is the held one's beginning, the same entry objects; then the
		// leaf's again.
		const above = SessionManager.open(file);
		const whole = above.getBranch();
		const upper = above.getBranch(ids[2300]);
		assert.equal(JSON.stringify(upper), JSON.stringify(expected.slice(0, 2301)));
		assert.equal(upper[700], whole[700]);
		assert.equal(JSON.stringify(above.getBranch()), JSON.stringify(expected));
		// A short one is parsed, as any path of 2,000 entries or fewer.
		assert.equal(JSON.stringify(above.getBranch(ids[1000])), JSON.stringify(expected.slice(0, 1001)));
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
		// getEntries() after getBranch(): the entries read with the path (one read of the
		// links), then those appended since.
		const both = SessionManager.open(file);
		assert.equal(both.getBranch().at(-1).id, after);
		const last = both.appendMessage({ role: "user", content: "both", timestamp: 9 });
		const bothAll = both.getEntries();
		assert.equal(bothAll.length, want.length + 2);
		assert.equal(JSON.stringify(bothAll.slice(0, want.length)), JSON.stringify(want));
		assert.deepEqual(bothAll.slice(-2).map((e) => e.id), [after, last]);
	} finally {
		fs.rmSync(W, { recursive: true, force: true });
	}
});

const piDist = path.join(process.env.SESSIONDB_NODE_HOME ?? path.join(os.homedir(), ".cache", "sessiondb-node"), "node_modules", "@earendil-works", "pi-coding-agent", "dist");
const indexUrl = new URL("../index.js", import.meta.url).href;

/**
 * Runs `body` (a module's code, with `sm`: session `file` opened from database `db`, and `pi`:
 * the URL of pi's dist/ folder) in a new process counting the bodies the binding reads
 * (parse-count.cjs); returns what the body printed, as JSON, and the counts.
 */
function counted(db, file, body) {
	const countFile = path.join(path.dirname(db), "counts.json");
	fs.rmSync(countFile, { force: true });
	const script = [
		`import { SessionManager } from ${JSON.stringify(indexUrl)};`,
		"SessionManager.useLeases(false);",
		`SessionManager.useDatabase(${JSON.stringify(db)});`,
		`const sm = SessionManager.open(${JSON.stringify(file)});`,
		`const pi = ${JSON.stringify(pathToFileURL(piDist).href)};`,
		body,
	].join("\n");
	const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, SESSIONDB_COUNT_PARSES: countFile }, encoding: "utf8" });
	assert.equal(r.status, 0, r.stderr);
	return { out: JSON.parse(r.stdout), counts: JSON.parse(fs.readFileSync(countFile, "utf8")) };
}

// pi's footer (modes/interactive/components/footer.js, getSessionStats) over `entries`, reading
// what it reads; an assistant whose usage has no `cost` is left out (pi's footer throws on it).
const FOOTER = `
	const t = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0 };
	const add = (u) => { t.input += u.input; t.output += u.output; t.cacheRead += u.cacheRead; t.cacheWrite += u.cacheWrite; t.cost += u.cost.total; };
	let rate;
	for (const e of entries) {
		if (e.type === "usage") add(e.usage);
		else if (e.type === "message" && e.message.role === "assistant") {
			if (!e.message.usage?.cost) continue;
			add(e.message.usage);
			const p = e.message.usage.input + e.message.usage.cacheRead + e.message.usage.cacheWrite;
			rate = p > 0 ? (e.message.usage.cacheRead / p) * 100 : undefined;
		} else if (e.type === "message" && e.message.role === "toolResult" && e.message.usage) add(e.message.usage);
		else if ((e.type === "branch_summary" || e.type === "compaction") && e.usage) add(e.usage);
	}
	return JSON.stringify([t, rate]);`;
const footer = new Function("entries", FOOTER);

/**
 * A long session in a new database in `W` whose entries carry usages of every kind pi's totals
 * read, among them usages no row gives back exactly (`inLine` of them: only their lines give
 * them). `piEntries()` is pi's parse of the session's file as it is now. pi's footer throws on
 * its assistants whose usage is null or an array, unless `piFooterThrows` is false (they are
 * left out then).
 */
function usageSession(W, { piFooterThrows = true } = {}) {
	const db = path.join(W, "db.sqlite");
	SessionManager.useDatabase(db);
	const sm = SessionManager.create(path.join(W, "p"));
	const full = (n) => ({ input: n, output: 2 * n, cacheRead: 3, cacheWrite: 4, totalTokens: 3 * n + 7, cost: { input: 0.1, output: 0.2, cacheRead: 0, cacheWrite: 0, total: 0.1 + 0.2 } });
	// Usages whose numbers a row cannot give back exactly (and pi's NaN or missing values).
	const odd = [
		{ input: 1, output: 2, cacheRead: 3, totalTokens: 6, cost: { total: 0.5 } }, // no cacheWrite
		{ input: 1, output: 2, cacheRead: 3, cacheWrite: 4, cost: 0.5 }, // cost a number
		{ input: 1, output: 2, cacheRead: 3, cacheWrite: 4, cost: { total: -0.5 } },
		{ input: 1.5, output: 2, cacheRead: 3, cacheWrite: 4, cost: { total: 0.5 } },
		{ input: 1, output: 2, cacheRead: 3, cacheWrite: 4, cost: { total: 2e6 } },
		{ cacheWrite1h: 1, reasoning: 2, input: 1, output: 2, cacheRead: 3, cacheWrite: 4, cost: { totalFromProvider: true, total: 7 } }, // exact, keys in another order
	];
	let inLine = 0; // the entries whose usages only their lines give
	for (let i = 0; i < 2400; i++) {
		if (i % 2 === 0) sm.appendMessage({ role: "user", content: `q ${i}`, timestamp: i });
		else if (i % 97 === 1) {
			const k = (i >> 1) % odd.length;
			inLine += k === 5 ? 0 : 1;
			sm.appendMessage({ role: "assistant", content: [], provider: "p", model: "m", usage: odd[k], timestamp: i });
		} else if (i % 89 === 3) {
			inLine += i % 4 === 1 ? 1 : 0;
			sm.appendMessage({ role: "toolResult", toolCallId: "t", content: [], usage: i % 4 === 1 ? full(i) : undefined, timestamp: i });
		} else if (i % 301 === 5) sm.appendCompaction(`sum ${i}`, undefined, 10, undefined, undefined, i % 3 ? full(i) : undefined);
		else if (i % 307 === 7) sm.appendUsage("cache_warm", "prov", "m", full(i), "note");
		else if (i % 311 === 9) {
			if (!piFooterThrows) continue;
			inLine++;
			sm.appendMessage({ role: "assistant", content: [], usage: i % 2 ? null : [], timestamp: i });
		} else if (i % 313 === 11) {
			inLine++; // a provider no row holds whole
			sm.appendMessage({ role: "assistant", content: [], provider: "\ud800p", model: "m", usage: full(i), timestamp: i });
		} else sm.appendMessage({ role: "assistant", content: [{ type: "text", text: `a ${i}` }], provider: "p", model: `m${i % 3}`, usage: full(i), timestamp: i });
	}
	const file = sm.getSessionFile();
	const piEntries = () => {
		SessionManager.open(file).writeSessionFile(path.join(W, "pi.jsonl"));
		return fs.readFileSync(path.join(W, "pi.jsonl"), "utf8").trim().split("\n").slice(1).map((l) => JSON.parse(l));
	};
	return { db, sm, file, full, odd, inLine, piEntries };
}

// pi's footer and session statistics sum every entry's usage (addUsageToTotals: `input`,
// `output`, `cacheRead`, `cacheWrite`, `cost.total`). A long session's lazy entries answer
// those from the store's usage rows where a row holds exactly the line's numbers, know from the
// store which entries have no usage, and read the lines of the others: every usage, total and
// JSON must be pi's, whatever the line holds, and only those lines are read.
test("a long session's usages are pi's, read from the lines only where the rows do not give them", () => {
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-lazy-usage-"));
	try {
		const { db, file, full, odd, inLine, piEntries } = usageSession(W);
		const lazy = SessionManager.open(file);
		const all = lazy.getEntries();
		const want = piEntries();
		assert.equal(footer(all), footer(want));
		const fromRows = all.filter((e) => e.type === "message" && e.message.role === "assistant" && types.isProxy(e.message.usage));
		assert.ok(fromRows.length > 1000, `usages from rows: ${fromRows.length}`);
		assert.ok(!types.isProxy(all.find((e) => e.message?.role === "toolResult" && e.message.usage)?.message.usage), "a toolResult's usage has no row");
		const fields = (u) => (u && typeof u === "object" ? [u.input, u.output, u.cacheRead, u.cacheWrite, u.cost?.total, Object.keys(u), typeof u.cost, JSON.stringify(u)] : u);
		const usages = (entries) => entries.map((e) => [e.type, e.message?.role, fields(e.usage), fields(e.message?.usage), e.message?.provider, e.message?.model]);
		assert.deepEqual(usages(all), usages(want));
		assert.equal(JSON.stringify(all), JSON.stringify(want));

		// In a fresh process: the footer reads the lines of the entries whose rows do not give
		// their usages, and parses none.
		const walk = counted(db, file, `const entries = sm.getEntries();\n${FOOTER.replace("return JSON.stringify([t, rate]);", "console.log(JSON.stringify([t, rate]));")}`);
		assert.equal(JSON.stringify(walk.out), footer(want));
		assert.deepEqual([walk.counts.lines, walk.counts.usages], [0, inLine], `counts: ${JSON.stringify(walk.counts)}, ${inLine} usages in lines`);

		// Appends after the rows were read (by another manager): the new rows are read, the old
		// ones kept.
		const live = SessionManager.open(file);
		const reader = SessionManager.open(file);
		const before = footer(reader.getEntries());
		live.appendMessage({ role: "assistant", content: [], usage: full(5), timestamp: 9 });
		live.appendMessage({ role: "assistant", content: [], usage: odd[0], timestamp: 9 });
		live.appendMessage({ role: "toolResult", toolCallId: "t", content: [], usage: full(6), timestamp: 9 });
		assert.equal(footer(live.getEntries()), footer(piEntries())); // (and its appends settled)
		const grown = reader.getEntries();
		assert.equal(grown.length, all.length + 3);
		assert.notEqual(footer(grown), before);
		assert.equal(footer(grown), footer(piEntries()));
		assert.ok(types.isProxy(grown.at(-3).message.usage));
		assert.deepEqual(usages(grown), usages(piEntries()));
		// A fork holds copies of the rows and of the list.
		const forked = SessionManager.forkFrom(file, path.join(W, "fork"));
		assert.equal(footer(forked.getEntries()), footer(piEntries()));
		assert.deepEqual(usages(forked.getEntries()), usages(piEntries()));
	} finally {
		fs.rmSync(W, { recursive: true, force: true });
	}
});

// pi's FooterComponent.getSessionStats, patched as sessiondb-pi patches it (pi/footer.mjs), over
// a long session: its totals walk reads plain stand-ins of the store's usage rows, and the lazy
// entries whose usages only their lines give. Its stats (and its errors) must be pi's own
// footer's over pi's own SessionManager of the same file, before and after appends.
test("pi's footer sums the store's usage rows and gives pi's own stats", async () => {
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-footer-"));
	try {
		const footerUrl = pathToFileURL(path.join(piDist, "modes", "interactive", "components", "footer.js")).href;
		const { FooterComponent } = await import(footerUrl);
		const { SessionManager: PiSessionManager } = await import(pathToFileURL(path.join(piDist, "core", "session-manager.js")).href);
		const footerPatch = new URL("../pi/footer.mjs", import.meta.url).href;
		const { patch } = await import(footerPatch);
		class Patched extends FooterComponent {}
		assert.equal(patch(Patched), Patched);
		assert.notEqual(Patched.prototype.getSessionStats, FooterComponent.prototype.getSessionStats);
		const exact = (v) => JSON.stringify(v, (_, x) => (typeof x === "number" ? String(x) : x)); // NaN is not null
		const component = (Footer, manager) => {
			const f = Object.create(Footer.prototype);
			f.session = { sessionManager: manager, model: undefined, getContextUsage: () => undefined };
			return f;
		};
		const stats = (f) => {
			try {
				const s = f.getSessionStats();
				return exact([s.usageTotals, s.latestCacheHitRate]);
			} catch (e) {
				return `throws ${e.constructor.name}: ${e.message}`;
			}
		};
		let copies = 0;
		const piStats = (file) => {
			const copy = path.join(W, `pi-${copies++}.jsonl`);
			SessionManager.open(file).writeSessionFile(copy);
			return stats(component(FooterComponent, PiSessionManager.open(copy)));
		};
		const walked = (sm) => sm[Symbol.for("sessiondb.usageWalk")](() => sm.getEntries());

		// Usages pi's footer throws on: the same error.
		const throwing = usageSession(path.join(W, (fs.mkdirSync(path.join(W, "a")), "a")));
		const thrown = piStats(throwing.file);
		assert.match(thrown, /^throws TypeError/);
		assert.equal(stats(component(Patched, SessionManager.open(throwing.file))), thrown);

		fs.mkdirSync(path.join(W, "b"));
		const { db, file, full, odd, inLine } = usageSession(path.join(W, "b"), { piFooterThrows: false });
		const sm = SessionManager.open(file);
		const f = component(Patched, sm);
		const want = piStats(file);
		assert.doesNotMatch(want, /throws/);
		assert.equal(stats(f), want);
		// What the walk read: stand-ins, and the lazy entries of the usages only lines give.
		const read = walked(sm);
		assert.equal(read.filter((e) => types.isProxy(e)).length, inLine);
		assert.ok(read.filter((e) => !types.isProxy(e)).length > 1000);
		assert.equal(sm.getEntries().length, SessionManager.open(file).getEntries().length); // the walk's getEntries() only
		assert.equal(stats(f), want); // pi's cache

		// Appends (rows after the ones read, a usage only its line gives, a tool result's): the
		// footer's cache sees the entry count move, and the totals follow.
		sm.appendMessage({ role: "assistant", content: [], usage: full(5), timestamp: 9 });
		sm.appendMessage({ role: "assistant", content: [], usage: odd[0], timestamp: 9 });
		sm.appendMessage({ role: "toolResult", toolCallId: "t", content: [], usage: full(6), timestamp: 9 });
		const grown = piStats(file);
		assert.notEqual(grown, want);
		assert.equal(stats(f), grown);
		assert.equal(stats(component(Patched, SessionManager.open(file))), grown);

		// In a fresh process: no line parsed, and only the usages no row gives are scanned.
		const fresh = counted(db, file, [
			`const { FooterComponent } = await import(pi + "/modes/interactive/components/footer.js");`,
			`(await import(${JSON.stringify(footerPatch)})).patch(FooterComponent);`,
			"const f = Object.create(FooterComponent.prototype);",
			"f.session = { sessionManager: sm, model: undefined, getContextUsage: () => undefined };",
			"const s = f.getSessionStats();",
			`console.log(JSON.stringify((${exact.toString()})([s.usageTotals, s.latestCacheHitRate])));`,
		].join("\n"));
		assert.equal(fresh.out, grown);
		assert.deepEqual([fresh.counts.lines, fresh.counts.usages], [0, inLine + 2], `counts: ${JSON.stringify(fresh.counts)}`);

		// A usage entry without a usage: pi's footer throws on it, and so does the walk.
		sm.appendUsage("cache_warm", "prov", "m", undefined);
		const noUsage = piStats(file);
		assert.match(noUsage, /^throws TypeError/);
		assert.equal(stats(f), noUsage);
		assert.equal(stats(component(Patched, SessionManager.open(file))), noUsage);
	} finally {
		fs.rmSync(W, { recursive: true, force: true });
	}
});

// pi's compaction (prepareCompaction) walks the whole branch: every entry's id and parentId,
// every assistant's provider and model (getSessionContextSettings), then the messages it keeps
// and summarises. The links and the usage rows answer the walk: only the entries after the last
// compaction are parsed.
test("pi's prepareCompaction on a long branch parses the entries after its last compaction", async () => {
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-lazy-compact-"));
	try {
		const db = path.join(W, "db.sqlite");
		SessionManager.useDatabase(db);
		const sm = SessionManager.create(path.join(W, "p"));
		const usage = (n) => ({ input: n, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: n + 20, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.01 } });
		let kept;
		const LONG = 6000;
		// Thinking level and model changes along the branch, which getSessionContextSettings reads.
		let changes = 0;
		for (let i = 0; i < LONG; i++) {
			if (i === LONG - 300) sm.appendCompaction("the summary", kept, 50_000);
			if (i % 97 === 50) changes += Boolean(sm.appendThinkingLevelChange(i % 2 ? "high" : "low"));
			if (i % 131 === 70) changes += Boolean(sm.appendModelChange("prov", `model-${i % 3}`));
			const id = i % 2 === 0 ? sm.appendMessage({ role: "user", content: `question ${i} ${"lorem ".repeat(40)}`, timestamp: i }) : sm.appendMessage({ role: "assistant", content: [{ type: "text", text: `answer ${i} ${"ipsum ".repeat(40)}` }], provider: "prov", model: `model-${i % 5}`, usage: usage(1000 + i), stopReason: "stop", timestamp: i });
			if (i === LONG - 400) kept = id;
		}
		const file = sm.getSessionFile();
		SessionManager.open(file).writeSessionFile(path.join(W, "pi.jsonl"));
		const piLines = fs.readFileSync(path.join(W, "pi.jsonl"), "utf8").trim().split("\n").slice(1).map((l) => JSON.parse(l));
		const { prepareCompaction } = await import(pathToFileURL(path.join(piDist, "core", "compaction", "compaction.js")).href);
		const settings = { enabled: true, reserveTokens: 16384, keepRecentTokens: 2000 };
		const want = JSON.stringify(prepareCompaction(piLines, settings));
		assert.equal(JSON.stringify(prepareCompaction(SessionManager.open(file).getBranch(), settings)), want);
		const run = counted(db, file, `const { prepareCompaction } = await import(pi + "/core/compaction/compaction.js");\nconsole.log(JSON.stringify(prepareCompaction(sm.getBranch(), ${JSON.stringify(settings)})));`);
		assert.equal(JSON.stringify(run.out), want);
		// The compaction's kept range and what follows (400 entries), give or take one window,
		// and the changes (each parsed with the next of its kind, not a window around it).
		assert.ok(changes > 80);
		assert.ok(run.counts.lines <= 400 + 256 + changes, `${run.counts.lines} lines parsed of ${LONG + changes}: ${JSON.stringify(run.counts)}`);
	} finally {
		fs.rmSync(W, { recursive: true, force: true });
	}
});

test("a path held that stopped on a loop of parents is not the beginning of its entries' paths", (t) => {
	const cli = process.env.SESSIONDB_BIN;
	if (!cli) {
		t.skip("needs SESSIONDB_BIN (test.sh)");
		return;
	}
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-loop-"));
	try {
		// L's parent is A, A's X, X's B and B's A again: the walk from L stops at B (A seen), the
		// walk from X at A (X seen).
		const entry = (id, parentId) => ({ type: "message", id, parentId, timestamp: "2026-01-01T00:00:00.000Z", message: { role: "user", content: id, timestamp: 0 } });
		const lines = [{ type: "session", version: 3, id: "0199a000-0000-7000-8000-00000000100a", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp/p" }, entry("A", "X"), entry("X", "B"), entry("B", "A"), entry("L", "A")];
		const file = path.join(W, "loop.jsonl");
		fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
		const db = path.join(W, "db.sqlite");
		const r = spawnSync(cli, ["--db", db, "import", file], { encoding: "utf8" });
		assert.equal(r.status, 0, r.stderr);
		SessionManager.useDatabase(db);
		const ids = (branch) => branch.map((e) => e.id);
		const fresh = (from) => ids(SessionManager.open(file).getBranch(from));
		assert.deepEqual(fresh(), ["B", "X", "A", "L"]);
		assert.deepEqual(fresh("X"), ["A", "B", "X"]);
		const held = SessionManager.open(file);
		assert.deepEqual(ids(held.getBranch()), ["B", "X", "A", "L"]);
		assert.deepEqual(ids(held.getBranch("X")), ["A", "B", "X"]);
	} finally {
		fs.rmSync(W, { recursive: true, force: true });
	}
});

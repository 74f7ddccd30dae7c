// SessionManager.inMemory(cwd, options, entries): a preloaded session, compared with pi 1.6.0's
// own inMemory on the same entries (with a header, without one, a header needing migration),
// before and after appends.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { SessionManager } from "../index.js";
import { Unifier } from "./unify.mjs";

assert.ok(process.env.SESSIONDB_NODE_HOME, "SESSIONDB_NODE_HOME must hold pi 1.6.0 (.ci/node.sh installs it)");
const pi = await import(
	pathToFileURL(path.join(process.env.SESSIONDB_NODE_HOME, "node_modules/@earendil-works/pi-coding-agent/dist/index.js")).href
);
const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-inmemory-"));
process.env.PI_CODING_AGENT_DIR = path.join(W, "agent");
SessionManager.useDatabase(path.join(W, "db.sqlite"));
test.after(() => fs.rmSync(W, { recursive: true, force: true }));
const root = path.resolve(import.meta.dirname, "../../..");

/** Everything a caller reads from a manager (leaf-relative and label getters included). */
function snapshot(sm) {
	const entries = sm.getEntries();
	return {
		entries,
		branch: sm.getBranch(),
		tree: sm.getTree(),
		leaf: sm.getLeafId() ?? null,
		header: sm.getHeader(),
		sessionId: sm.getSessionId(),
		cwd: sm.getCwd(),
		file: sm.getSessionFile() ?? "undefined",
		dir: sm.getSessionDir(),
		persisted: sm.isPersisted(),
		labels: entries.map((e) => sm.getLabel(e.id) ?? null),
		context: sm.buildSessionContext(),
	};
}

/** Both managers' snapshots must be equal but for fresh ids and times (one mapping per test). */
function same(u, ours, theirs, what) {
	const diff = u.compare(JSON.stringify(snapshot(theirs)), JSON.stringify(snapshot(ours)));
	assert.equal(diff, null, `${what}: ${diff}`);
}

/** The same appends on both managers: a message, a label, a branch back, a model change. */
function appendSome(sm) {
	const first = sm.getEntries()[0]?.id;
	const m = sm.appendMessage({ role: "user", content: "after loading", timestamp: 1700000000000 });
	sm.appendLabelChange(m, "loaded");
	if (first) sm.branch(first);
	sm.appendModelChange("anthropic", "claude-sonnet-4-5");
	sm.appendSessionInfo("renamed");
}

/** A v3 session written by pi: messages, a label and a branch. */
function piEntries() {
	const sm = pi.SessionManager.create(path.join(W, "project"), path.join(W, "pi-sessions"));
	const u1 = sm.appendMessage({ role: "user", content: "first question", timestamp: 1700000000001 });
	const a1 = sm.appendMessage({
		role: "assistant",
		content: [{ type: "text", text: "first answer" }],
		api: "anthropic-messages",
		provider: "anthropic",
		model: "claude-sonnet-4-5",
		usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
		stopReason: "stop",
		timestamp: 1700000000002,
	});
	sm.appendLabelChange(u1, "start");
	sm.appendMessage({ role: "user", content: "second question", timestamp: 1700000000003 });
	sm.branch(a1);
	sm.appendMessage({ role: "user", content: "the other way \u00e9 \ud83d\ude00", timestamp: 1700000000004 });
	sm.appendThinkingLevelChange("high");
	const file = sm.getSessionFile();
	assert.ok(fs.existsSync(file));
	return { header: sm.getHeader(), entries: sm.getEntries(), file };
}

const cwd = path.join(W, "elsewhere");

test("inMemory with a v3 session's entries, header first, as pi", () => {
	const { header, entries } = piEntries();
	const u = new Unifier();
	const all = [header, ...entries];
	const theirs = pi.SessionManager.inMemory(cwd, undefined, structuredClone(all));
	const ours = SessionManager.inMemory(cwd, undefined, structuredClone(all));
	assert.equal(ours.getSessionId(), header.id);
	assert.equal(ours.getCwd(), path.resolve(cwd)); // the constructor's cwd, not the header's
	assert.equal(ours.getSessionFile(), undefined);
	assert.equal(ours.getLabel(entries[0].id), "start");
	same(u, ours, theirs, "loaded");
	appendSome(theirs);
	appendSome(ours);
	same(u, ours, theirs, "after appends");
	// pi takes the header wherever it is among the entries.
	const last = [...entries, header];
	same(u, SessionManager.inMemory(cwd, undefined, structuredClone(last)), pi.SessionManager.inMemory(cwd, undefined, structuredClone(last)), "header last");
});

test("inMemory with entries but no header: a new header (options honoured), then the entries", () => {
	const { entries } = piEntries();
	const u = new Unifier();
	const opts = { id: "01a23953-e425-718a-bccb-56957dc75fe8", parentSession: "/some/parent.jsonl" };
	const theirs = pi.SessionManager.inMemory(cwd, opts, structuredClone(entries));
	const ours = SessionManager.inMemory(cwd, opts, structuredClone(entries));
	assert.equal(ours.getSessionId(), opts.id);
	assert.equal(ours.getHeader().parentSession, opts.parentSession);
	same(u, ours, theirs, "loaded");
	appendSome(theirs);
	appendSome(ours);
	same(u, ours, theirs, "after appends");
	// Without options the header gets a fresh id, as pi's.
	const fresh = SessionManager.inMemory(cwd, undefined, structuredClone(entries));
	assert.match(fresh.getSessionId(), /^[0-9a-f-]{36}$/);
	assert.equal(fresh.getEntries().length, entries.length);
});

test("inMemory migrates v1 and v2 headers as pi does", () => {
	const dir = path.join(root, "examples/sessions/--home-u-edge--");
	const files = fs.readdirSync(dir).filter((f) => f.endsWith(".jsonl"));
	assert.ok(files.length >= 2);
	for (const f of files) {
		const lines = fs.readFileSync(path.join(dir, f), "utf8").split("\n").filter((l) => l.trim());
		const all = lines.map((l) => JSON.parse(l));
		assert.ok(all[0].type === "session" && (all[0].version ?? 1) < 3, `${f} needs migration`);
		const u = new Unifier();
		const theirs = pi.SessionManager.inMemory(cwd, undefined, structuredClone(all));
		const ours = SessionManager.inMemory(cwd, undefined, structuredClone(all));
		assert.equal(theirs.getHeader().version, 3);
		same(u, ours, theirs, `${f} loaded`);
		appendSome(theirs);
		appendSome(ours);
		same(u, ours, theirs, `${f} after appends`);
	}
});

test("inMemory with an empty entries array is a new session; bad entries are refused clearly", () => {
	const ours = SessionManager.inMemory(cwd, { id: "01a23953-e42c-718a-bccb-569788a91100" }, []);
	assert.equal(ours.getSessionId(), "01a23953-e42c-718a-bccb-569788a91100");
	assert.deepEqual(ours.getEntries(), []);
	assert.throws(() => SessionManager.inMemory(cwd, undefined, [{ type: "session" }]), /not a pi session/);
});

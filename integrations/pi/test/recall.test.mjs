// The package in pi: the model recalls another project's session, the conversation in progress
// reaches the database, /search and /usage work through their handlers, bad input is a tool error.
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, test } from "node:test";
import { ai, scriptedUI, sessiondb, startPi, toolResults, until, world, writeSession } from "./harness.mjs";

const w = world();
const alpha = w.project("alpha");
const beta = w.project("beta");
const here = w.project("here");
// Sessions of other projects, written by pi's own SessionManager before pi starts.
const A = writeSession(
	alpha,
	[
		["How should the importer retry on a busy database?", "We decided on zanzibar backoff: exponential, capped at 30 s.", 0.25],
		["And the lock file?", "Take flock on the -journal file before writing.", 1.0],
	],
	{ provider: "anthropic", id: "claude-x" },
);
const B = writeSession(beta, [["What is the weather in Oslo?", "Cold and dark, as usual in December.", 0.5]], { provider: "openai", id: "gpt-y" });

let P; // pi
const ui = scriptedUI();
const lastText = (ctx) => {
	const r = [...ctx.messages].reverse().find((m) => m.role === "toolResult");
	return r ? r.content.map((c) => c.text ?? "").join("") : "";
};

before(async () => {
	P = await startPi(here, {
		ui,
		responses: [
			ai.fauxAssistantMessage([ai.fauxToolCall("session_search", { query: "zanzibar" })], { stopReason: "toolUse" }),
			// session_read on the hit the search returned (ids taken from the tool result text).
			(ctx) => {
				const m = lastText(ctx).match(/sessionId=(\S+) entryId=(\S+)/);
				return ai.fauxAssistantMessage([ai.fauxToolCall("session_read", { sessionId: m?.[1] ?? "none", entryId: m?.[2] ?? "none", before: 2, after: 2 })], {
					stopReason: "toolUse",
				});
			},
			ai.fauxAssistantMessage("You settled on zanzibar backoff in alpha."),
		],
	});
});

after(async () => {
	await P?.runtime.dispose();
	w.cleanup();
});

test("pi starts with the package: tools, commands and skill registered, the sessions synced", async () => {
	const s = P.runtime.session;
	assert.deepEqual(P.errors, []);
	const tools = s.getAllTools().map((t) => t.name);
	assert.ok(tools.includes("session_search") && tools.includes("session_read"), tools.join(","));
	const commands = s.extensionRunner.getRegisteredCommands().map((c) => c.name);
	assert.ok(commands.includes("search") && commands.includes("usage"), commands.join(","));
	assert.ok(s.resourceLoader.getSkills().skills.some((k) => k.name === "sessiondb"));
	// session_start synced pi's sessions folder in the background: both projects arrive.
	const ids = await until("the first sync", () => {
		if (!fs.existsSync(w.env.SESSIONDB_PATH)) return null;
		const l = sessiondb("list");
		return l.length >= 2 ? l.map((x) => x.id) : null;
	});
	assert.deepEqual(new Set(ids), new Set([A.id, B.id]));
	assert.ok(ui.notices.some((n) => /importing your pi sessions/.test(n.message)), JSON.stringify(ui.notices));
});

test("the model finds another project's planted text with session_search and reads around it with session_read", async () => {
	const s = P.runtime.session;
	await s.prompt("What did we decide about retries? (quokka-7731)");
	const [found] = toolResults(s, "session_search");
	assert.equal(found.isError, false, found.text);
	assert.match(found.text, /\[zanzibar\] backoff/);
	assert.ok(found.text.includes(`sessionId=${A.id} entryId=${A.ids[1]}`), found.text);
	assert.match(found.text, /project=alpha/);
	assert.equal(found.details.hits[0].sessionId, A.id);
	const [read] = toolResults(s, "session_read");
	assert.equal(read.isError, false, read.text);
	// The hit, the question before it and the next exchange after it, in order.
	const order = ["How should the importer retry", ">> [assistant] We decided on zanzibar backoff", "And the lock file?", "Take flock"].map((t) => read.text.indexOf(t));
	assert.ok(order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1])), read.text);
	assert.equal(s.getLastAssistantText(), "You settled on zanzibar backoff in alpha.");
});

test("after a prompt the current session's new entries are in the database", async () => {
	const sid = P.runtime.session.sessionManager.getSessionId();
	const hits = await until("the turn's sync", () => {
		const h = sessiondb("search", "quokka-7731").filter((x) => x.sessionId === sid);
		return h.length > 0 ? h : null;
	});
	assert.equal(hits[0].role, "user");
	assert.equal(hits[0].entryId, P.runtime.session.sessionManager.getBranch().find((e) => e.message?.role === "user").id);
	// The prompt's last turn is there too: the agent loop runs several turns per prompt (the
	// tool call, then the answer) and each turn's end syncs, so wait for the answer's sync.
	await until("the answer's sync", () => sessiondb("search", "You settled on zanzibar").some((x) => x.sessionId === sid) || null);
});

test("session_search leaves out the current session unless asked, and filters by project name", async () => {
	const s = P.runtime.session;
	P.faux.setResponses([
		ai.fauxAssistantMessage(
			[
				ai.fauxToolCall("session_search", { query: "quokka-7731" }),
				ai.fauxToolCall("session_search", { query: "quokka-7731", includeCurrent: true }),
				// The name of earlier versions still works (pi's prepareArguments).
				ai.fauxToolCall("session_search", { query: "quokka-7731", include_current: true }),
				ai.fauxToolCall("session_search", { query: "as usual", project: "bet" }),
				ai.fauxToolCall("session_search", { query: "as usual", project: "alpha" }),
			],
			{ stopReason: "toolUse" },
		),
		ai.fauxAssistantMessage("ok"),
	]);
	await s.prompt("search again");
	const r = toolResults(s, "session_search").slice(-5);
	assert.deepEqual(r[2].details.hits, r[1].details.hits);
	r.splice(2, 1);
	assert.match(r[0].text, /No past session entry matches "quokka-7731"/);
	// This session's prompt is found, not the session_search calls that repeat the query.
	assert.deepEqual(
		r[1].details.hits.map((h) => [h.sessionId, h.role]),
		[[s.sessionManager.getSessionId(), "user"]],
		r[1].text,
	);
	assert.deepEqual(r[2].details.hits.map((h) => h.sessionId), [B.id]);
	assert.deepEqual(r[3].details.hits, []);
});

test("bad input is a clear tool error, never an exception in pi", async () => {
	const s = P.runtime.session;
	// A session deleted from the database after it was found.
	fs.rmSync(B.file);
	sessiondb("sync", "--sessions-dir", `${w.env.PI_CODING_AGENT_DIR}/sessions`, "--prune");
	P.faux.setResponses([
		ai.fauxAssistantMessage(
			[
				ai.fauxToolCall("session_search", { query: "!!! ***" }),
				ai.fauxToolCall("session_search", { query: "zanzibar", limit: 100000 }),
				ai.fauxToolCall("session_search", { query: "zanzibar", role: "wizard" }),
				ai.fauxToolCall("session_search", { query: "zanzibar", since: "last tuesday" }),
				ai.fauxToolCall("session_read", { sessionId: B.id, entryId: B.ids[0] }),
				ai.fauxToolCall("session_read", { sessionId: A.id, entryId: "nosuchentry" }),
				ai.fauxToolCall("session_read", { sessionId: A.id, before: 1000 }),
			],
			{ stopReason: "toolUse" },
		),
		ai.fauxAssistantMessage("noted"),
	]);
	await s.prompt("try bad calls");
	assert.deepEqual(P.errors, []);
	const results = s.messages.filter((m) => m.role === "toolResult").slice(-7);
	const text = (m) => m.content.map((c) => c.text ?? "").join("");
	assert.ok(results.every((m) => m.isError), results.map(text).join("\n"));
	const expected = [
		/query "!!! \*\*\*" has no letters or digits/,
		/limit must be a whole number from 1 to 50 \(got 100000\)/,
		/role must be one of user, assistant/,
		/cannot read "last tuesday" as a date/,
		new RegExp(`no session with id or id prefix ${B.id}.*not in the sessiondb database`),
		new RegExp(`session ${A.id} has no entry nosuchentry|Entry nosuchentry not found`),
		/before must be a whole number from 0 to 40 \(got 1000\)/,
	];
	results.forEach((m, i) => assert.match(text(m), expected[i]));
	assert.equal(s.getLastAssistantText(), "noted");
});

test("/usage shows today's and this month's cost and the grouped table", async () => {
	const s = P.runtime.session;
	ui.notices.length = 0;
	await s.prompt("/usage model");
	const [n] = ui.notices;
	assert.equal(n.type, "info", JSON.stringify(ui.notices));
	// B was pruned above: alpha's 0.25 + 1.00 remain (the faux model costs nothing).
	assert.match(n.message, /^Today \$1\.25 \([\d.]+[kM]? tokens\) · this month \$1\.25 \([\d.]+[kM]? tokens\)$/m);
	const rows = n.message.split("\n").slice(2);
	assert.match(rows[0], /^model\s+entries\s+input\s+output\s+cache r\s+cache w\s+total\s+cost$/);
	assert.ok(rows.some((r) => /^claude-x\s+2\s+200\s+40\s+0\s+0\s+240\s+\$1\.25$/.test(r)), n.message);
	assert.ok(rows.some((r) => /^faux-1\s+\d+\s.*\$0\.00$/.test(r)), n.message);
	assert.match(rows.at(-1), /^total\s.*\$1\.25$/);
	ui.notices.length = 0;
	await s.prompt("/usage fortnight");
	assert.match(ui.notices[0].message, /groups by one of day, week, month/);
	assert.equal(ui.notices[0].type, "error");
});

test("/search lists hits in the selector and choosing one resumes that session at the hit", async () => {
	const before = P.runtime.session.sessionManager.getSessionFile();
	ui.dialogs.length = 0;
	ui.selects.push(
		(_title, options) => options.find((o) => o.includes("We decided on [zanzibar]")),
		(_title, options) => options.find((o) => o.startsWith("At the hit")),
	);
	await P.runtime.session.prompt("/search zanzibar backoff");
	const [pick, where] = ui.dialogs;
	assert.match(pick.title, /^"zanzibar backoff": \d+ match/);
	// Snippet, project, age and role on each line; the other project's session is among them.
	const line = pick.options.find((o) => o.includes("We decided on"));
	assert.match(line, /^ ?\d+\. \d+[smh] ago\s+alpha\s+assistant\s+We decided on \[zanzibar\] \[backoff\]/);
	assert.ok(!pick.options.some((o) => /session_(search|read)/.test(o)), "the package's own tool traffic is left out");
	assert.equal(where.title, "Resume where?");
	const sm = P.runtime.session.sessionManager;
	assert.notEqual(sm.getSessionFile(), before);
	assert.equal(sm.getSessionId(), A.id);
	assert.equal(sm.getLeafId(), A.ids[1], "positioned at the hit");
	assert.deepEqual(P.errors, []);
});

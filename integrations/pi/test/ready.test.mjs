// The package is ready at the first question: a session written just before pi starts is found
// by the model's first session_search; while a first import is still running the answer says
// how far it got; under the sessiondb-pi launcher the package uses its database and syncs nothing.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { ai, scriptedUI, sessiondb, startPi, toolResults, until, world, writeSession } from "./harness.mjs";

const model = { provider: "anthropic", id: "claude-x" };
const far = "we looked at the schema, the backfill and the rollback plan in detail before anything else; ".repeat(3);

test("a session written just before pi starts is found by the model's first session_search", async () => {
	const w = world();
	try {
		const here = w.project("here");
		const S = writeSession(w.project("ledger"), [["What did we decide about the ledger migration?", `The ledger migration runs nightly; ${far}then quarantine bad rows.`, 0.1]], model);
		const ui = scriptedUI();
		const P = await startPi(here, {
			ui,
			responses: [
				ai.fauxAssistantMessage([ai.fauxToolCall("session_search", { query: "ledger quarantine" })], { stopReason: "toolUse" }),
				ai.fauxAssistantMessage("It runs nightly."),
			],
		});
		// Asked at once: the startup sync (a second after session_start) has not begun.
		assert.equal(fs.existsSync(w.env.SESSIONDB_PATH), false);
		await P.runtime.session.prompt("what did we decide about the ledger migration last week?");
		const [r] = toolResults(P.runtime.session, "session_search");
		assert.equal(r.isError, false, r.text);
		assert.deepEqual(r.details.hits.map((h) => [h.sessionId, h.entryId]), [[S.id, S.ids[1]]], r.text);
		assert.equal(r.details.importing, false, "the import finished within the wait");
		assert.doesNotMatch(r.text, /still running/);
		// Both terms are marked though far apart (Rust's snippet, kept whole by the package).
		assert.match(r.text, /The \[ledger\] migration runs nightly;.* … .*then \[quarantine\] bad rows\./, r.text);
		assert.equal(P.runtime.session.getLastAssistantText(), "It runs nightly.");
		// The selector line (110 characters) keeps both marks too.
		ui.selects.push(() => undefined);
		await P.runtime.session.prompt("/search ledger quarantine");
		const line = ui.dialogs.at(-1).options[0];
		assert.ok(line.length <= 150 && /\[ledger\].*\[quarantine\]/.test(line), line);
		assert.deepEqual(P.errors, []);
		await P.runtime.dispose();
	} finally {
		w.cleanup();
	}
});

test("while the first import runs, answers say how far it got and give the results so far", async () => {
	const w = world();
	try {
		const here = w.project("here");
		const S = writeSession(w.project("ledger"), [["ledger?", "The ledger migration runs nightly.", 0.1]], model);
		// The real sessiondb, with every sync announcing progress and taking 5 s longer.
		const real = execFileSync("sh", ["-c", "command -v sessiondb"], { encoding: "utf8" }).trim();
		const slow = path.join(w.W, "slow-sessiondb");
		fs.writeFileSync(
			slow,
			`#!/bin/sh\ncase " $* " in *" sync "*) echo '{"progress":"sync","done":3120,"total":9800}' >&2; sleep 5;; esac\nexec ${real} "$@"\n`,
			{ mode: 0o755 },
		);
		process.env.SESSIONDB_BIN = slow;
		const ui = scriptedUI();
		const P = await startPi(here, {
			ui,
			settings: { sessiondb: { waitSeconds: 0.5 } },
			responses: [
				ai.fauxAssistantMessage([ai.fauxToolCall("session_search", { query: "ledger" })], { stopReason: "toolUse" }),
				ai.fauxAssistantMessage("Nothing yet."),
				ai.fauxAssistantMessage([ai.fauxToolCall("session_search", { query: "ledger" })], { stopReason: "toolUse" }),
				ai.fauxAssistantMessage("Found it."),
			],
		});
		const s = P.runtime.session;
		await s.prompt("ledger?");
		const [first] = toolResults(s, "session_search");
		assert.equal(first.isError, false, first.text);
		assert.equal(
			first.text,
			'sessiondb: the first import of your pi sessions is still running (importing 3,120 of 9,800 files); results so far:\nNo past session entry matches "ledger".',
		);
		ui.notices.length = 0;
		await s.prompt("/usage");
		assert.match(ui.notices.at(-1)?.message ?? "", /still running \(importing 3,120 of 9,800 files\); results so far: nothing imported yet\./);
		// Once it is through, the same question finds the session, without a note.
		await until("the first import", () => ui.notices.some((n) => /sessions imported in/.test(n.message)), 30000);
		await s.prompt("and now?");
		const second = toolResults(s, "session_search").at(-1);
		assert.equal(second.details.importing, false, second.text);
		assert.deepEqual(new Set(second.details.hits.map((h) => h.entryId)), new Set(S.ids), second.text);
		assert.deepEqual(P.errors, []);
		await P.runtime.dispose();
	} finally {
		delete process.env.SESSIONDB_BIN;
		w.cleanup();
	}
});

test("under the sessiondb-pi launcher: its database, no syncs, search and read still work", async () => {
	const w = world();
	try {
		const here = w.project("here");
		const launcherDb = path.join(w.W, "launcher.sqlite");
		const settingDb = path.join(w.W, "from-settings.sqlite");
		const A = writeSession(w.project("alpha"), [["backoff?", "We chose wombat backoff.", 0.1]], model);
		execFileSync("sessiondb", ["--db", launcherDb, "import", A.file], { stdio: "ignore" });
		// On disk but not in the launcher's database: the package must not sync it.
		const C = writeSession(w.project("gamma"), [["numbat?", "The numbat cache stays.", 0.1]], model);
		Object.assign(process.env, { SESSIONDB_PI_LAUNCHER: "1", SESSIONDB_PATH: launcherDb });
		const ui = scriptedUI();
		const P = await startPi(here, {
			ui,
			settings: { sessiondb: { db: settingDb } },
			responses: [
				ai.fauxAssistantMessage(
					[ai.fauxToolCall("session_search", { query: "wombat" }), ai.fauxToolCall("session_search", { query: "numbat" })],
					{ stopReason: "toolUse" },
				),
				(ctx) => {
					const found = ctx.messages.find((x) => x.role === "toolResult");
					const m = found?.content.map((c) => c.text ?? "").join("").match(/sessionId=(\S+) entryId=(\S+)/);
					return ai.fauxAssistantMessage([ai.fauxToolCall("session_read", { sessionId: m?.[1] ?? "none", entryId: m?.[2] ?? "none" })], { stopReason: "toolUse" });
				},
				ai.fauxAssistantMessage("wombat it is"),
			],
		});
		const s = P.runtime.session;
		await s.prompt("what backoff did we choose?");
		const [wombat, numbat] = toolResults(s, "session_search");
		assert.deepEqual(wombat.details.hits.map((h) => h.sessionId), [A.id], wombat.text);
		assert.match(numbat.text, /No past session entry matches "numbat"/);
		const [read] = toolResults(s, "session_read");
		assert.equal(read.isError, false, read.text);
		assert.match(read.text, />> \[assistant\] We chose wombat backoff\./);
		// Past the startup sync's moment and after a turn: still only what the launcher put there.
		await new Promise((r) => setTimeout(r, 1500));
		assert.deepEqual(sessiondb("list").map((x) => x.id), [A.id]);
		assert.equal(fs.existsSync(settingDb), false, "the setting's database is not used under the launcher");
		assert.ok(!ui.notices.some((n) => /importing/.test(n.message)), JSON.stringify(ui.notices));
		await P.runtime.dispose();
		assert.deepEqual(sessiondb("list").map((x) => x.id), [A.id], "nothing synced on shutdown either");
		assert.ok(fs.existsSync(C.file));
		assert.deepEqual(P.errors, []);
	} finally {
		delete process.env.SESSIONDB_PI_LAUNCHER;
		w.cleanup();
	}
});

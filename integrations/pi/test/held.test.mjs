// The sync after each turn goes through one `sessiondb sync --stdin` process kept open between
// turns (no process start and connection per turn), replaced when it dies, ended with pi's
// session; a sessiondb without --stdin still gets a sync per turn.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { ai, scriptedUI, sessiondb, startPi, until, world } from "./harness.mjs";

const w = world();
after(() => w.cleanup());
const real = execFileSync("sh", ["-c", "command -v sessiondb"], { encoding: "utf8" }).trim();

/** A SESSIONDB_BIN that logs each call (`pid args`) and runs the real binary in its place. */
function loggingBin(name, { refuseStdin = false } = {}) {
	const dir = path.join(w.W, name);
	fs.mkdirSync(dir, { recursive: true });
	const log = path.join(dir, "calls.log");
	const refuse = refuseStdin
		? `case " $* " in *" --stdin "*) echo "error: unexpected argument '--stdin' found" >&2; exit 2;; esac\n`
		: "";
	fs.writeFileSync(path.join(dir, "sessiondb"), `#!/bin/sh\necho "$$ $*" >> '${log}'\n${refuse}exec '${real}' "$@"\n`, { mode: 0o755 });
	const calls = () => (fs.existsSync(log) ? fs.readFileSync(log, "utf8").trim().split("\n") : []);
	return { bin: path.join(dir, "sessiondb"), calls };
}

const alive = (pid) => {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
};

/** Entries of the current session holding `word`, once its turn's sync put them in the database. */
const synced = (P, word) =>
	until(`the sync of ${word}`, () => sessiondb("search", word).some((h) => h.sessionId === P.runtime.session.sessionManager.getSessionId()) || null);

test("each turn is synced through one process kept open, replaced when it dies, ended with the session", async () => {
	const { bin, calls } = loggingBin("held");
	process.env.SESSIONDB_BIN = bin;
	const P = await startPi(w.project("held"), {
		ui: scriptedUI(),
		responses: ["one", "two", "three", "four"].map((t) => ai.fauxAssistantMessage(`reply ${t}`)),
	});
	try {
		for (const word of ["wombat", "quoll", "numbat"]) {
			await P.runtime.session.prompt(`tell me about the ${word}`);
			await synced(P, word);
		}
		const held = calls().filter((c) => / sync --stdin /.test(c));
		assert.equal(held.length, 1, calls().join("\n"));
		assert.ok(!calls().some((c) => /\.jsonl --json$/.test(c)), `no sync process per turn:\n${calls().join("\n")}`);
		const pid = Number(held[0].split(" ")[0]);
		assert.ok(alive(pid), "the process stays between turns");
		// Killed (as by the OOM killer): the next turn starts another and is synced.
		process.kill(pid, "SIGKILL");
		await until("the kill", () => !alive(pid) || null);
		await P.runtime.session.prompt("tell me about the bilby");
		await synced(P, "bilby");
		const again = calls().filter((c) => / sync --stdin /.test(c));
		assert.equal(again.length, 2, calls().join("\n"));
		const second = Number(again[1].split(" ")[0]);
		assert.deepEqual(P.errors, []);
		// The session's end ends it.
		await P.runtime.dispose();
		await until("the process's exit", () => !alive(second) || null, 10000);
	} finally {
		delete process.env.SESSIONDB_BIN;
	}
});

test("a sessiondb without --stdin gets a sync process per turn", async () => {
	const { bin, calls } = loggingBin("old", { refuseStdin: true });
	process.env.SESSIONDB_BIN = bin;
	const ui = scriptedUI();
	const P = await startPi(w.project("old"), { ui, responses: ["one", "two"].map((t) => ai.fauxAssistantMessage(`reply ${t}`)) });
	try {
		for (const word of ["platypus", "echidna"]) {
			await P.runtime.session.prompt(`tell me about the ${word}`);
			await synced(P, word);
		}
		assert.equal(calls().filter((c) => / sync --stdin /.test(c)).length, 1, "tried once, then remembered");
		assert.ok(calls().filter((c) => /\.jsonl --json$/.test(c)).length >= 2, calls().join("\n"));
		assert.deepEqual(ui.notices.filter((n) => n.type === "warning"), []);
		assert.deepEqual(P.errors, []);
	} finally {
		await P.runtime.dispose();
		delete process.env.SESSIONDB_BIN;
	}
});

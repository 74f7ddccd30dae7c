// /move DIR: the current session's file goes to pi's folder for DIR with DIR as its header's
// cwd, pi switches to it and goes on in it, and plain pi 1.6.0 (its CLI, `-p --session FILE`)
// continues the moved file; the database follows (`export` equals the file, `list --cwd DIR`).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { ai, PKG, scriptedUI, sessiondb, startPi, until, world } from "./harness.mjs";

const w = world();
after(() => w.cleanup());

const NODE_HOME = process.env.SESSIONDB_NODE_HOME;
const plainPi = path.join(NODE_HOME ?? "", "node_modules/@earendil-works/pi-coding-agent/dist/cli.js");
// The scripted model for pi's own CLI (the Node binding's tests use it the same way).
const fauxExt = path.join(PKG, "..", "..", "bindings", "node", "test", "pi", "faux-provider-ext.mjs");

/** pi's folder name for a cwd: `--<path without the leading /, / as ->--`. */
const folderOf = (cwd) => `--${cwd.replace(/^\//, "").replace(/[/\\:]/g, "-")}--`;

const lines = (file) => fs.readFileSync(file, "utf8").split("\n").filter(Boolean);

test("/move DIR moves the current session, pi continues it there, and so does plain pi", async () => {
	const from = w.project("move-from");
	const to = w.project("move-to");
	const ui = scriptedUI();
	const P = await startPi(from, {
		ui,
		responses: ["a reply about the echidna", "a reply after the move"].map((t) => ai.fauxAssistantMessage(t)),
	});
	const sessions = path.join(process.env.PI_CODING_AGENT_DIR, "sessions");
	let moved;
	try {
		await P.runtime.session.prompt("tell me about the echidna");
		const sm = P.runtime.session.sessionManager;
		const id = sm.getSessionId();
		const oldFile = sm.getSessionFile();
		assert.ok(fs.existsSync(oldFile));
		const before = lines(oldFile);

		await P.runtime.session.prompt(`/move ${to}`);
		moved = path.join(sessions, folderOf(to), path.basename(oldFile));
		assert.equal(ui.notices.filter((n) => n.type !== "info").length, 0, JSON.stringify(ui.notices));
		assert.ok(!fs.existsSync(oldFile), "the old file is gone");
		assert.ok(fs.existsSync(moved), `the file is in ${folderOf(to)}`);
		const header = JSON.parse(lines(moved)[0]);
		assert.equal(header.cwd, to);
		assert.deepEqual({ ...header, cwd: undefined }, { ...JSON.parse(before[0]), cwd: undefined });
		assert.deepEqual(lines(moved).slice(1), before.slice(1), "the entries as they were");
		// pi switched to the moved session: same id, new file, new cwd.
		const now = P.runtime.session.sessionManager;
		assert.equal(now.getSessionId(), id);
		assert.equal(now.getSessionFile(), moved);
		assert.equal(now.getCwd(), to);
		assert.ok(ui.notices.some((n) => n.message.includes(`moved this session to ${to}`)), JSON.stringify(ui.notices));

		// The next turn is appended to the moved file.
		await P.runtime.session.prompt("and after the move?");
		assert.ok(lines(moved).some((l) => l.includes("a reply after the move")));
		assert.ok(!fs.existsSync(oldFile), "nothing is written to the old path");
	} finally {
		await P.runtime.dispose?.();
	}

	// Plain pi continues the moved file from the new folder.
	const n = lines(moved).length;
	const out = execFileSync(process.execPath, [plainPi, "-e", fauxExt, "--provider", "faux", "--model", "faux-1", "-p", "--session", moved, "one more"], {
		cwd: to,
		env: { ...process.env, FAUX_REPLIES: "" },
		encoding: "utf8",
	});
	assert.match(out, /ok 0/);
	const after = lines(moved);
	assert.ok(after.length >= n + 2, "pi appended its turn to the moved file");
	assert.equal(JSON.parse(after[0]).cwd, to, "pi kept the header");

	// The database follows: after a sync, export equals the file byte for byte; listed under DIR only.
	execFileSync("sessiondb", ["sync", "--sessions-dir", sessions]);
	const id = JSON.parse(after[0]).id;
	assert.deepEqual(execFileSync("sessiondb", ["export", id]), fs.readFileSync(moved));
	await until("the listing", () => sessiondb("list", "--cwd", to).some((s) => s.path === moved) || null);
	assert.deepEqual(
		sessiondb("list", "--cwd", to).map((s) => s.path),
		[moved],
	);
	assert.deepEqual(sessiondb("list", "--cwd", path.join(path.dirname(to), "move-from")), []);
	assert.equal(sessiondb("recent", "--cwd", to).file, moved);
});

test("/move refuses a folder that does not exist, and moves nothing", async () => {
	const from = w.project("refuse-from");
	const ui = scriptedUI();
	const P = await startPi(from, { ui, responses: [ai.fauxAssistantMessage("a reply about the quokka")] });
	try {
		await P.runtime.session.prompt("tell me about the quokka");
		const file = P.runtime.session.sessionManager.getSessionFile();
		const missing = path.join(w.W, "projects", "nowhere");
		await P.runtime.session.prompt(`/move ${missing}`);
		assert.ok(ui.notices.some((n) => n.type === "error" && n.message.includes(`${missing} does not exist`)), JSON.stringify(ui.notices));
		assert.ok(fs.existsSync(file));
		assert.equal(P.runtime.session.sessionManager.getSessionFile(), file);
	} finally {
		await P.runtime.dispose?.();
	}
});

// Files mode (what sessiondb-pi runs): the file side of the binding without pi's CLI.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { SessionManager } from "../index.js";

test("a file left one line behind the database (a kill between the two writes) is caught up on open", () => {
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-files-"));
	try {
		process.env.PI_CODING_AGENT_DIR = path.join(W, "agent");
		SessionManager.useDatabase(path.join(W, "db.sqlite"));
		SessionManager.useFiles(true);
		const sm = SessionManager.create(path.join(W, "p"));
		assert.equal(fs.existsSync(sm.getSessionFile()), false);
		sm.appendMessage({ role: "user", content: "one", timestamp: 1 });
		const file = sm.getSessionFile();
		assert.equal(fs.readFileSync(file, "utf8").split("\n").length, 3, "header and the message, as pi writes them");
		const before = fs.readFileSync(file);
		// The database gets a line the file does not (files off for this manager only).
		SessionManager.useFiles(false);
		SessionManager.open(file).appendMessage({ role: "assistant", content: [{ type: "text", text: "two" }], timestamp: 2 });
		assert.ok(fs.readFileSync(file).equals(before));
		SessionManager.useFiles(true);
		const again = SessionManager.open(file);
		const lines = fs.readFileSync(file, "utf8").trim().split("\n");
		assert.equal(lines.length, 3);
		assert.equal(JSON.parse(lines[2]).message.content[0].text, "two");
		again.appendMessage({ role: "user", content: "three", timestamp: 3 });
		assert.equal(JSON.parse(fs.readFileSync(file, "utf8").trim().split("\n")[3]).message.content, "three");
		assert.deepEqual(again.getEntries().map((e) => e.message.role), ["user", "assistant", "user"]);
	} finally {
		SessionManager.useFiles(false);
		fs.rmSync(W, { recursive: true, force: true });
	}
});

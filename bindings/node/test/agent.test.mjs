// pi's own agent runs on the binding: the same scripted AgentSession conversation (agent-scenario.mjs)
// runs once on pi's SessionManager and once on the binding's, each phase in a fresh process;
// after every step session.messages, getBranch(), getTree(), buildSessionContext() and
// getEntries() must be equal (ids and times mapped consistently), and `sessiondb export` of
// each session the binding stored must equal the file pi wrote, line for line.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { Unifier } from "./unify.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = process.env.SESSIONDB_BIN;

test("pi's AgentSession gives the same session on the binding as on pi's SessionManager", { timeout: 300_000 }, () => {
	assert.ok(process.env.SESSIONDB_NODE_HOME, "SESSIONDB_NODE_HOME must hold pi 1.6.0 (.ci/node.sh installs it)");
	assert.ok(cli, "SESSIONDB_BIN must name the sessiondb CLI (test.sh builds it)");
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-agent-"));
	try {
		fs.mkdirSync(path.join(W, "project", "data"), { recursive: true });
		fs.writeFileSync(path.join(W, "project", "notes.txt"), "the answer is 42\n");
		fs.writeFileSync(path.join(W, "project", "data", "numbers.txt"), "1\n2\n3\n");
		const db = path.join(W, "db.sqlite");
		const run = (store, phase) => {
			const out = path.join(W, `${store}-${phase}.json`);
			execFileSync(process.execPath, [path.join(here, "agent-scenario.mjs"), store, phase, W, out], {
				env: { ...process.env, SESSIONDB_PATH: db },
				stdio: ["ignore", "inherit", "inherit"],
			});
			return JSON.parse(fs.readFileSync(out, "utf8"));
		};
		// The binding first: pi's files then cannot be what the binding's continueRecent finds.
		const ours = [run("binding", "main"), run("binding", "reopen")];
		const pis = [run("pi", "main"), run("pi", "reopen")];
		const u = new Unifier();
		let steps = 0;
		for (let p = 0; p < 2; p++) {
			assert.equal(ours[p].snapshots.length, pis[p].snapshots.length, `${pis[p].phase}: number of steps`);
			for (let i = 0; i < pis[p].snapshots.length; i++) {
				const a = pis[p].snapshots[i];
				const b = ours[p].snapshots[i];
				assert.equal(b.step, a.step);
				for (const key of ["file", "leaf", "name", "messages", "branch", "tree", "context", "entries"]) {
					const diff = u.compare(JSON.stringify(a[key]), JSON.stringify(b[key]));
					assert.equal(diff, null, `${pis[p].phase} step "${a.step}": ${key} differs: ${diff}`);
				}
				steps++;
			}
		}
		assert.ok(steps >= 20, `${steps} steps compared`);
		// Every session pi wrote exports from the database with pi's lines.
		const written = fs.readdirSync(path.join(W, "sessions")).sort();
		assert.equal(written.length, 2, `pi wrote ${written}`);
		for (const which of ["first", "fork"]) {
			const piFile = pis[1].state.files[which];
			const ourFile = ours[1].state.files[which];
			const piLines = fs.readFileSync(piFile, "utf8").split("\n");
			const ourLines = execFileSync(cli, ["--db", db, "export", ourFile], { encoding: "utf8" }).split("\n");
			assert.equal(ourLines.length, piLines.length, `${which}: number of lines`);
			assert.ok(piLines.length > 10, `${which}: ${piLines.length} lines`);
			for (let i = 0; i < piLines.length; i++) {
				const diff = u.compare(piLines[i], ourLines[i]);
				assert.equal(diff, null, `${which} session, line ${i + 1}: ${diff}`);
			}
		}
	} finally {
		fs.rmSync(W, { recursive: true, force: true });
	}
});

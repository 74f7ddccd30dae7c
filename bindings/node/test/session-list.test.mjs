// /resume's session list under sessiondb-pi (pi/session-list.mjs, pi/realpath-memo.mjs): pi's
// threading resolves every session's path with fs.realpathSync; while it runs, a memo answers.
// Its answers must be Node's (symbolic links, missing files, relative paths), pi's list must
// thread exactly as without it, and Node's own realpathSync must run once per folder, not twice
// per session.
import assert from "node:assert/strict";
import fs from "node:fs";
import module from "node:module";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { withRealpathMemo } from "../pi/realpath-memo.mjs";

const HOME = process.env.SESSIONDB_NODE_HOME || path.join(os.homedir(), ".cache", "sessiondb-node");
const PI = path.join(HOME, "node_modules", "@earendil-works", "pi-coding-agent");

/** What `f` returns or throws (its code), for comparing Node's answers with the memo's. */
function outcome(f) {
	try {
		return { value: f() };
	} catch (e) {
		return { code: e.code };
	}
}

test("the memo answers what fs.realpathSync answers", () => {
	const W = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-realpath-")));
	try {
		fs.mkdirSync(path.join(W, "real", "sub"), { recursive: true });
		fs.writeFileSync(path.join(W, "real", "a.jsonl"), "");
		fs.writeFileSync(path.join(W, "real", "sub", "b.jsonl"), "");
		fs.symlinkSync(path.join(W, "real"), path.join(W, "linked"));
		fs.symlinkSync(path.join(W, "real", "a.jsonl"), path.join(W, "real", "alias.jsonl"));
		fs.symlinkSync(path.join(W, "nowhere"), path.join(W, "real", "dangling.jsonl"));
		const asked = [
			path.join(W, "real", "a.jsonl"),
			path.join(W, "linked", "a.jsonl"),
			path.join(W, "linked", "sub", "b.jsonl"),
			path.join(W, "linked", "sub", "..", "a.jsonl"),
			`${W}/real//a.jsonl`,
			`${W}/real/./sub/b.jsonl`,
			`${W}/real/sub/../a.jsonl`,
			`${W}/real/sub/.`,
			path.join(W, "real", "alias.jsonl"),
			path.join(W, "linked", "alias.jsonl"),
			path.join(W, "real", "dangling.jsonl"),
			path.join(W, "real", "missing.jsonl"),
			path.join(W, "missing", "x.jsonl"),
			path.join(W, "linked"),
			path.join(W, "linked") + "/",
			"/",
			path.relative(process.cwd(), path.join(W, "linked", "a.jsonl")),
		];
		const node = asked.map((p) => outcome(() => fs.realpathSync(p)));
		const memo = withRealpathMemo(() => asked.flatMap((p) => [outcome(() => fs.realpathSync(p)), outcome(() => fs.realpathSync(p))]));
		assert.deepEqual(
			memo.filter((_, i) => i % 2 === 0),
			node,
		);
		assert.deepEqual(
			memo.filter((_, i) => i % 2 === 1),
			node,
		);
		assert.equal(node[1].value, path.join(W, "real", "a.jsonl"));
		assert.equal(node[4].value, path.join(W, "real", "a.jsonl"));
		assert.equal(fs.realpathSync.name, "realpathSync", "Node's function is back after the call");
	} finally {
		fs.rmSync(W, { recursive: true, force: true });
	}
});

test("pi's /resume list threads as pi does, resolving each folder once", async (t) => {
	const selectorFile = path.join(PI, "dist", "modes", "interactive", "components", "session-selector.js");
	if (!fs.existsSync(selectorFile)) {
		t.skip("needs pi 1.6.0 in SESSIONDB_NODE_HOME (test.sh)");
		return;
	}
	const W = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-resume-")));
	process.env.PI_CODING_AGENT_DIR = path.join(W, "agent");
	try {
		// 3 folders of 40 sessions; each session after the first of a folder is a fork of the one
		// before it, named through a symbolic link to the folder (pi canonicalises both).
		const sessions = [];
		for (let f = 0; f < 3; f++) {
			const dir = path.join(W, "agent", "sessions", `--p${f}--`);
			fs.mkdirSync(dir, { recursive: true });
			fs.symlinkSync(dir, path.join(W, `link${f}`));
			for (let i = 0; i < 40; i++) {
				const file = path.join(dir, `s${i}.jsonl`);
				fs.writeFileSync(file, "");
				const at = new Date(Date.UTC(2026, 0, 1, f, i));
				sessions.push({
					path: file,
					id: `${f}-${i}`,
					cwd: `/p${f}`,
					parentSessionPath: i > 0 ? path.join(W, `link${f}`, `s${i - 1}.jsonl`) : undefined,
					created: at,
					modified: at,
					messageCount: 1,
					firstMessage: `session ${f}-${i}`,
					allMessagesText: `session ${f}-${i}`,
				});
			}
		}
		const pi = await import(pathToFileURL(selectorFile).href);
		const { wrap } = await import("../pi/session-selector.mjs");
		const threaded = async (Selector) => {
			const loaded = Promise.withResolvers();
			const sc = new Selector(
				async () => {
					setImmediate(loaded.resolve);
					return sessions;
				},
				async () => sessions,
				() => {},
				() => {},
				() => {},
				() => {},
			);
			await loaded.promise;
			await new Promise((r) => setImmediate(r));
			return sc.sessionList.filteredSessions.map((n) => `${n.depth} ${n.session.id}`);
		};
		const piRows = await threaded(pi.SessionSelectorComponent);
		// pi threads each fork under its parent: depths 0..39 in each folder.
		assert.equal(Math.max(...piRows.map((r) => Number(r.split(" ")[0]))), 39);
		const calls = [];
		const node = fs.realpathSync;
		const spy = function realpathSync(p, o) {
			calls.push(p);
			return node(p, o);
		};
		spy.native = node.native;
		fs.realpathSync = spy;
		const lstats = [];
		const lstatSync = fs.lstatSync;
		fs.lstatSync = (...a) => {
			lstats.push(a[0]);
			return lstatSync(...a);
		};
		module.syncBuiltinESMExports(); // pi's modules import it by name
		let ours;
		try {
			ours = await threaded(wrap(pi.SessionSelectorComponent));
		} finally {
			fs.realpathSync = node;
			fs.lstatSync = lstatSync;
			module.syncBuiltinESMExports();
		}
		assert.deepEqual(ours, piRows);
		// Node's own call: once per folder (3 real, 3 linked), not twice per session (240+).
		assert.ok(calls.length <= 6, `${calls.length} calls of Node's realpathSync`);
		// A folder's entries are read once: an lstat for the first path asked in each folder,
		// not one per session.
		assert.ok(lstats.length <= 6, `${lstats.length} lstat calls`);
	} finally {
		fs.rmSync(W, { recursive: true, force: true });
	}
});

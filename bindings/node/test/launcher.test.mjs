// sessiondb-pi against plain pi, through pi's own CLI in --mode rpc with a scripted model
// (test/pi/faux-provider-ext.mjs): the same conversation runs plain (pi's bundled `pi`) and
// through the launcher, each in turn in the same agent folder and project, so that paths are
// the same strings. Every response and every session file must agree (ids and times aside),
// and `sessiondb export` of every session the launcher wrote must equal its file byte for byte.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { Rpc } from "./pi/rpc.mjs";
import { Unifier } from "./unify.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const launcher = path.join(here, "..", "pi", "launcher.mjs");
const piRoot = path.join(process.env.SESSIONDB_NODE_HOME ?? "", "node_modules", "@earendil-works", "pi-coding-agent");
const plainPi = path.join(piRoot, "dist", "bundle", "cli.js");
const ext = path.join(here, "pi", "faux-provider-ext.mjs");
const cli = process.env.SESSIONDB_BIN;
const MODEL = ["-e", ext, "--provider", "faux", "--model", "faux-1"];

/** The replies of the scripted model, in order (both sides consume the same ones). */
const REPLIES = [
	{ text: "Reading it.", tool: { name: "read", arguments: { path: "notes.txt" } } },
	"The answer is 42.",
	{ thinking: "list the folder", tool: { name: "bash", arguments: { command: "ls" } } },
	"Two files.",
	"## Goal\nKnow the answer.\n## Progress\nRead notes.txt.", // the compaction summary
	"After the compaction.",
	"On the fork.",
	"In a new session.",
	"Continued.",
	"Printed.",
	"On a fork of the first.",
];

function setUp() {
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-launcher-"));
	const project = path.join(W, "project");
	fs.mkdirSync(project, { recursive: true });
	fs.writeFileSync(path.join(project, "notes.txt"), "the answer is 42\n");
	fs.writeFileSync(path.join(project, "b.txt"), "b\n");
	fs.writeFileSync(path.join(W, "replies.json"), JSON.stringify(REPLIES));
	return { W, project, agent: path.join(W, "agent"), db: path.join(W, "db.sqlite") };
}

function envFor(t) {
	const env = { ...process.env, PI_CODING_AGENT_DIR: t.agent, FAUX_REPLIES: path.join(t.W, "replies.json"), SESSIONDB_PATH: t.db };
	env.SESSIONDB_PI_PACKAGE = piRoot;
	delete env.SESSIONDB_PI_FILES;
	return env;
}

/** Every response of the scenario, in order, with what it was. */
async function scenario(argv, t) {
	const env = envFor(t);
	const out = [];
	const rpc = new Rpc([...argv, ...MODEL], { cwd: t.project, env });
	const call = async (what, command) => {
		const r = await rpc.send(command);
		out.push({ what, r });
		return r;
	};
	const prompt = async (message) => {
		out.push({ what: `prompt ${message}`, r: await rpc.prompt(message) });
		out.push({ what: `messages after ${message}`, r: await rpc.send({ type: "get_messages" }) });
	};
	await prompt("What is in notes.txt?");
	await call("name", { type: "set_session_name", name: "first try" });
	await prompt("And in the folder?");
	const first = (await call("state 1", { type: "get_state" })).data.sessionFile;
	await call("compact", { type: "compact" });
	await prompt("Go on.");
	const forkable = (await call("fork messages", { type: "get_fork_messages" })).data.messages;
	await call("fork", { type: "fork", entryId: forkable[1].entryId });
	await prompt("Take another way.");
	await call("state fork", { type: "get_state" });
	await call("switch back", { type: "switch_session", sessionPath: first });
	await call("entries after switch", { type: "get_entries" });
	await call("clone", { type: "clone" });
	await call("state clone", { type: "get_state" });
	await call("new", { type: "new_session" });
	await prompt("Start again.");
	await call("entries", { type: "get_entries" });
	await call("tree", { type: "get_tree" });
	await call("stats", { type: "get_session_stats" });
	const html = await call("export", { type: "export_html", outputPath: path.join(t.W, "out.html") });
	assert.ok(html.success, JSON.stringify(html));
	assert.ok(fs.statSync(path.join(t.W, "out.html")).size > 1000);
	fs.rmSync(path.join(t.W, "out.html"));
	const exit = await rpc.close();
	assert.equal(exit.code, 0, rpc.stderr);
	// A second process: --continue.
	const again = new Rpc([...argv, ...MODEL, "--continue"], { cwd: t.project, env });
	out.push({ what: "continue: entries", r: await again.send({ type: "get_entries" }) });
	out.push({ what: "continue: prompt", r: await again.prompt("Continue.") });
	out.push({ what: "continue: messages", r: await again.send({ type: "get_messages" }) });
	out.push({ what: "continue: stats", r: await again.send({ type: "get_session_stats" }) });
	assert.equal((await again.close()).code, 0, again.stderr);
	// Print mode on the first session, by path.
	const printed = execFileSync(process.execPath, [...argv, ...MODEL, "-p", "--session", first, "Print it."], { cwd: t.project, env, encoding: "utf8" });
	out.push({ what: "print", r: printed });
	// --fork: a new session holding a copy of the first, then the turn.
	const forked = execFileSync(process.execPath, [...argv, ...MODEL, "-p", "--fork", first, "Fork it."], { cwd: t.project, env, encoding: "utf8" });
	out.push({ what: "print --fork", r: forked });
	return out;
}

/** The session files below the agent folder, by name (names start with the creation time). */
function sessionFiles(agent) {
	const root = path.join(agent, "sessions");
	const files = [];
	for (const d of fs.readdirSync(root)) for (const f of fs.readdirSync(path.join(root, d))) files.push(path.join(root, d, f));
	return files.sort((a, b) => path.basename(a).localeCompare(path.basename(b)));
}

test("sessiondb-pi answers and writes as plain pi over rpc, continue and print", { timeout: 300_000 }, async () => {
	assert.ok(fs.existsSync(plainPi), `pi 1.6.0 expected at ${piRoot} (.ci/node.sh installs it)`);
	assert.ok(cli, "SESSIONDB_BIN must name the sessiondb CLI (test.sh builds it)");
	const t = setUp();
	try {
		const plain = await scenario([plainPi], t);
		const plainFiles = sessionFiles(t.agent).map((f) => ({ f, text: fs.readFileSync(f, "utf8") }));
		fs.renameSync(t.agent, path.join(t.W, "plain-agent"));
		const ours = await scenario([launcher], t);
		const ourFiles = sessionFiles(t.agent);
		assert.ok(fs.existsSync(t.db), "the launcher used the database");

		const u = new Unifier();
		assert.equal(ours.length, plain.length);
		for (let i = 0; i < plain.length; i++) {
			const diff = u.compare(JSON.stringify(plain[i].r), JSON.stringify(ours[i].r));
			assert.equal(diff, null, `${plain[i].what}: ${diff}`);
		}
		assert.equal(ourFiles.length, plainFiles.length, `files: ${ourFiles} vs ${plainFiles.map((p) => p.f)}`);
		assert.ok(plainFiles.length >= 4, `${plainFiles.length} session files`);
		for (let i = 0; i < plainFiles.length; i++) {
			const text = fs.readFileSync(ourFiles[i], "utf8");
			const diff = u.compare(plainFiles[i].text, text);
			assert.equal(diff, null, `${path.basename(plainFiles[i].f)}: ${diff}`);
			const exported = execFileSync(cli, ["--db", t.db, "export", ourFiles[i]]);
			assert.ok(exported.equals(fs.readFileSync(ourFiles[i])), `sessiondb export of ${ourFiles[i]} differs from the file`);
		}
	} finally {
		fs.rmSync(t.W, { recursive: true, force: true });
	}
});

/** Runs one print-mode turn through `argv` (plain pi or the launcher); returns stdout. */
function printTurn(argv, t, prompt, extra = []) {
	return execFileSync(process.execPath, [...argv, ...MODEL, ...extra, "-p", prompt], { cwd: t.project, env: envFor(t), encoding: "utf8" });
}

/** The lines of a session file, parsed. */
function entriesOf(file) {
	return fs.readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
}

function userTexts(file) {
	return entriesOf(file)
		.filter((e) => e.type === "message" && e.message.role === "user")
		.map((e) => (typeof e.message.content === "string" ? e.message.content : e.message.content.map((c) => c.text).join("")));
}

test("mixed use: plain pi's sessions are what sessiondb-pi continues and lists; deleted files are gone", { timeout: 300_000 }, async () => {
	const t = setUp();
	try {
		printTurn([launcher], t, "one");
		const [a] = sessionFiles(t.agent);
		await new Promise((r) => setTimeout(r, 20)); // distinct modification times
		printTurn([plainPi], t, "two");
		const b = sessionFiles(t.agent).find((f) => f !== a);
		assert.ok(b, "plain pi wrote a second session");
		// -c opens plain pi's session (the newest), which the database had never seen.
		printTurn([launcher], t, "three", ["-c"]);
		assert.deepEqual(userTexts(b), ["two", "three"]);
		// Plain pi continues the file sessiondb-pi appended to; sessiondb-pi catches up with it.
		printTurn([plainPi], t, "four", ["-c"]);
		printTurn([launcher], t, "five", ["-c"]);
		assert.deepEqual(userTexts(b), ["two", "three", "four", "five"]);
		for (const f of [a, b]) {
			const exported = execFileSync(cli, ["--db", t.db, "export", f]);
			assert.ok(exported.equals(fs.readFileSync(f)), `sessiondb export of ${f} differs from the file`);
		}
		// What /resume lists (pi's session selector calls list and listAll).
		const listed = async () => {
			const out = execFileSync(
				process.execPath,
				["--input-type=module", "-e", `import { SessionManager } from ${JSON.stringify(path.join(here, "..", "index.js"))}; SessionManager.useFiles(true); const l = await SessionManager.list(${JSON.stringify(t.project)}); const all = await SessionManager.listAll(); console.log(JSON.stringify([l.map((s) => s.path), all.map((s) => s.path)]));`],
				{ env: envFor(t), encoding: "utf8" },
			);
			return JSON.parse(out);
		};
		assert.deepEqual(await listed(), [[b, a], [b, a]]);
		// A file deleted by hand: gone from the lists and from what -c opens.
		fs.rmSync(b);
		assert.deepEqual(await listed(), [[a], [a]]);
		printTurn([launcher], t, "six", ["-c"]);
		assert.deepEqual(userTexts(a), ["one", "six"]);
		assert.ok(!fs.existsSync(b), "the deleted file stays deleted");
	} finally {
		fs.rmSync(t.W, { recursive: true, force: true });
	}
});

test("crash: sessiondb-pi killed during a turn loses no acknowledged entry; file and database agree", { timeout: 120_000 }, async () => {
	const t = setUp();
	try {
		fs.writeFileSync(
			path.join(t.W, "replies.json"),
			JSON.stringify([{ text: "Waiting.", tool: { name: "bash", arguments: { command: "sleep 30" } } }, "Done."]),
		);
		const rpc = new Rpc([launcher, ...MODEL], { cwd: t.project, env: envFor(t) });
		await rpc.send({ type: "set_session_name", name: "crash" });
		const prompted = rpc.prompt("Wait for me.");
		// Wait until the assistant's tool call is acknowledged (it is in the session), then kill.
		let acknowledged = [];
		for (let i = 0; i < 200; i++) {
			await new Promise((r) => setTimeout(r, 50));
			const r = await rpc.send({ type: "get_entries" });
			acknowledged = r.data.entries;
			if (acknowledged.some((e) => e.type === "message" && e.message.role === "assistant")) break;
		}
		assert.ok(acknowledged.some((e) => e.type === "message" && e.message.role === "assistant"), "the tool call was appended");
		rpc.kill("SIGKILL");
		const exit = await rpc.exited;
		assert.equal(exit.signal, "SIGKILL");
		prompted.catch(() => {});
		const [file] = sessionFiles(t.agent);
		const inFile = entriesOf(file).slice(1);
		assert.deepEqual(
			inFile.map((e) => e.id),
			acknowledged.map((e) => e.id),
			"the file holds every acknowledged entry",
		);
		// Restart: the database (journal settled by the open) and the file agree, and the session goes on.
		const again = new Rpc([launcher, ...MODEL, "-c"], { cwd: t.project, env: envFor(t) });
		const entries = (await again.send({ type: "get_entries" })).data.entries;
		assert.deepEqual(entries, inFile);
		assert.equal((await again.close()).code, 0, again.stderr);
		const exported = execFileSync(cli, ["--db", t.db, "export", file]);
		assert.ok(exported.equals(fs.readFileSync(file)), "sessiondb export equals the file after the crash");
	} finally {
		fs.rmSync(t.W, { recursive: true, force: true });
	}
});

test("SESSIONDB_PI_FILES=off: sessions in the database only; -c, --export and export_html work", { timeout: 120_000 }, async () => {
	const t = setUp();
	try {
		const env = { ...envFor(t), SESSIONDB_PI_FILES: "off" };
		const run = (...a) => execFileSync(process.execPath, [launcher, ...MODEL, ...a], { cwd: t.project, env, encoding: "utf8" });
		run("-p", "remember me");
		assert.ok(!fs.existsSync(path.join(t.agent, "sessions")) || sessionFiles(t.agent).length === 0, "no session file");
		run("-c", "-p", "again");
		const rpc = new Rpc([launcher, ...MODEL, "-c"], { cwd: t.project, env });
		const entries = (await rpc.send({ type: "get_entries" })).data.entries;
		const users = entries.filter((e) => e.type === "message" && e.message.role === "user").map((e) => e.message.content[0].text);
		assert.deepEqual(users, ["remember me", "again"]);
		const file = (await rpc.send({ type: "get_state" })).data.sessionFile;
		const html = await rpc.send({ type: "export_html", outputPath: path.join(t.W, "a.html") });
		assert.ok(html.success, JSON.stringify(html));
		assert.ok(fs.readFileSync(path.join(t.W, "a.html"), "utf8").length > 1000);
		assert.equal((await rpc.close()).code, 0, rpc.stderr);
		assert.ok(!fs.existsSync(file), "still no session file");
		run("--export", file, path.join(t.W, "b.html"));
		assert.ok(fs.statSync(path.join(t.W, "b.html")).size > 1000);
		assert.ok(!fs.existsSync(file));
		// The database exports it as pi would have written it.
		const exported = execFileSync(cli, ["--db", t.db, "export", file], { encoding: "utf8" });
		assert.equal(exported.trim().split("\n").length, entries.length + 1);
	} finally {
		fs.rmSync(t.W, { recursive: true, force: true });
	}
});

test("an unsupported pi version stops with one line", () => {
	const t = setUp();
	try {
		const fake = path.join(t.W, "old-pi");
		fs.mkdirSync(path.join(fake, "dist", "core"), { recursive: true });
		fs.writeFileSync(path.join(fake, "package.json"), JSON.stringify({ name: "@earendil-works/pi-coding-agent", version: "1.5.2" }));
		const r = spawnSync(process.execPath, [launcher, "-p", "hi"], { cwd: t.project, env: { ...envFor(t), SESSIONDB_PI_PACKAGE: fake }, encoding: "utf8" });
		assert.equal(r.status, 1);
		assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
		assert.match(r.stderr, /^sessiondb-pi: pi 1\.5\.2 at .* is not supported \(sessiondb-pi supports pi 1\.6\.x\)/);
	} finally {
		fs.rmSync(t.W, { recursive: true, force: true });
	}
});

test("a postgres:// database: --db URL, -c continues, the file is what the server exports", { timeout: 120_000, skip: !process.env.SESSIONDB_TEST_PG_URL && "no PostgreSQL server (SESSIONDB_TEST_PG_URL)" }, () => {
	const t = setUp();
	try {
		const url = process.env.SESSIONDB_TEST_PG_URL;
		const env = { ...envFor(t), PGSSLROOTCERT: process.env.SESSIONDB_TEST_PG_CA ?? "" };
		delete env.SESSIONDB_PATH;
		const run = (...a) => execFileSync(process.execPath, [launcher, "--db", url, ...MODEL, ...a], { cwd: t.project, env, encoding: "utf8" });
		run("-p", "on a server");
		run("-c", "-p", "still there");
		const [file] = sessionFiles(t.agent);
		assert.deepEqual(userTexts(file), ["on a server", "still there"]);
		const exported = execFileSync(cli, ["--db", url, "export", file], { env });
		assert.ok(exported.equals(fs.readFileSync(file)), "the server exports the file's bytes");
		// The server recorded the file as written: a catch-up finds it unchanged, reads nothing.
		const synced = execFileSync(
			process.execPath,
			["-e", `const n = require(${JSON.stringify(path.join(here, "..", "sessiondb.node"))}); console.log(new n.Catalog(${JSON.stringify(url)}).syncPaths(${JSON.stringify(path.dirname(file))}, [${JSON.stringify(file)}]));`],
			{ env, encoding: "utf8" },
		);
		assert.deepEqual([JSON.parse(synced).unchanged, JSON.parse(synced).rewritten, JSON.parse(synced).grown], [1, 0, 0], synced);
	} finally {
		fs.rmSync(t.W, { recursive: true, force: true });
	}
});

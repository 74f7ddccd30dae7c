// One writer per session: a TUI sessiondb-pi (in tmux) holds the session it opened; a second
// sessiondb-pi given the same session appends nothing to it and continues in a fork, saying why
// on stderr; once the TUI is killed (SIGKILL: no chance to let go), the next one appends to the
// session itself. On SQLite and on PostgreSQL. And quitting the TUI prints how to resume.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const launcher = path.join(here, "..", "pi", "launcher.mjs");
const piRoot = path.join(process.env.SESSIONDB_NODE_HOME ?? "", "node_modules", "@earendil-works", "pi-coding-agent");
const ext = path.join(here, "pi", "faux-provider-ext.mjs");
const cli = process.env.SESSIONDB_BIN;
const MODEL = ["-e", ext, "--provider", "faux", "--model", "faux-1"];
const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
const pgUrl = process.env.SESSIONDB_TEST_PG_URL;

/** A tmux server of its own whose pane "pi" runs `command`; its screen, with wrapped lines joined. */
function terminal(name) {
	const socket = `${name}-${process.pid}`;
	const tmux = (...a) => execFileSync("tmux", ["-L", socket, ...a], { encoding: "utf8" });
	const screen = () => tmux("capture-pane", "-p", "-J", "-t", "pi");
	const waitFor = async (what, ok, timeout = 60_000) => {
		const until = Date.now() + timeout;
		let last = "";
		while (Date.now() < until) {
			last = screen();
			if (ok(last)) return last;
			await new Promise((r) => setTimeout(r, 150));
		}
		assert.fail(`timed out waiting for ${what}; the screen:\n${last}`);
	};
	const start = (cwd, env, argv) => {
		const vars = Object.entries({ ...env, PATH: process.env.PATH }).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
		const command = `cd ${JSON.stringify(cwd)} && env ${vars.join(" ")} ${[process.execPath, launcher, ...argv].map((a) => JSON.stringify(a)).join(" ")}; echo "[exited]"; sleep 120`;
		tmux("new-session", "-d", "-s", "pi", "-x", "150", "-y", "45", command);
	};
	const kill = () => spawnSync("tmux", ["-L", socket, "kill-server"]);
	return { tmux, screen, waitFor, start, kill };
}

function sessionFiles(agent) {
	const root = path.join(agent, "sessions");
	if (!fs.existsSync(root)) return [];
	return fs.readdirSync(root).flatMap((d) => fs.readdirSync(path.join(root, d)).map((f) => path.join(root, d, f))).sort();
}

const entriesOf = (file) => fs.readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
const userTexts = (file) =>
	entriesOf(file)
		.filter((e) => e.type === "message" && e.message.role === "user")
		.map((e) => (typeof e.message.content === "string" ? e.message.content : e.message.content.map((c) => c.text).join("")));

/** The whole scenario on one database: `db` is a path or a URL (given as --db). */
async function leaseScenario(name, db, extraEnv) {
	const W = fs.mkdtempSync(path.join(os.tmpdir(), `sessiondb-leases-${name}-`));
	const project = path.join(W, "project");
	fs.mkdirSync(project);
	const agent = path.join(W, "agent");
	const env = { PI_CODING_AGENT_DIR: agent, SESSIONDB_PI_PACKAGE: piRoot, FAUX_REPLIES: "", TERM: "xterm-256color", ...extraEnv };
	const childEnv = { ...process.env, ...env };
	delete childEnv.SESSIONDB_PATH;
	delete childEnv.SESSIONDB_PI_FILES;
	const dbArgs = ["--db", db];
	const print = (...a) => spawnSync(process.execPath, [launcher, ...dbArgs, ...MODEL, ...a], { cwd: project, env: childEnv, encoding: "utf8" });
	const exported = (file) => execFileSync(cli, ["--db", db, "export", file], { env: childEnv });
	// Who holds X's lease, asked as another process would.
	const holderOf = (file) => {
		const code = `import { SessionManager } from ${JSON.stringify(path.join(here, "..", "index.js"))}; SessionManager.useDatabase(${JSON.stringify(db)}); console.log(JSON.stringify(SessionManager.leaseHolder(${JSON.stringify(file)}) ?? null));`;
		const h = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", code], { env: childEnv, encoding: "utf8" }));
		return h && { pid: h.pid, live: h.live };
	};
	const term = terminal(`sessiondb-leases-${name}`);
	try {
		const first = print("-p", "first words");
		assert.equal(first.status, 0, first.stderr);
		const [x] = sessionFiles(agent);
		const xBefore = fs.readFileSync(x);
		assert.equal(holderOf(x), null, "released when the -p run exited");
		// The TUI opens X for writing and holds it.
		term.start(project, env, [...dbArgs, ...MODEL, "--session", x]);
		await term.waitFor("the TUI on X", (s) => s.includes("faux-1") && s.includes("first words"));
		const second = print("-p", "--session", x, "second words");
		assert.equal(second.status, 0, second.stderr);
		const notice = /^sessiondb-pi: session (.+) is being written by process (\d+) on (.+) \(since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\); continuing in a new session forked from it: (.+)$/m.exec(second.stderr);
		assert.ok(notice, `stderr says why:\n${second.stderr}`);
		const [, named, pid, host, forked] = notice;
		assert.equal(named, x);
		assert.equal(host, os.hostname());
		// The holder named is the TUI's process: the pane's shell started it.
		const pane = term.tmux("display-message", "-p", "-t", "pi", "#{pane_pid}").trim();
		const parent = /^PPid:\s+(\d+)$/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1];
		assert.ok(parent === pane || pid === pane, `holder ${pid} (parent ${parent}) is not the pane's (${pane}) process`);
		assert.equal(second.stderr.trim().split("\n").filter((l) => l.includes("being written")).length, 1);
		assert.deepEqual(holderOf(x), { pid: Number(pid), live: true });
		// X got nothing, in its file or its rows; the turn is in the fork, whose parent is X.
		assert.ok(fs.readFileSync(x).equals(xBefore), "X's file is unchanged");
		assert.ok(exported(x).equals(xBefore), "X's rows are unchanged");
		assert.deepEqual(sessionFiles(agent), [x, forked].sort());
		const [header] = entriesOf(forked);
		assert.equal(header.parentSession, x);
		assert.deepEqual(userTexts(forked), ["first words", "second words"]);
		assert.ok(exported(forked).equals(fs.readFileSync(forked)), "the fork is stored as written");
		// A second TUI given X says so on its screen, in one line.
		const other = terminal(`sessiondb-leases-${name}-2`);
		try {
			other.start(project, env, [...dbArgs, ...MODEL, "--session", x]);
			// (pi wraps it to the screen's width: compared without whitespace)
			const flat = (t) => t.replace(/\s+/g, "");
			const want = flat(`sessiondb-pi: session ${x} is being written by process ${pid} on ${host} (since`);
			const shown = flat(await other.waitFor("the line on the TUI's screen", (s) => s.includes("faux-1") && flat(s).includes(want)));
			assert.match(shown, /\(since\d{4}-\d\d-\d\d\d\d:\d\d:\d\dUTC\);continuinginanewsessionforkedfromit:\/tmp\//);
		} finally {
			other.kill();
		}
		// The TUI dies without letting go: the next one takes the lease over and appends to X.
		process.kill(Number(pid), "SIGKILL");
		await term.waitFor("the TUI killed", (s) => s.includes("[exited]"));
		assert.deepEqual(holderOf(x), { pid: Number(pid), live: false }, "a dead holder's lease stays, lost");
		const third = print("-p", "--session", x, "third words");
		assert.equal(third.status, 0, third.stderr);
		assert.doesNotMatch(third.stderr, /being written/);
		assert.deepEqual(userTexts(x), ["first words", "third words"]);
		assert.equal(holderOf(x), null, "taken over, then released on exit");
		assert.ok(exported(x).equals(fs.readFileSync(x)), "X's rows are its file");
		assert.equal(sessionFiles(agent).length, 3, "X, and the forks of the -p run and of the second TUI (pi writes a fork at once)");
		return { W, project, env, agent, x };
	} finally {
		term.kill();
	}
}

test("leases on SQLite: a session the TUI holds is forked, not appended to, until the TUI dies", { timeout: 240_000, skip: !hasTmux && "tmux is not installed" }, async () => {
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-leases-db-"));
	let run;
	try {
		run = await leaseScenario("sqlite", path.join(W, "db.sqlite"), {});
		// Quitting the TUI: one line saying how to resume, with sessiondb-pi and with plain pi.
		const term = terminal("sessiondb-leases-quit");
		try {
			const db = path.join(W, "db.sqlite");
			term.start(run.project, run.env, ["--db", db, ...MODEL, "--session", run.x]);
			await term.waitFor("the TUI on X", (s) => s.includes("faux-1") && s.includes("third words"));
			const id = entriesOf(run.x)[0].id;
			for (let i = 0; i < 40 && !term.screen().includes("[exited]"); i++) {
				term.tmux("send-keys", "-t", "pi", "C-u");
				term.tmux("send-keys", "-t", "pi", "-l", "/quit");
				await new Promise((r) => setTimeout(r, 300));
				if (term.screen().includes("/quit")) term.tmux("send-keys", "-t", "pi", "Enter");
				await new Promise((r) => setTimeout(r, 500));
			}
			const s = await term.waitFor("the resume line", (s) => s.includes("[exited]"));
			const lines = s.split("\n").filter((l) => l.startsWith("Resume this session:"));
			assert.deepEqual(lines, [`Resume this session: sessiondb-pi --db ${db} --session ${id}  (plain pi: pi --session ${run.x})`], s);
			const h = execFileSync(process.execPath, ["--input-type=module", "-e", `import { SessionManager } from ${JSON.stringify(path.join(here, "..", "index.js"))}; SessionManager.useDatabase(${JSON.stringify(db)}); console.log(JSON.stringify(SessionManager.leaseHolder(${JSON.stringify(run.x)}) ?? null));`], { encoding: "utf8" });
			assert.equal(h.trim(), "null", "the TUI released X when it quit");
		} finally {
			term.kill();
		}
	} finally {
		fs.rmSync(W, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
		if (run) fs.rmSync(run.W, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
	}
});

test("leases on PostgreSQL: the same", { timeout: 240_000, skip: (!hasTmux && "tmux is not installed") || (!pgUrl && "no PostgreSQL server (SESSIONDB_TEST_PG_URL)") }, async () => {
	const run = await leaseScenario("pg", pgUrl, { PGSSLROOTCERT: process.env.SESSIONDB_TEST_PG_CA ?? "" });
	fs.rmSync(run.W, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
});

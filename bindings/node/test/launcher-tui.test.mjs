// sessiondb-pi's interactive TUI in a real terminal (tmux): start, prompt, /resume listing the
// sessions of several projects, pick one from another project, continue it, quit, `-c` again.
// The panes are captured (and kept in $SESSIONDB_TUI_CAPTURES when set, to look at).
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { writeSession } from "./tree-session.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const launcher = path.join(here, "..", "pi", "launcher.mjs");
const piRoot = path.join(process.env.SESSIONDB_NODE_HOME ?? "", "node_modules", "@earendil-works", "pi-coding-agent");
const ext = path.join(here, "pi", "faux-provider-ext.mjs");
const cli = process.env.SESSIONDB_BIN;
const hasTmux = spawnSync("tmux", ["-V"]).status === 0;

/**
 * A tmux server of its own, whose pane "pi" runs what a test starts in it: `tmux(...args)`,
 * `screen()` (the pane's text), `waitFor(what, test)` (polls the screen until `test` holds;
 * `keep(what, screen)` is handed the screen it stopped at, a timeout's too), `ended()` (waits,
 * up to 10 s, for the pane's program to exit), `kill()`.
 */
function terminal(name, keep = () => {}) {
	const socket = `${name}-${process.pid}`;
	const tmux = (...a) => execFileSync("tmux", ["-L", socket, ...a], { encoding: "utf8" });
	const screen = () => tmux("capture-pane", "-p", "-t", "pi");
	const waitFor = async (what, test, timeout = 60_000) => {
		const until = Date.now() + timeout;
		let last = "";
		while (Date.now() < until) {
			last = screen();
			if (test(last)) {
				keep(what, last);
				return last;
			}
			await new Promise((r) => setTimeout(r, 150));
		}
		keep(`${what}-timeout`, last);
		assert.fail(`timed out waiting for ${what}; the screen:\n${last}`);
	};
	const ended = async () => {
		for (let i = 0; i < 100 && spawnSync("tmux", ["-L", socket, "has-session", "-t", "pi"]).status === 0; i++) await new Promise((r) => setTimeout(r, 100));
	};
	const kill = () => spawnSync("tmux", ["-L", socket, "kill-server"]);
	return { tmux, screen, waitFor, ended, kill };
}

/**
 * Types /resume until pi's selector opens (pi refuses commands while its startup finishes).
 * Enter is pressed only once the editor shows the whole command: on a loaded machine pi can
 * drop the first keys of its startup, and a bare "resume" would be sent as a prompt.
 */
async function openResume(tmux, screen) {
	const pause = () => new Promise((r) => setTimeout(r, 150));
	for (let attempt = 0; attempt < 20; attempt++) {
		tmux("send-keys", "-t", "pi", "C-u");
		tmux("send-keys", "-t", "pi", "-l", "/resume");
		let typed = false;
		for (let i = 0; i < 10 && !typed; i++) {
			await pause();
			typed = screen().includes("/resume");
		}
		if (!typed) continue;
		tmux("send-keys", "-t", "pi", "Enter");
		for (let i = 0; i < 20; i++) {
			await pause();
			if (screen().includes("Resume Session")) return;
		}
	}
	assert.fail(`/resume never opened the selector; the screen:\n${screen()}`);
}

/**
 * Types `text` as a prompt and presses Enter until `done(screen)`. The text is typed again
 * until the editor shows all of it (a loaded machine can drop the first keys of pi's
 * startup), and Enter is pressed again while pi's startup finishes (it keeps a prompt
 * submitted before then in the editor: "Startup is still in progress").
 */
async function submit(tmux, screen, text, done, timeout = 90_000) {
	const pause = () => new Promise((r) => setTimeout(r, 150));
	const until = Date.now() + timeout;
	let typed = false;
	while (!typed && Date.now() < until) {
		tmux("send-keys", "-t", "pi", "C-u");
		tmux("send-keys", "-t", "pi", "-l", text);
		for (let i = 0; i < 10 && !typed; i++) {
			await pause();
			typed = screen().includes(text);
		}
	}
	let last = "";
	while (Date.now() < until) {
		tmux("send-keys", "-t", "pi", "Enter");
		for (let i = 0; i < 10; i++) {
			await pause();
			last = screen();
			if (done(last)) return last;
		}
	}
	assert.fail(`no answer to ${JSON.stringify(text)}; the screen:\n${last}`);
}

test("sessiondb-pi's TUI in tmux: prompt, /resume across projects, continue, quit, -c", { timeout: 300_000, skip: !hasTmux && "tmux is not installed" }, async () => {
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-tui-"));
	const captures = process.env.SESSIONDB_TUI_CAPTURES;
	let shot = 0;
	const keep = (name, text) => {
		if (captures) {
			fs.mkdirSync(captures, { recursive: true });
			fs.writeFileSync(path.join(captures, `${String(++shot).padStart(2, "0")}-${name}.txt`), text);
		}
	};
	const { tmux, screen, waitFor, ended, kill } = terminal("sessiondb-tui", keep);
	const env = {
		PI_CODING_AGENT_DIR: path.join(W, "agent"),
		SESSIONDB_PATH: path.join(W, "db.sqlite"),
		SESSIONDB_PI_PACKAGE: piRoot,
		FAUX_REPLIES: path.join(W, "replies.json"),
		TERM: "xterm-256color",
	};
	fs.writeFileSync(env.FAUX_REPLIES, JSON.stringify(["Hello from the scripted model."]));
	const childEnv = { ...process.env, ...env };
	delete childEnv.SESSIONDB_PI_FILES;
	const model = ["-e", ext, "--provider", "faux", "--model", "faux-1"];
	try {
		// Two other projects, each with a session.
		for (const name of ["alpha", "beta"]) {
			const dir = path.join(W, name);
			fs.mkdirSync(dir);
			execFileSync(process.execPath, [launcher, ...model, "-p", `first words in ${name}`], { cwd: dir, env: { ...childEnv, FAUX_REPLIES: "" } });
		}
		const project = path.join(W, "project");
		fs.mkdirSync(project);
		const start = (extra) => {
			const vars = Object.entries({ ...env, PATH: process.env.PATH }).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
			const command = `cd ${JSON.stringify(project)} && env ${vars.join(" ")} ${JSON.stringify(process.execPath)} ${JSON.stringify(launcher)} ${model.map((a) => JSON.stringify(a)).join(" ")} ${extra}`;
			tmux("new-session", "-d", "-s", "pi", "-x", "150", "-y", "45", command);
		};
		start("");
		await waitFor("started", (s) => s.includes("faux-1"));
		keep("answered", await submit(tmux, screen, "what is here?", (s) => s.includes("Hello from the scripted model.")));
		await openResume(tmux, screen);
		const current = await waitFor("resume current folder", (s) => s.includes("Resume Session (Current Folder)") && s.includes("what is here?"));
		assert.ok(!current.includes("first words in alpha"), `the current folder lists only its sessions:\n${current}`);
		tmux("send-keys", "-t", "pi", "Tab");
		await waitFor("resume all", (s) => s.includes("Resume Session (All)") && s.includes("first words in alpha") && s.includes("first words in beta") && s.includes("what is here?"));
		tmux("send-keys", "-t", "pi", "-l", "alpha");
		await waitFor("resume search", (s) => s.includes("first words in alpha") && !s.includes("first words in beta"));
		tmux("send-keys", "-t", "pi", "Enter");
		await waitFor("resumed alpha", (s) => !s.includes("Resume Session") && s.includes("first words in alpha"));
		// (pi reloads extensions on a switch: the scripted model starts its replies again)
		const continued = (s) => s.includes("continue in alpha") && s.slice(s.indexOf("continue in alpha")).includes("Hello from the scripted model.");
		keep("continued alpha", await submit(tmux, screen, "continue in alpha", continued));
		tmux("send-keys", "-t", "pi", "-l", "/quit");
		tmux("send-keys", "-t", "pi", "Enter");
		await ended();
		// -c in the project folder: its own session again.
		start("-c");
		await waitFor("continued with -c", (s) => s.includes("what is here?") && s.includes("Hello from the scripted model."));
		tmux("send-keys", "-t", "pi", "-l", "/quit");
		tmux("send-keys", "-t", "pi", "Enter");
		await ended();
		// alpha's session file got the new turn, and the database exports it byte for byte.
		const alphaDir = fs.readdirSync(path.join(W, "agent", "sessions")).find((d) => d.includes("alpha"));
		const [alphaFile] = fs.readdirSync(path.join(W, "agent", "sessions", alphaDir)).map((f) => path.join(W, "agent", "sessions", alphaDir, f));
		const text = fs.readFileSync(alphaFile, "utf8");
		assert.ok(/"continue in alpha".*\n.*"Hello from the scripted model\."/.test(text), text.slice(-2000));
		if (cli) {
			const exported = execFileSync(cli, ["--db", env.SESSIONDB_PATH, "export", alphaFile]);
			assert.ok(exported.equals(fs.readFileSync(alphaFile)), "sessiondb export equals alpha's file");
		}
	} finally {
		kill();
		fs.rmSync(W, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
	}
});

test("SESSIONDB_PI_FILES=off: /resume deletes a session kept in the database only", { timeout: 240_000, skip: !hasTmux && "tmux is not installed" }, async () => {
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-tui-off-"));
	const { tmux, screen, waitFor, kill } = terminal("sessiondb-tui-off");
	const env = { PI_CODING_AGENT_DIR: path.join(W, "agent"), SESSIONDB_PATH: path.join(W, "db.sqlite"), SESSIONDB_PI_PACKAGE: piRoot, SESSIONDB_PI_FILES: "off", FAUX_REPLIES: "", TERM: "xterm-256color" };
	const model = ["-e", ext, "--provider", "faux", "--model", "faux-1"];
	try {
		const project = path.join(W, "project");
		fs.mkdirSync(project);
		for (const words of ["keep this one", "delete this one"]) {
			execFileSync(process.execPath, [launcher, ...model, "-p", words], { cwd: project, env: { ...process.env, ...env } });
		}
		const vars = Object.entries({ ...env, PATH: process.env.PATH }).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
		tmux("new-session", "-d", "-s", "pi", "-x", "150", "-y", "45", `cd ${JSON.stringify(project)} && env ${vars.join(" ")} ${JSON.stringify(process.execPath)} ${JSON.stringify(launcher)} ${model.map((a) => JSON.stringify(a)).join(" ")}`);
		await waitFor("started", (s) => s.includes("faux-1"));
		await openResume(tmux, screen);
		await waitFor("both listed", (s) => s.includes("keep this one") && s.includes("delete this one"));
		tmux("send-keys", "-t", "pi", "-l", "delete");
		await waitFor("the one to delete", (s) => !s.includes("keep this one") && s.includes("delete this one"));
		tmux("send-keys", "-t", "pi", "C-d");
		await waitFor("the confirmation", (s) => s.includes("Delete session?"));
		tmux("send-keys", "-t", "pi", "Enter");
		await waitFor("deleted", (s) => !s.includes("Delete session?") && !/›\s+delete this one/.test(s));
		tmux("send-keys", "-t", "pi", "C-u");
		await waitFor("the rest listed", (s) => s.includes("keep this one") && !/›?\s+delete this one\s/.test(s.slice(s.indexOf("Resume Session"))));
		const listed = execFileSync(
			process.execPath,
			["--input-type=module", "-e", `import { SessionManager } from ${JSON.stringify(path.join(here, "..", "index.js"))}; const l = await SessionManager.list(${JSON.stringify(project)}); console.log(JSON.stringify(l.map((s) => s.firstMessage)));`],
			{ env: { ...process.env, ...env }, encoding: "utf8" },
		);
		assert.deepEqual(JSON.parse(listed), ["keep this one"]);
	} finally {
		kill();
		fs.rmSync(W, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
	}
});

test("sessiondb-pi's TUI commands: /name, /session, /export, /compact, /tree, /fork, /clone, /new, then -r", { timeout: 240_000, skip: !hasTmux && "tmux is not installed" }, async () => {
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-tui-cmd-"));
	const { tmux, screen, waitFor, ended, kill } = terminal("sessiondb-tui-cmd");
	/** Types `text` into the editor (cleared first) and presses Enter once it shows whole. */
	const type = async (text) => {
		tmux("send-keys", "-t", "pi", "C-u");
		tmux("send-keys", "-t", "pi", "-l", text);
		await waitFor(`the editor to show ${text}`, (s) => s.includes(text));
		tmux("send-keys", "-t", "pi", "Enter");
	};
	const key = (k) => tmux("send-keys", "-t", "pi", k);
	const sessions = path.join(W, "agent", "sessions");
	const files = () => (fs.existsSync(sessions) ? fs.readdirSync(sessions).flatMap((d) => fs.readdirSync(path.join(sessions, d)).map((f) => path.join(sessions, d, f))).sort() : []);
	const lines = (file) => fs.readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
	const env = {
		PI_CODING_AGENT_DIR: path.join(W, "agent"),
		SESSIONDB_PATH: path.join(W, "db.sqlite"),
		SESSIONDB_PI_PACKAGE: piRoot,
		FAUX_REPLIES: path.join(W, "replies.json"),
		TERM: "xterm-256color",
	};
	fs.writeFileSync(env.FAUX_REPLIES, JSON.stringify(["Answer one.", "Answer two.", "## Goal\nTest the commands.\n## Progress\nTwo answers."]));
	const model = ["-e", ext, "--provider", "faux", "--model", "faux-1"];
	const project = path.join(W, "project");
	fs.mkdirSync(project);
	// A short conversation is enough to compact.
	fs.mkdirSync(env.PI_CODING_AGENT_DIR, { recursive: true });
	fs.writeFileSync(path.join(env.PI_CODING_AGENT_DIR, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 10 } }));
	const start = (extra) => {
		const vars = Object.entries({ ...env, PATH: process.env.PATH }).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
		tmux("new-session", "-d", "-s", "pi", "-x", "150", "-y", "45", `cd ${JSON.stringify(project)} && env ${vars.join(" ")} ${JSON.stringify(process.execPath)} ${JSON.stringify(launcher)} ${model.map((a) => JSON.stringify(a)).join(" ")} ${extra}`);
	};
	try {
		start("");
		await waitFor("started", (s) => s.includes("faux-1"));
		await submit(tmux, screen, "first question", (s) => s.includes("Answer one."));
		await type("second question");
		await waitFor("answer two", (s) => s.includes("Answer two."));
		const [first] = files();
		await type("/name tui name");
		await waitFor("named", (s) => s.includes("Session name set: tui name"));
		assert.equal(lines(first).at(-1).name, "tui name");
		// /session: pi's stats over getEntries() and getSessionStats().
		await type("/session");
		const info = await waitFor("session info", (s) => s.includes("Session Info") && s.includes("Assistant: 2"));
		assert.match(info, /Name: tui name/);
		assert.match(info, /User: 2/);
		const html = path.join(W, "out.html");
		await type(`/export ${html}`);
		await waitFor("exported", (s) => s.includes("Session exported to"));
		const data = /id="session-data"[^>]*>([A-Za-z0-9+/=]+)</.exec(fs.readFileSync(html, "utf8"));
		assert.ok(data && Buffer.from(data[1], "base64").toString("utf8").includes("second question"), "the page holds the session");
		await type("/compact");
		await waitFor("compacted", (s) => s.includes("Compacted from"));
		assert.equal(lines(first).filter((e) => e.type === "compaction").length, 1);
		// /fork at the last question: a new file holding the path before it.
		await type("/fork");
		await waitFor("fork selector", (s) => s.includes("Fork from Message") && /›\s*second question/.test(s));
		key("Enter");
		await waitFor("forked", (s) => s.includes("Forked to new session"));
		const fork = files().find((f) => f !== first);
		assert.ok(fork, files().join("\n"));
		assert.deepEqual(
			lines(fork).filter((e) => e.type === "message").map((e) => e.message.role),
			lines(first).filter((e) => e.type === "message").slice(0, 3).map((e) => e.message.role), // the system message, the first question and its answer
		);
		// /tree in the fork: back to the first question (no summary), then another way from there.
		await type("/tree");
		await waitFor("the tree", (s) => s.includes("Session Tree") && s.includes("user: first question"));
		for (let i = 0; i < 20 && !/›\s*[•├└│─ ]*user: first question/.test(screen()); i++) {
			key("Up");
			await new Promise((r) => setTimeout(r, 150));
		}
		await waitFor("first question selected", (s) => /›\s*[•├└│─ ]*user: first question/.test(s));
		key("Enter");
		await waitFor("summary choice", (s) => s.includes("No summary"));
		key("Enter");
		await waitFor("navigated", (s) => s.includes("Navigated to selected point"));
		const before = lines(fork).length;
		await type("another way");
		// (pi reloads extensions on a switch: the scripted model starts its replies again)
		await waitFor("the answer", (s) => s.includes("another way") && /Answer \w+\./.test(s.slice(s.indexOf("another way"))));
		const branched = lines(fork);
		assert.equal(branched.length, before + 2);
		const firstUser = branched.find((e) => e.type === "message" && e.message.role === "user");
		assert.equal(branched.at(-2).parentId, firstUser.parentId, "the new question hangs where the first one did");
		assert.equal(files().length, 2);
		await type("/clone");
		await waitFor("cloned", (s) => s.includes("Cloned to new session"));
		assert.equal(files().length, 3);
		await type("/new");
		await waitFor("new session", (s) => s.includes("New session started"));
		await type("in the new one");
		await waitFor("answered in the new one", (s) => s.slice(s.indexOf("in the new one")).includes("Answer one."));
		assert.equal(files().length, 4);
		await type("/quit");
		await ended();
		// -r: pi's picker at startup; the named session is listed by its name.
		start("-r");
		await waitFor("the picker", (s) => s.includes("Resume Session") && s.includes("tui name"));
		tmux("send-keys", "-t", "pi", "-l", "tui name");
		await waitFor("the named session alone", (s) => s.includes("tui name") && !s.includes("in the new one"));
		key("Enter");
		await waitFor("resumed", (s) => !s.includes("Resume Session") && s.includes("Answer two.") && s.includes("Compacted from"));
		await type("/quit");
		await ended();
		// Every file is what the database exports.
		if (cli) {
			for (const f of files()) {
				const exported = execFileSync(cli, ["--db", env.SESSIONDB_PATH, "export", f]);
				assert.ok(exported.equals(fs.readFileSync(f)), `sessiondb export equals ${f}`);
			}
		}
	} finally {
		kill();
		fs.rmSync(W, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
	}
});

test("/tree on a long branched session: sessiondb-pi's screens are plain pi's", { timeout: 300_000, skip: !hasTmux && "tmux is not installed" }, async () => {
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-tui-tree-"));
	const project = path.join(W, "project");
	fs.mkdirSync(project);
	const model = ["-e", ext, "--provider", "faux", "--model", "faux-1"];
	/** The /tree screen, and the screen after moving to the entry three rows up, on one side. */
	const screens = async (side, program) => {
		const agent = path.join(W, side, "agent");
		const folder = path.join(agent, "sessions", "--tree--");
		fs.mkdirSync(folder, { recursive: true });
		// A session over 2,000 entries: sessiondb-pi builds its tree lazily.
		const file = path.join(folder, "2026-01-01T00-00-00-000Z_0199a000-0000-7000-8000-000000000000.jsonl");
		writeSession(file, project);
		const env = { PI_CODING_AGENT_DIR: agent, SESSIONDB_PATH: path.join(W, side, "db.sqlite"), SESSIONDB_PI_PACKAGE: piRoot, FAUX_REPLIES: "", TERM: "xterm-256color", PATH: process.env.PATH };
		const vars = Object.entries(env).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
		const { tmux, screen, waitFor, kill } = terminal(`sessiondb-tui-tree-${side}`);
		const key = (k) => tmux("send-keys", "-t", "pi", k);
		try {
			tmux("new-session", "-d", "-s", "pi", "-x", "150", "-y", "45", `cd ${JSON.stringify(project)} && env ${vars.join(" ")} ${JSON.stringify(process.execPath)} ${[program, ...model, "--session", file].map((a) => JSON.stringify(a)).join(" ")}`);
			await waitFor(`${side} started`, (s) => s.includes("faux-1") && s.includes("entry 2899"), 120_000);
			tmux("send-keys", "-t", "pi", "-l", "/tree");
			await waitFor(`${side}: /tree typed`, (s) => s.includes("/tree"));
			key("Enter");
			const tree = await waitFor(`${side}: the tree`, (s) => s.includes("Session Tree") && /\(\d+\/\d+\)/.test(s), 120_000);
			for (let i = 0; i < 3; i++) key("Up");
			const row = (s) => Number(/\((\d+)\//.exec(s)?.[1]);
			const moved = await waitFor(`${side}: three rows up`, (s) => row(s) === row(tree) - 3);
			key("Enter");
			await waitFor(`${side}: the summary question`, (s) => s.includes("No summary"));
			key("Enter");
			const navigated = await waitFor(`${side}: navigated`, (s) => s.includes("Navigated to selected point"), 120_000);
			key("Escape");
			return { tree, moved, navigated };
		} finally {
			kill();
		}
	};
	try {
		const pi = await screens("pi", path.join(piRoot, "dist", "bundle", "cli.js"));
		const ours = await screens("sessiondb-pi", launcher);
		assert.match(pi.tree, /assistant: entry 2899/);
		assert.match(pi.tree, /\[read: file-\d+\.txt\]/, "a tool result row shows its call");
		assert.equal(ours.tree, pi.tree);
		assert.equal(ours.moved, pi.moved);
		assert.equal(ours.navigated, pi.navigated);
	} finally {
		fs.rmSync(W, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
	}
});

// Resuming a long session costs its context and the screen, not its length (issue 36, item 4):
// sessiondb-pi resumes two generated sessions that differ only in how much history precedes
// their last compaction (4,000 and 24,000 entries), in `-p` and in the TUI (tmux), with
// $SESSIONDB_COUNT_PARSES counting the entry bodies the binding read (parse-count.cjs). The
// longer session must not cost more bodies than the shorter one, give or take one window.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const launcher = path.join(here, "..", "pi", "launcher.mjs");
const piRoot = path.join(process.env.SESSIONDB_NODE_HOME ?? path.join(os.homedir(), ".cache", "sessiondb-node"), "node_modules", "@earendil-works", "pi-coding-agent");
const ext = path.join(here, "pi", "faux-provider-ext.mjs");
const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
const MODEL = ["-e", ext, "--provider", "faux", "--model", "faux-1"];
const SHORT = 4000;
const LONG = 24000;
const COMPACT_EVERY = 500; // both lengths are multiples: their last stretches are alike
const SLACK = 256; // one window of a lazy branch (index.cjs WINDOW)

const root = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-parsed-"));
const cwd = path.join(root, "project");
const agent = path.join(root, "agent");
const dir = path.join(agent, "sessions", `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
fs.mkdirSync(cwd, { recursive: true });
fs.mkdirSync(dir, { recursive: true });

/**
 * A session of `n` entries in pi's format: user and assistant turns (each assistant with its
 * usage), and every COMPACT_EVERY entries a compaction keeping the 20 entries before it.
 */
function writeSession(name, n) {
	const sid = `0198${String(n).padStart(4, "0")}-0000-7000-8000-000000000000`;
	const start = Date.parse("2026-11-01T00:00:00.000Z");
	const lines = [JSON.stringify({ type: "session", version: 3, id: sid, timestamp: new Date(start).toISOString(), cwd })];
	const ids = [];
	let parent = null;
	for (let i = 0; i < n; i++) {
		const id = (0x10000000 + i).toString(16);
		const timestamp = new Date(start + i * 1000).toISOString();
		let entry;
		if (i > 0 && (i + 1) % COMPACT_EVERY === 0) {
			entry = { type: "compaction", id, parentId: parent, timestamp, summary: `summary up to entry ${i}`, firstKeptEntryId: ids[i - 20], tokensBefore: 5000 };
		} else if (i % 2 === 0) {
			entry = { type: "message", id, parentId: parent, timestamp, message: { role: "user", content: [{ type: "text", text: `question ${i}: ${"lorem ipsum ".repeat(20)}` }], timestamp: start + i * 1000 } };
		} else {
			const usage = { input: 100, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 120, cost: { input: 0.0003, output: 0.0003, cacheRead: 0, cacheWrite: 0, total: 0.0006 } };
			entry = {
				type: "message",
				id,
				parentId: parent,
				timestamp,
				message: { role: "assistant", content: [{ type: "text", text: `answer ${i}: ${"dolor sit amet ".repeat(20)}` }], api: "faux", provider: "faux", model: "faux-1", usage, stopReason: "stop", timestamp: start + i * 1000 },
			};
		}
		lines.push(JSON.stringify(entry));
		ids.push(id);
		parent = id;
	}
	const file = path.join(dir, `2026-11-01T00-00-00-000Z_${sid}_${name}.jsonl`);
	fs.writeFileSync(file, `${lines.join("\n")}\n`);
	return file;
}

const files = { short: writeSession("short", SHORT), long: writeSession("long", LONG) };
const countFile = path.join(root, "counts.json");
const env = {
	...process.env,
	PI_CODING_AGENT_DIR: agent,
	SESSIONDB_PATH: path.join(root, "db.sqlite"),
	SESSIONDB_PI_PACKAGE: piRoot,
	FAUX_REPLIES: "",
	SESSIONDB_COUNT_PARSES: countFile,
};
delete env.SESSIONDB_PI_FILES;

function counts() {
	const c = JSON.parse(fs.readFileSync(countFile, "utf8"));
	fs.rmSync(countFile);
	return c;
}

function run(args) {
	fs.rmSync(countFile, { force: true });
	const r = spawnSync(process.execPath, [launcher, ...MODEL, ...args], { cwd, env, encoding: "utf8", timeout: 300_000 });
	assert.equal(r.status, 0, `sessiondb-pi ${args.join(" ")} failed: ${r.stderr}`);
	return counts();
}

/** The TUI resuming `file` in tmux: the first screen (the footer's usage totals), then /quit. */
async function tui(file) {
	fs.rmSync(countFile, { force: true });
	const socket = `parsed-${process.pid}`;
	const tmux = (...a) => execFileSync("tmux", ["-L", socket, ...a], { encoding: "utf8" });
	const vars = Object.entries({ ...env, TERM: "xterm-256color" })
		.filter(([k]) => /^(PI_|SESSIONDB_|FAUX_|PATH$|HOME$|TERM$)/.test(k))
		.map(([k, v]) => `${k}=${JSON.stringify(v)}`);
	const argv = [process.execPath, launcher, ...MODEL, "--session", file].map((a) => JSON.stringify(a));
	tmux("new-session", "-d", "-s", "pi", "-x", "160", "-y", "50", `cd ${JSON.stringify(cwd)} && exec env ${vars.join(" ")} ${argv.join(" ")}`);
	const pause = () => new Promise((r) => setTimeout(r, 150));
	try {
		let screen = "";
		for (let until = Date.now() + 240_000; Date.now() < until; await pause()) {
			screen = tmux("capture-pane", "-p", "-t", "pi");
			if (/↑\d/.test(screen) && screen.includes("faux-1")) break;
		}
		assert.match(screen, /↑\d/, `the footer never showed; the screen:\n${screen}`);
		for (let i = 0; i < 100 && spawnSync("tmux", ["-L", socket, "has-session", "-t", "pi"]).status === 0; i++) {
			if (i % 20 === 0) {
				tmux("send-keys", "-t", "pi", "C-u");
				tmux("send-keys", "-t", "pi", "-l", "/quit");
				await pause();
				tmux("send-keys", "-t", "pi", "Enter");
			}
			await pause();
		}
	} finally {
		spawnSync("tmux", ["-L", socket, "kill-server"]);
	}
	return counts();
}

test.before(() => {
	// The first start imports the files; what is counted below is resuming, not importing.
	run(["-p", "--no-session", "hi"]);
});
test.after(() => fs.rmSync(root, { recursive: true, force: true }));

function assertBounded(short, long, kind, what) {
	assert.ok(
		long[kind] <= short[kind] + SLACK,
		`${what}: ${long[kind]} ${kind} for ${LONG} entries against ${short[kind]} for ${SHORT}: the cost grows with the session`,
	);
}

test("-p --session: the bodies read do not grow with the session's length", { timeout: 600_000 }, () => {
	const short = run(["-p", "--session", files.short, "hi"]);
	const long = run(["-p", "--session", files.long, "hi"]);
	for (const kind of ["lines", "usages", "results"]) assertBounded(short, long, kind, "-p");
	assert.ok(short.results > 0, "the context crossed: the counter counts");
});

let tuiCounts = null;
async function tuiBoth() {
	tuiCounts ??= { short: await tui(files.short), long: await tui(files.long) };
	return tuiCounts;
}

test("TUI --session: the bodies parsed do not grow with the session's length", { timeout: 600_000, skip: !hasTmux && "tmux is not installed" }, async () => {
	const { short, long } = await tuiBoth();
	for (const kind of ["lines", "results"]) assertBounded(short, long, kind, "TUI");
});

// pi's footer sums the usage of every entry (modes/interactive/components/footer.js): the
// binding answers it from the store's usage rows, and knows from the store which entries have
// no usage (here the users and the compactions) or one only the line gives (none here): no line
// is scanned for it, whatever the session's length. sessiondb-pi patches the footer so that its
// walk reads the rows, not the long session's entries (pi/footer.mjs).
test("TUI --session: the footer's usages are read without scanning lines", { timeout: 600_000, skip: !hasTmux && "tmux is not installed" }, async () => {
	const { short, long } = await tuiBoth();
	assertBounded(short, long, "usages", "TUI footer");
	assert.deepEqual([short.usages, long.usages], [0, 0], "lines scanned for the footer's usages");
	assert.ok(long.usageWalks >= 1, `the footer's walks answered by the rows: ${long.usageWalks}`);
});

/** sessiondb-pi in rpc mode on `file`: each command of `commands` answered, then stdin closed. */
function rpc(file, commands) {
	fs.rmSync(countFile, { force: true });
	const input = commands.map((c, i) => JSON.stringify({ id: String(i), ...c })).join("\n");
	const r = spawnSync(process.execPath, [launcher, ...MODEL, "--mode", "rpc", "--session", file], { cwd, env, input: `${input}\n`, encoding: "utf8", timeout: 300_000, maxBuffer: 1 << 30 });
	const answers = r.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l)).filter((a) => a.type === "response");
	assert.equal(answers.length, commands.length, `rpc ${JSON.stringify(commands)}: ${r.stdout}\n${r.stderr}`);
	for (const a of answers) assert.ok(a.success, JSON.stringify(a));
	return { answers, counts: counts() };
}

// pi's fork selector reads every user message's text (AgentSession.getUserMessagesForForking):
// the users' lines are the floor, and the other entries must not be parsed with them. Opening
// the session in rpc mode parses its context (the baseline, get_state alone).
test("rpc get_fork_messages: the user messages are parsed, not the entries between them", { timeout: 600_000 }, () => {
	const base = rpc(files.long, [{ type: "get_state" }]).counts;
	const { answers, counts: c } = rpc(files.long, [{ type: "get_fork_messages" }]);
	// The even entries (compactions fall on odd ones), and the prompts the tests above sent.
	const users = answers[0].data.messages.length;
	assert.ok(users >= LONG / 2 && users <= LONG / 2 + 4, `${users} user messages`);
	assert.equal(answers[0].data.messages[7].text, `question 14: ${"lorem ipsum ".repeat(20)}`);
	assert.ok(c.lines <= base.lines + users, `${c.lines} lines parsed for ${users} user messages of ${LONG} entries (${base.lines} to open it)`);
});

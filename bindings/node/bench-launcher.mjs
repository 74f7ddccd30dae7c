#!/usr/bin/env node
// sessiondb-pi against plain pi 1.6.0 (its bundled `pi`, dist/bundle/cli.js), end to end
// through the CLI, in one sitting, on the bench's corpora (shared/bench-pi/make-corpus.mjs):
//   (1) -p --session HUGE, and each side's own -p --no-session floor (time, peak RSS);
//   (2) -p --continue and -p --session-id NEW in the busiest project of the 10k corpus;
//   (3) /resume in the TUI (tmux): Enter to the first screen of sessions, current folder and
//       all folders (Tab), and the process's peak RSS;
//   (4) the launcher's own start: -p --no-session against plain pi's;
//   (5) the TUI resuming HUGE (--session, tmux): process start to the first screen with the
//       footer's usage totals, and the peak RSS then; the same for SMALL (HUGE's first 200
//       entries, a file beside it), the floor HUGE is compared with;
//   (6) /tree on HUGE in the TUI: Enter on `/tree` to the tree on screen, then moving to the
//       entry above the leaf (Up, Enter, "No summary") to pi's "Navigated to selected point";
//   (7) with --giant: -p --session GIANT on a fresh copy each run, with a compaction threshold
//       under its context (settings.json), so pi compacts first: time and peak RSS.
// The scripted model (test/pi/faux-provider-ext.mjs) answers; both sides load it.
//
//   node bench-launcher.mjs --huge /tmp/pi-bench/huge --c10k /tmp/pi-bench/c10k \
//     --giant /tmp/pi-bench/giant \
//     [--runs 5] [--scratch /tmp/sessiondb-pi-bench] [--sides pi,sessiondb-pi] [--no-tui] [--json]
//     [--only p,tui,tree,giant,c10k]
//
// --only runs only the scenarios named: p (1), tui (5), tree (6), giant (7), c10k (2, 3); the
// corpora not named are skipped even when given.
//
// GIANT is `node shared/bench-pi/make-corpus.mjs --out /tmp/pi-bench/giant --huge 240000 --seed 1
// --force` (671 MB); HUGE the same with --huge 100000.
//
// Each side gets its own copy of the corpus in the scratch folder (pi appends to the files;
// the shared corpora are never touched); sessiondb-pi imports its copy on its first start
// (timed and reported) before anything is measured.
import { execFileSync, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const HOME = process.env.SESSIONDB_NODE_HOME || path.join(os.homedir(), ".cache", "sessiondb-node");
const PI = path.join(HOME, "node_modules", "@earendil-works", "pi-coding-agent");
const args = Object.fromEntries(
	process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]?.startsWith("--") || all[i + 1] === undefined ? "1" : all[i + 1]]] : acc), []),
);
const runs = Number(args.runs ?? 5);
const scratch = path.resolve(args.scratch ?? path.join(os.tmpdir(), "sessiondb-pi-bench"));
const ext = path.join(here, "test", "pi", "faux-provider-ext.mjs");
const MODEL = ["-e", ext, "--provider", "faux", "--model", "faux-1"];
const sides = {
	pi: [path.join(PI, "dist", "bundle", "cli.js")],
	"sessiondb-pi": [path.join(here, "pi", "launcher.mjs")],
};
if (args.sides) for (const k of Object.keys(sides)) if (!args.sides.split(",").includes(k)) delete sides[k];
const log = (m) => process.stderr.write(`${m}\n`);
const only = args.only ? new Set(args.only.split(",")) : null;
const wanted = (name) => only === null || only.has(name);

function copyCorpus(corpus, name) {
	const dir = path.join(scratch, name);
	if (fs.existsSync(path.join(dir, ".ready"))) return dir;
	fs.rmSync(dir, { recursive: true, force: true });
	fs.mkdirSync(path.join(dir, "agent"), { recursive: true });
	log(`copying ${corpus} to ${dir}`);
	execFileSync("cp", ["-r", path.join(corpus, "sessions"), path.join(dir, "agent", "sessions")]);
	fs.writeFileSync(path.join(dir, ".ready"), "");
	return dir;
}

function envOf(dir) {
	const env = { ...process.env, PI_CODING_AGENT_DIR: path.join(dir, "agent"), SESSIONDB_PATH: path.join(dir, "db.sqlite"), SESSIONDB_PI_PACKAGE: PI, FAUX_REPLIES: "" };
	delete env.SESSIONDB_PI_FILES;
	return env;
}

/** One run: wall time (s) and peak RSS (MiB, GNU time). */
function once(argv, cwd, env) {
	const t = process.hrtime.bigint();
	const r = spawnSync("/usr/bin/time", ["-f", "RSS %M", process.execPath, ...argv], { cwd, env, encoding: "utf8", maxBuffer: 1 << 28 });
	const s = Number(process.hrtime.bigint() - t) / 1e9;
	if (r.status !== 0) throw new Error(`${argv.join(" ")} failed (${r.status}): ${r.stderr.slice(-2000)}`);
	const rss = Number(/RSS (\d+)\s*$/.exec(r.stderr)?.[1] ?? NaN) / 1024;
	return { s, rss };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Runs the scenarios `[name, argvOf, n]` round-robin (the machine's load drifts), n runs each. */
function measureEach(scenarios, cwd, env, side) {
	const got = scenarios.map(() => []);
	const most = Math.max(...scenarios.map((sc) => sc[2]));
	for (let i = 0; i < most; i++) {
		scenarios.forEach(([, argvOf, n], k) => {
			if (i < n) got[k].push(once(argvOf(), cwd, env));
		});
	}
	scenarios.forEach(([name], k) => row(name, side, { s: median(got[k].map((g) => g.s)), rss: median(got[k].map((g) => g.rss)), runs: got[k].length }));
}

let resumeRuns = 0;

/** /resume in tmux: Enter to the first screen of sessions (current folder, then all with Tab). */
async function resume(side, dir, cwd) {
	const socket = `sdbbench-${process.pid}-${++resumeRuns}`;
	const tmux = (...a) => execFileSync("tmux", ["-L", socket, ...a], { encoding: "utf8" });
	const screen = () => tmux("capture-pane", "-p", "-t", "b");
	const env = envOf(dir);
	const vars = ["PI_CODING_AGENT_DIR", "SESSIONDB_PATH", "SESSIONDB_PI_PACKAGE", "FAUX_REPLIES", "PATH"].map((k) => `${k}=${JSON.stringify(env[k] ?? "")}`);
	const cmd = `cd ${JSON.stringify(cwd)} && exec env TERM=xterm-256color ${vars.join(" ")} ${JSON.stringify(process.execPath)} ${[...sides[side], ...MODEL].map((a) => JSON.stringify(a)).join(" ")}`;
	tmux("new-session", "-d", "-s", "b", "-x", "160", "-y", "50", cmd);
	const pid = Number(tmux("list-panes", "-t", "b", "-F", "#{pane_pid}").trim());
	const until = async (test, what, timeout = 120_000) => {
		const end = Date.now() + timeout;
		for (;;) {
			const s = screen();
			if (test(s)) return s;
			if (Date.now() > end) throw new Error(`${side}: timed out waiting for ${what}:\n${s}`);
			await new Promise((r) => setTimeout(r, 5));
		}
	};
	const listed = (title) => (s) => s.includes(title) && !s.includes("Loading") && /^\s*› \S/m.test(s);
	try {
		await until((s) => s.includes("faux-1"), "the TUI");
		tmux("send-keys", "-t", "b", "-l", "/resume");
		await new Promise((r) => setTimeout(r, 300));
		let t = performance.now();
		tmux("send-keys", "-t", "b", "Enter");
		await until(listed("Resume Session (Current Folder)"), "the current folder's sessions");
		const current = (performance.now() - t) / 1000;
		t = performance.now();
		tmux("send-keys", "-t", "b", "Tab");
		await until(listed("Resume Session (All)"), "all sessions");
		const all = (performance.now() - t) / 1000;
		const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
		const rss = Number(/VmHWM:\s+(\d+)/.exec(status)[1]) / 1024;
		return { current, all, rss };
	} finally {
		spawnSync("tmux", ["-L", socket, "kill-server"]);
	}
}

/**
 * The TUI resuming `file` (`--session`): from the start of the process to the first screen
 * showing the session (the footer with its usage totals, which pi sums over every entry), and
 * the process's peak RSS then.
 */
async function tuiSession(side, dir, cwd, file) {
	const socket = `sdbbench-${process.pid}-${++resumeRuns}`;
	const tmux = (...a) => execFileSync("tmux", ["-L", socket, ...a], { encoding: "utf8" });
	const env = envOf(dir);
	const vars = ["PI_CODING_AGENT_DIR", "SESSIONDB_PATH", "SESSIONDB_PI_PACKAGE", "FAUX_REPLIES", "PATH"].map((k) => `${k}=${JSON.stringify(env[k] ?? "")}`);
	const argv = [...sides[side], ...MODEL, "--session", file];
	const cmd = `cd ${JSON.stringify(cwd)} && exec env TERM=xterm-256color ${vars.join(" ")} ${JSON.stringify(process.execPath)} ${argv.map((a) => JSON.stringify(a)).join(" ")}`;
	const t = performance.now();
	tmux("new-session", "-d", "-s", "b", "-x", "160", "-y", "50", cmd);
	const pid = Number(tmux("list-panes", "-t", "b", "-F", "#{pane_pid}").trim());
	try {
		const end = Date.now() + 300_000;
		for (;;) {
			const s = tmux("capture-pane", "-p", "-t", "b");
			// The footer: usage totals (↑ input) beside the model.
			if (/↑\d/.test(s) && s.includes("faux-1")) break;
			if (Date.now() > end) throw new Error(`${side}: timed out waiting for the session's first screen:\n${s}`);
			await new Promise((r) => setTimeout(r, 5));
		}
		const s = (performance.now() - t) / 1000;
		const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
		return { s, rss: Number(/VmHWM:\s+(\d+)/.exec(status)[1]) / 1024 };
	} finally {
		spawnSync("tmux", ["-L", socket, "kill-server"]);
	}
}

/** A TUI in tmux (160x50) running `argv` on `side` with the corpus copy `dir`. */
function tmuxTui(side, dir, cwd, argv) {
	const socket = `sdbbench-${process.pid}-${++resumeRuns}`;
	const tmux = (...a) => execFileSync("tmux", ["-L", socket, ...a], { encoding: "utf8" });
	const env = envOf(dir);
	const vars = ["PI_CODING_AGENT_DIR", "SESSIONDB_PATH", "SESSIONDB_PI_PACKAGE", "FAUX_REPLIES", "PATH"].map((k) => `${k}=${JSON.stringify(env[k] ?? "")}`);
	const cmd = `cd ${JSON.stringify(cwd)} && exec env TERM=xterm-256color ${vars.join(" ")} ${JSON.stringify(process.execPath)} ${[...sides[side], ...MODEL, ...argv].map((a) => JSON.stringify(a)).join(" ")}`;
	tmux("new-session", "-d", "-s", "b", "-x", "160", "-y", "50", cmd);
	const pid = Number(tmux("list-panes", "-t", "b", "-F", "#{pane_pid}").trim());
	const screen = () => tmux("capture-pane", "-p", "-t", "b");
	const until = async (test, what, timeout = 300_000) => {
		const end = Date.now() + timeout;
		for (;;) {
			const s = screen();
			if (test(s)) return s;
			if (Date.now() > end) throw new Error(`${side}: timed out waiting for ${what}:\n${s}`);
			await new Promise((r) => setTimeout(r, 5));
		}
	};
	const keys = (...k) => tmux("send-keys", "-t", "b", ...k);
	const peakRss = () => Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024;
	const close = () => spawnSync("tmux", ["-L", socket, "kill-server"]);
	return { screen, until, keys, peakRss, close };
}

/** The footer with its usage totals (pi sums them over every entry) beside the model. */
const firstScreen = (s) => /↑\d/.test(s) && s.includes("faux-1");

/**
 * /tree on `file` in the TUI: from Enter on `/tree` to the tree on screen (its "(i/N)" line),
 * then from the choice "No summary" after Up and Enter (the entry above the leaf) to pi's
 * "Navigated to selected point" with the new branch drawn.
 */
async function treeOn(side, dir, cwd, file) {
	const t = tmuxTui(side, dir, cwd, ["--session", file]);
	try {
		await t.until(firstScreen, "the session's first screen");
		t.keys("-l", "/tree");
		await new Promise((r) => setTimeout(r, 300));
		let start = performance.now();
		t.keys("Enter");
		await t.until((s) => s.includes("Session Tree") && /\(\d+\/\d+\)/.test(s), "the tree");
		const open = (performance.now() - start) / 1000;
		t.keys("Up");
		await new Promise((r) => setTimeout(r, 300));
		t.keys("Enter");
		const asked = await t.until((s) => s.includes("Summarize branch?") || s.includes("Navigated to selected point"), "the summary question");
		start = performance.now();
		if (asked.includes("Summarize branch?")) t.keys("Enter"); // "No summary", the first choice
		await t.until((s) => s.includes("Navigated to selected point"), "the navigation");
		const navigate = (performance.now() - start) / 1000;
		return { open, navigate, rss: t.peakRss() };
	} finally {
		t.close();
	}
}

/** SMALL: the header and first `n` entries of `huge` (parents come first), beside it. */
function smallOf(huge, n = 200) {
	const out = path.join(path.dirname(huge), "small-of-huge.jsonl");
	if (fs.existsSync(out)) return out;
	const fd = fs.openSync(huge, "r");
	const buf = Buffer.alloc(16 << 20);
	const got = fs.readSync(fd, buf, 0, buf.length, 0);
	fs.closeSync(fd);
	const lines = buf.subarray(0, got).toString("utf8").split("\n").slice(0, n + 1);
	const header = JSON.parse(lines[0]);
	header.id = randomUUID();
	lines[0] = JSON.stringify(header);
	fs.writeFileSync(out, `${lines.join("\n")}\n`);
	return out;
}

/** The header (first line) of a session file, read alone (GIANT is over V8's longest string). */
function headerOf(file) {
	const fd = fs.openSync(file, "r");
	try {
		const buf = Buffer.alloc(64 * 1024);
		const got = fs.readSync(fd, buf, 0, buf.length, 0);
		return JSON.parse(buf.subarray(0, got).toString("utf8").split("\n")[0]);
	} finally {
		fs.closeSync(fd);
	}
}

/** The text of `file` from byte `from` on (GIANT is over V8's longest string). */
function tail(file, from) {
	const fd = fs.openSync(file, "r");
	try {
		const buf = Buffer.alloc(fs.fstatSync(fd).size - from);
		fs.readSync(fd, buf, 0, buf.length, from);
		return buf.toString("utf8");
	} finally {
		fs.closeSync(fd);
	}
}

/** A fresh copy of `from` (a file or a folder) at `to`, replacing what was there. */
function freshCopy(from, to) {
	fs.rmSync(to, { recursive: true, force: true });
	execFileSync("cp", ["-a", from, to]);
}

const results = { date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, runs, rows: [] };
const row = (what, side, r) => {
	results.rows.push({ what, side, ...r });
	log(`${what} [${side}]: ${JSON.stringify(r)}`);
};

if (args.huge && (wanted("p") || wanted("tui") || wanted("tree"))) {
	const corpus = JSON.parse(fs.readFileSync(path.join(args.huge, "corpus.json"), "utf8"));
	const rel = path.relative(path.join(args.huge, "sessions"), corpus.huge_session_file);
	const cwd = headerOf(corpus.huge_session_file).cwd;
	fs.mkdirSync(cwd, { recursive: true });
	for (const side of Object.keys(sides)) {
		const dir = copyCorpus(args.huge, `huge-${side}`);
		const env = envOf(dir);
		const file = path.join(dir, "agent", "sessions", rel);
		if (side === "sessiondb-pi" && !fs.existsSync(path.join(dir, "db.sqlite"))) {
			row("first start (import)", side, once([...sides[side], ...MODEL, "-p", "--no-session", "hi"], cwd, env));
		}
		if (wanted("p")) {
			measureEach(
				[
					["-p --no-session", () => [...sides[side], ...MODEL, "-p", "--no-session", "hi"], runs],
					["-p --session HUGE", () => [...sides[side], ...MODEL, "-p", "--session", file, "hi"], Math.min(runs, 3)],
				],
				cwd,
				env,
				side,
			);
		}
		if (!args["no-tui"] && wanted("tui")) {
			const small = smallOf(file);
			// SMALL is new to sessiondb-pi's database: the first open imports it, untimed.
			once([...sides[side], ...MODEL, "-p", "--session", small, "hi"], cwd, env);
			for (const [name, f] of [["SMALL", small], ["HUGE", file]]) {
				const got = [];
				for (let i = 0; i < Math.min(runs, 3); i++) got.push(await tuiSession(side, dir, cwd, f));
				row(`TUI --session ${name} (first screen)`, side, { s: median(got.map((g) => g.s)), rss: median(got.map((g) => g.rss)), runs: got.length });
			}
		}
		if (!args["no-tui"] && wanted("tree")) {
			const trees = [];
			for (let i = 0; i < Math.min(runs, 2); i++) trees.push(await treeOn(side, dir, cwd, file));
			row("/tree on HUGE", side, {
				open: median(trees.map((g) => g.open)),
				navigate: median(trees.map((g) => g.navigate)),
				rss: median(trees.map((g) => g.rss)),
				runs: trees.length,
			});
		}
	}
}
if (args.giant && wanted("giant")) {
	// Each run compacts a fresh copy: pi appends the compaction and the turn to the file (and
	// sessiondb-pi to its database too), so the copy is made again before every run.
	const corpus = JSON.parse(fs.readFileSync(path.join(args.giant, "corpus.json"), "utf8"));
	const rel = path.relative(path.join(args.giant, "sessions"), corpus.huge_session_file);
	const cwd = headerOf(corpus.huge_session_file).cwd;
	fs.mkdirSync(cwd, { recursive: true });
	for (const side of Object.keys(sides)) {
		const pristine = copyCorpus(args.giant, `giant-${side}`);
		// The scripted model's context window is 128k and GIANT's context since its last
		// compaction is far less: a threshold 10 tokens under the window makes pi compact first.
		fs.writeFileSync(path.join(pristine, "agent", "settings.json"), JSON.stringify({ compaction: { reserveTokens: 127990 } }));
		const dir = path.join(scratch, `giant-${side}-run`);
		// sessiondb-pi's first start imports the folder once per database and sessions folder,
		// as their paths name them (its marker, the database's rows): a copy elsewhere would be
		// imported again on every run. The import is made where the runs work, and kept.
		let source = pristine;
		if (side === "sessiondb-pi") {
			source = path.join(scratch, `giant-${side}-imported`);
			if (!fs.existsSync(path.join(source, "db.sqlite"))) {
				freshCopy(pristine, dir);
				row("GIANT first start (import)", side, once([...sides[side], ...MODEL, "-p", "--no-session", "hi"], cwd, envOf(dir)));
				freshCopy(dir, source);
			}
		}
		const got = [];
		for (let i = 0; i < Math.min(runs, 3); i++) {
			freshCopy(source, dir);
			const file = path.join(dir, "agent", "sessions", rel);
			const before = fs.statSync(file).size;
			got.push(once([...sides[side], ...MODEL, "-p", "--session", file, "hi"], cwd, envOf(dir)));
			const added = tail(file, before).split("\n").filter(Boolean).map((l) => JSON.parse(l).type);
			if (!added.includes("compaction")) throw new Error(`${side}: -p --session GIANT did not compact (appended: ${added.join(", ")})`);
		}
		fs.rmSync(dir, { recursive: true, force: true });
		row("-p --session GIANT (compacts first)", side, { s: median(got.map((g) => g.s)), rss: median(got.map((g) => g.rss)), runs: got.length });
	}
}
if (args.c10k && wanted("c10k")) {
	const corpus = JSON.parse(fs.readFileSync(path.join(args.c10k, "corpus.json"), "utf8"));
	const busiest = corpus.sessions_per_cwd[0].dir;
	const first = fs.readdirSync(path.join(args.c10k, "sessions", busiest))[0];
	const cwd = JSON.parse(fs.readFileSync(path.join(args.c10k, "sessions", busiest, first), "utf8").split("\n")[0]).cwd;
	fs.mkdirSync(cwd, { recursive: true });
	for (const side of Object.keys(sides)) {
		const dir = copyCorpus(args.c10k, `c10k-${side}`);
		const env = envOf(dir);
		if (side === "sessiondb-pi" && !fs.existsSync(path.join(dir, "db.sqlite"))) {
			row("first start (import)", side, once([...sides[side], ...MODEL, "-p", "--no-session", "hi"], cwd, env));
		}
		measureEach(
			[
				["c10k -p --no-session", () => [...sides[side], ...MODEL, "-p", "--no-session", "hi"], runs],
				["c10k -p --continue", () => [...sides[side], ...MODEL, "-p", "--continue", "hi"], runs],
				["c10k -p --session-id NEW", () => [...sides[side], ...MODEL, "-p", "--session-id", randomUUID(), "hi"], runs],
			],
			cwd,
			env,
			side,
		);
		if (!args["no-tui"]) {
			const tuiRuns = Math.min(runs, side === "pi" ? 2 : 5);
			const got = [];
			for (let i = 0; i < tuiRuns; i++) got.push(await resume(side, dir, cwd));
			row("/resume", side, { current: median(got.map((g) => g.current)), all: median(got.map((g) => g.all)), rss: median(got.map((g) => g.rss)), runs: tuiRuns });
		}
	}
}
if (args.json) console.log(JSON.stringify(results, null, 2));
else for (const r of results.rows) console.log(`${r.what}\t${r.side}\t${JSON.stringify(r)}`);

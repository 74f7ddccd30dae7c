#!/usr/bin/env node
// The binding side by side with pi 1.6.0's own SessionManager, in one sitting:
//   (1) open + buildSessionContext on the 100,000-entry session, each run in a fresh process
//       (time inside the process, peak RSS of the process);
//   (2) appendMessage latency, p50/p90 over single calls, on a new session;
//   (3) a scripted 20-turn AgentSession run (pi-ai's faux model) continuing that session.
//
//   node bench.mjs [--session FILE] [--runs 3] [--appends 2000] [--turns 20] [--json]
//
// Needs SESSIONDB_NODE_HOME (pi 1.6.0) and the sessiondb CLI (SESSIONDB_BIN, default
// ../../target/release/sessiondb). The session file is copied to a scratch folder (pi's runs
// append to the copy; the shared corpus is never touched) and imported into a scratch database.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const HOME = process.env.SESSIONDB_NODE_HOME || path.join(os.homedir(), ".cache", "sessiondb-node");
const piMod = (p) => import(pathToFileURL(path.join(HOME, "node_modules/@earendil-works", p)).href);
const argv = process.argv.slice(2);
const opt = (name, dflt) => {
	const i = argv.indexOf(`--${name}`);
	return i >= 0 ? argv[i + 1] : dflt;
};
const peakRssMiB = () => Math.round(process.resourceUsage().maxRSS / 102.4) / 10;
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function manager(store, db) {
	if (store === "pi") return (await piMod("pi-coding-agent/dist/index.js")).SessionManager;
	const { SessionManager } = await import("./index.js");
	SessionManager.useDatabase(db);
	return SessionManager;
}

// ----- children ------------------------------------------------------------------------------
if (argv[0] === "--child") {
	const [, what, store, file, db] = argv;
	const SM = await manager(store, db);
	let out;
	if (what === "open") {
		const t0 = process.hrtime.bigint();
		const sm = SM.open(file);
		const ctx = sm.buildSessionContext();
		out = { ms: ms(t0), messages: ctx.messages.length, rss: peakRssMiB() };
	} else if (what === "append") {
		const n = Number(opt("appends", "2000"));
		const sm = SM.create("/home/dev/work/bench-append", path.join(path.dirname(file), "append", store));
		sm.appendMessage({ role: "user", content: [{ type: "text", text: "first" }], timestamp: 1764547199000 });
		const msg = { role: "assistant", content: [{ type: "text", text: "x".repeat(700) }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage: { input: 12, output: 180, cacheRead: 0, cacheWrite: 0, totalTokens: 192, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "toolUse", timestamp: 1764547199000 };
		const lat = [];
		for (let i = 0; i < n; i++) {
			const t0 = process.hrtime.bigint();
			sm.appendMessage(msg);
			lat.push(ms(t0) * 1000);
		}
		out = { p50_us: pct(lat, 0.5), p90_us: pct(lat, 0.9), p99_us: pct(lat, 0.99), n };
	} else if (what === "agent") {
		const turns = Number(opt("turns", "20"));
		const pi = await piMod("pi-coding-agent/dist/index.js");
		const ai = await piMod("pi-ai/dist/index.js");
		const W = path.dirname(file);
		process.env.PI_CODING_AGENT_DIR = path.join(W, "agent");
		const cwd = path.join(W, "project");
		fs.mkdirSync(cwd, { recursive: true });
		fs.writeFileSync(path.join(cwd, "notes.txt"), "the answer is 42\n");
		const faux = ai.fauxProvider({ provider: "faux", models: [{ id: "faux-1", reasoning: true }] });
		const modelRuntime = await pi.ModelRuntime.create({ agentDir: path.join(W, "agent") });
		modelRuntime.registerNativeProvider(faux.provider);
		await modelRuntime.setRuntimeApiKey("faux", "unused");
		const t0 = process.hrtime.bigint();
		const { session } = await pi.createAgentSession({
			cwd,
			model: faux.getModel(),
			thinkingLevel: "low",
			modelRuntime,
			sessionManager: SM.open(file),
			settingsManager: pi.SettingsManager.inMemory({ compaction: { enabled: false } }),
		});
		const tOpen = ms(t0);
		for (let i = 0; i < turns; i++) {
			faux.setResponses(
				i % 5 === 0
					? [ai.fauxAssistantMessage([ai.fauxThinking("look"), ai.fauxToolCall("read", { path: "notes.txt" })], { stopReason: "toolUse" }), ai.fauxAssistantMessage(`Turn ${i}: 42.`)]
					: [ai.fauxAssistantMessage(`Turn ${i}: noted.`)],
			);
			await session.prompt(`Turn ${i}: what now?`);
		}
		out = { ms: ms(t0), open_ms: tOpen, turns_ms: ms(t0) - tOpen, entries: session.sessionManager.getEntryCount(), rss: peakRssMiB() };
		session.dispose();
	}
	process.stdout.write(JSON.stringify(out));
	process.exit(0);
}

// ----- the sitting ---------------------------------------------------------------------------
function defaultSession() {
	const dir = "/tmp/pi-bench/huge/sessions";
	for (const d of fs.readdirSync(dir)) for (const f of fs.readdirSync(path.join(dir, d))) if (f.endsWith(".jsonl")) return path.join(dir, d, f);
	throw new Error(`no session under ${dir}`);
}
const source = opt("session") ?? defaultSession();
const runs = Number(opt("runs", "3"));
const cli = process.env.SESSIONDB_BIN || path.resolve(here, "../../target/release/sessiondb");
const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-node-bench-"));
const log = (s) => process.stderr.write(`${s}\n`);
const child = (args) => {
	const r = spawnSync(process.execPath, [path.join(here, "bench.mjs"), "--child", ...args, ...argv], { encoding: "utf8", maxBuffer: 64 << 20 });
	if (r.status !== 0) throw new Error(`bench child ${args.join(" ")} failed: ${r.stderr}`);
	return JSON.parse(r.stdout);
};
try {
	const sessions = path.join(W, "sessions", path.basename(path.dirname(source)));
	fs.mkdirSync(sessions, { recursive: true });
	const file = path.join(sessions, path.basename(source));
	fs.copyFileSync(source, file);
	const db = path.join(W, "db.sqlite");
	let t0 = process.hrtime.bigint();
	execFileSync(cli, ["--db", db, "import", file], { stdio: ["ignore", "ignore", "inherit"] });
	const importMs = ms(t0);
	const lines = fs.readFileSync(file, "utf8").split("\n").length - 1;
	log(`session: ${source} (${lines} lines, ${(fs.statSync(file).size / 2 ** 20).toFixed(1)} MiB); import ${importMs.toFixed(0)} ms`);

	const open = { pi: [], binding: [] };
	for (let r = 0; r < runs; r++) {
		for (const store of ["pi", "binding"]) {
			open[store].push(child(["open", store, file, db]));
			log(`open+buildSessionContext ${store}: ${JSON.stringify(open[store].at(-1))}`);
		}
	}
	const append = {};
	for (const store of ["pi", "binding"]) {
		append[store] = child(["append", store, file, db]);
		log(`appendMessage ${store}: ${JSON.stringify(append[store])}`);
	}
	const agent = { pi: [], binding: [] };
	for (let r = 0; r < Math.max(1, Math.min(runs, 2)); r++) {
		for (const store of ["pi", "binding"]) {
			// pi appends to its file: give each run the original session.
			if (store === "pi") fs.copyFileSync(source, file);
			agent[store].push(child(["agent", store, file, db]));
			log(`AgentSession ${store}: ${JSON.stringify(agent[store].at(-1))}`);
		}
	}
	const med = (xs, k) => median(xs.map((x) => x[k]));
	const result = {
		session: { path: source, lines, mib: Math.round(fs.statSync(source).size / 2 ** 20) },
		import_ms: Math.round(importMs),
		open_context: {
			pi_ms: med(open.pi, "ms"),
			binding_ms: med(open.binding, "ms"),
			speedup: med(open.pi, "ms") / med(open.binding, "ms"),
			pi_rss_mib: med(open.pi, "rss"),
			binding_rss_mib: med(open.binding, "rss"),
			rss_ratio: med(open.binding, "rss") / med(open.pi, "rss"),
		},
		append: { pi_p50_us: append.pi.p50_us, binding_p50_us: append.binding.p50_us, ratio: append.binding.p50_us / append.pi.p50_us, pi: append.pi, binding: append.binding },
		agent_20_turns: {
			pi_ms: med(agent.pi, "ms"),
			binding_ms: med(agent.binding, "ms"),
			pi_turns_ms: med(agent.pi, "turns_ms"),
			binding_turns_ms: med(agent.binding, "turns_ms"),
			pi_rss_mib: med(agent.pi, "rss"),
			binding_rss_mib: med(agent.binding, "rss"),
		},
		node: process.version,
		when: new Date().toISOString(),
	};
	console.log(JSON.stringify(result, null, 2));
} finally {
	fs.rmSync(W, { recursive: true, force: true });
}

// What the pi package costs, next to what pi itself does, on a pi sessions folder:
//
//   node integrations/pi/bench.mjs /tmp/pi-bench/c1k/sessions [sessiondb binary]
//
// The folder is copied first (one file gets appended to, as pi does after a turn), then:
// the first sync (session_start on a new database) and its index; a sync that finds nothing
// new, walking the folder (what a per-turn sync of the whole folder would cost) and naming
// one grown file (what the package does after each turn); a search for a rare word, next to
// pi's only cross-project lookup (SessionManager.listAll() and a filter of its
// allMessagesText, what /resume's search over all projects does); and pi's startup with and
// without the package. Needs Node 22 and pi 1.6.0 in $SESSIONDB_NODE_HOME (.ci/node.sh).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";

const [src, binArg] = process.argv.slice(2).filter((a) => !a.startsWith("--"));
if (!src) throw new Error("usage: bench.mjs SESSIONS_DIR [SESSIONDB]");
const BIN = binArg || "sessiondb";
const PKG = path.dirname(fileURLToPath(import.meta.url));
const NODE_HOME = process.env.SESSIONDB_NODE_HOME || path.join(os.homedir(), ".cache", "sessiondb-node");
const mod = (p) => import(pathToFileURL(path.join(NODE_HOME, "node_modules/@earendil-works", p)).href);

const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-pi-bench-"));
const agent = path.join(W, "agent");
const sessions = path.join(agent, "sessions");
fs.mkdirSync(agent, { recursive: true });
process.on("exit", () => fs.rmSync(W, { recursive: true, force: true }));
execFileSync("cp", ["-r", src, sessions]);
process.env.PI_CODING_AGENT_DIR = agent;
process.env.HOME = path.join(W, "home");
fs.mkdirSync(process.env.HOME);
const db = path.join(W, "sessiondb.sqlite");
const sdb = (...args) => execFileSync(BIN, ["--db", db, ...args], { encoding: "utf8", maxBuffer: 1 << 28 });
const time = (f) => {
	const t = performance.now();
	const v = f();
	return [performance.now() - t, v];
};
const timeAsync = async (f) => {
	const t = performance.now();
	const v = await f();
	return [performance.now() - t, v];
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => Math.round(x * 10) / 10;
const out = { corpus: src, files: 0, mib: 0 };
const files = execFileSync("find", [sessions, "-name", "*.jsonl"], { encoding: "utf8", maxBuffer: 1 << 28 }).trim().split("\n");
out.files = files.length;
out.mib = ms(files.reduce((s, f) => s + fs.statSync(f).size, 0) / 2 ** 20);

const [firstSync] = time(() => sdb("sync", "--sessions-dir", sessions, "--json"));
// --startup-only: the first sync, then pi's startup figures (skips the long index and pi's listAll).
const startupOnly = process.argv.includes("--startup-only");
const [index] = startupOnly ? [0] : time(() => sdb("index", "--json"));
out.first_sync_ms = ms(firstSync);
out.index_ms = ms(index);
out.unchanged_walk_sync_ms = ms(median([0, 1, 2, 3, 4].map(() => time(() => sdb("sync", "--sessions-dir", sessions, "--json"))[0])));
// A turn: one message line appended to the newest-looking file, then the package's sync.
const target = files[Math.floor(files.length / 2)];
const lines = fs.readFileSync(target, "utf8").trimEnd().split("\n");
const lastId = JSON.parse(lines.at(-1)).id;
const turns = [];
const walks = [];
for (let i = 0; i < 10; i++) {
	const id = `bench${String(i).padStart(3, "0")}`;
	const parent = i === 0 ? lastId : `bench${String(i - 1).padStart(3, "0")}`;
	const line = { type: "message", id, parentId: parent, timestamp: new Date().toISOString(), message: { role: "user", content: `turn ${i} marker-zqx${i}`, timestamp: Date.now() } };
	fs.appendFileSync(target, `${JSON.stringify(line)}\n`);
	// Alternately: the package's sync of the one file, and a sync walking the whole folder.
	if (i % 2 === 0) turns.push(time(() => sdb("sync", "--sessions-dir", sessions, target, "--json"))[0]);
	else walks.push(time(() => sdb("sync", "--sessions-dir", sessions, "--json"))[0]);
}
out.turn_file_sync_ms = ms(median(turns));
out.turn_walk_sync_ms = ms(median(walks));
if (!startupOnly && !JSON.parse(sdb("search", "marker-zqx9", "--json")).length) throw new Error("the turn's line was not synced");

// A rare word: a 10-character piece of one session's last user message.
const rare = (() => {
	for (const f of files.slice(7)) {
		for (const l of fs.readFileSync(f, "utf8").split("\n").reverse()) {
			const e = l && JSON.parse(l);
			const t = e?.message?.role === "user" && (typeof e.message.content === "string" ? e.message.content : e.message.content?.[0]?.text);
			const m = typeof t === "string" && t.match(/[A-Za-z]{10,}/);
			if (m) return m[0].slice(0, 10);
		}
	}
	return "zanzibarqq";
})();
const searches = startupOnly ? [[0, []]] : [0, 1, 2, 3, 4].map(() => time(() => JSON.parse(sdb("search", rare, "--limit", "10", "--json"))));
out.rare_word = rare;
out.search_hits = searches[0][1].length;
out.search_ms = ms(median(searches.map((s) => s[0])));

const pi = await mod("pi-coding-agent/dist/index.js");
const ai = await mod("pi-ai/dist/index.js");
// pi's startup (runtime created, extensions bound, session_start handled), without and with the
// package; measured before listAll() below, whose gigabyte of results makes every later fork slow.
const startup = async (extensionPaths) => {
	const faux = ai.fauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
	const modelRuntime = await pi.ModelRuntime.create({ agentDir: agent });
	modelRuntime.registerNativeProvider(faux.provider);
	await modelRuntime.setRuntimeApiKey("faux", "unused");
	const cwd = fs.mkdtempSync(path.join(W, "cwd-"));
	const [t, runtime] = await timeAsync(async () => {
		const runtime = await pi.createAgentSessionRuntime(
			async ({ cwd, sessionManager, sessionStartEvent }) => {
				const services = await pi.createAgentSessionServices({
					cwd,
					agentDir: agent,
					modelRuntime,
					settingsManager: pi.SettingsManager.inMemory({ sessiondb: { bin: BIN, db } }),
					resourceLoaderOptions: { additionalExtensionPaths: extensionPaths },
				});
				return { ...(await pi.createAgentSessionFromServices({ services, sessionManager, sessionStartEvent, model: faux.getModel() })), services, diagnostics: services.diagnostics };
			},
			{ cwd, agentDir: agent, sessionManager: pi.SessionManager.create(cwd) },
		);
		await runtime.session.bindExtensions({});
		return runtime;
	});
	await runtime.dispose();
	return t;
};
await startup([]); // warm up module loading
// Any TypeScript extension costs pi a load; this one does nothing, for comparison.
const empty = path.join(W, "empty-extension.ts");
fs.writeFileSync(empty, "export default function (pi: unknown) {}\n");
out.pi_startup_with_empty_extension_ms = ms(median([await startup([empty]), await startup([empty]), await startup([empty])]));
out.pi_startup_ms = ms(median([await startup([]), await startup([]), await startup([])]));
out.pi_startup_with_package_ms = ms(median([await startup([PKG]), await startup([PKG]), await startup([PKG])]));
const piSearch = [];
for (let i = 0; i < (startupOnly ? 0 : 3); i++) {
	piSearch.push(
		await timeAsync(async () => {
			const all = await pi.SessionManager.listAll();
			return all.filter((s) => s.allMessagesText.toLowerCase().includes(rare.toLowerCase())).length;
		}),
	);
}
if (!startupOnly) {
	out.pi_listall_filter_ms = ms(median(piSearch.map((s) => s[0])));
	out.pi_listall_sessions_matching = piSearch[0][1];
}

console.log(JSON.stringify(out, null, 2));
fs.rmSync(W, { recursive: true, force: true });

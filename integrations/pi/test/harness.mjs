// Runs the package inside pi 1.6.0's own runtime (AgentSessionRuntime, DefaultResourceLoader
// with the package as an extension path) on pi-ai's faux model, with a scripted UI, in a
// throwaway HOME / PI_CODING_AGENT_DIR / database.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const PKG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const NODE_HOME = process.env.SESSIONDB_NODE_HOME || path.join(os.homedir(), ".cache", "sessiondb-node");
const mod = (p) => import(pathToFileURL(path.join(NODE_HOME, "node_modules/@earendil-works", p)).href);
export const pi = await mod("pi-coding-agent/dist/index.js");
export const ai = await mod("pi-ai/dist/index.js");

/** A fresh world: HOME, agent dir, database, and projects of which sessions are written by pi's SessionManager. */
export function world() {
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-pi-"));
	const env = {
		HOME: path.join(W, "home"),
		PI_CODING_AGENT_DIR: path.join(W, "agent"),
		SESSIONDB_PATH: path.join(W, "sessiondb.sqlite"),
	};
	for (const d of [env.HOME, env.PI_CODING_AGENT_DIR]) fs.mkdirSync(d, { recursive: true });
	Object.assign(process.env, env);
	delete process.env.PI_CODING_AGENT_SESSION_DIR;
	delete process.env.SESSIONDB_BIN;
	delete process.env.SESSIONDB_PI_LAUNCHER;
	const project = (name) => {
		const d = path.join(W, "projects", name);
		fs.mkdirSync(d, { recursive: true });
		return d;
	};
	return { W, env, project, cleanup: () => fs.rmSync(W, { recursive: true, force: true }) };
}

const usage = (cost) => ({
	input: 100,
	output: 20,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: 120,
	cost: { input: cost / 2, output: cost / 2, cacheRead: 0, cacheWrite: 0, total: cost },
});

/** Writes a session of another project with pi's SessionManager; returns its id, file and entry ids. */
export function writeSession(cwd, turns, model) {
	const sm = pi.SessionManager.create(cwd);
	const ids = [];
	for (const [user, reply, cost] of turns) {
		ids.push(sm.appendMessage({ role: "user", content: [{ type: "text", text: user }], timestamp: Date.now() }));
		ids.push(
			sm.appendMessage({
				role: "assistant",
				content: [{ type: "text", text: reply }],
				api: "faux",
				provider: model.provider,
				model: model.id,
				usage: usage(cost),
				stopReason: "stop",
				timestamp: Date.now(),
			}),
		);
	}
	return { id: sm.getSessionId(), file: sm.getSessionFile(), ids };
}

/** A UI whose dialogs answer from a script and which records notices and dialogs. */
export function scriptedUI() {
	const ui = {
		notices: [],
		dialogs: [],
		/** Answers for select(): functions of (title, options) returning an option or undefined. */
		selects: [],
		inputs: [],
		select: async (title, options) => {
			ui.dialogs.push({ title, options });
			const answer = ui.selects.shift();
			return answer ? answer(title, options) : undefined;
		},
		input: async (title) => {
			ui.dialogs.push({ title });
			return ui.inputs.shift();
		},
		confirm: async () => false,
		editor: async () => undefined,
		notify: (message, type = "info") => ui.notices.push({ message, type }),
	};
	return new Proxy(ui, {
		get: (t, k) => (k in t ? t[k] : () => undefined),
	});
}

/** pi's runtime on the faux model with the package loaded; `bind()` gives it the scripted UI. */
export async function startPi(cwd, { ui, responses = [], extensionPaths = [PKG], settings = {} } = {}) {
	const faux = ai.fauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
	const agentDir = process.env.PI_CODING_AGENT_DIR;
	const modelRuntime = await pi.ModelRuntime.create({ agentDir });
	modelRuntime.registerNativeProvider(faux.provider);
	await modelRuntime.setRuntimeApiKey("faux", "unused");
	faux.setResponses(responses);
	const errors = [];
	const createRuntime = async ({ cwd, sessionManager, sessionStartEvent }) => {
		const services = await pi.createAgentSessionServices({
			cwd,
			agentDir,
			modelRuntime,
			settingsManager: pi.SettingsManager.inMemory({ compaction: { enabled: false }, ...settings }),
			resourceLoaderOptions: { additionalExtensionPaths: extensionPaths },
		});
		const created = await pi.createAgentSessionFromServices({ services, sessionManager, sessionStartEvent, model: faux.getModel() });
		return { ...created, services, diagnostics: services.diagnostics };
	};
	const runtime = await pi.createAgentSessionRuntime(createRuntime, { cwd, agentDir, sessionManager: pi.SessionManager.create(cwd) });
	const bindings = {
		uiContext: ui,
		mode: "tui",
		onError: (e) => errors.push(e),
		commandContextActions: {
			waitForIdle: () => runtime.session.waitForIdle(),
			newSession: (o) => runtime.newSession(o),
			fork: (id, o) => runtime.fork(id, o),
			navigateTree: (id, o) => runtime.session.navigateTree(id, o),
			switchSession: (p, o) => runtime.switchSession(p, o),
			reload: async () => {},
		},
	};
	runtime.setRebindSession(async (s) => s.bindExtensions(bindings));
	await runtime.session.bindExtensions(bindings);
	return { runtime, faux, errors, diagnostics: runtime.takeUnreportedDiagnostics() };
}

/** Text of the tool results of `name` in the current session. */
export function toolResults(session, name) {
	return session.messages
		.filter((m) => m.role === "toolResult" && m.toolName === name)
		.map((m) => ({ text: m.content.map((c) => c.text ?? "").join(""), isError: m.isError, details: m.details }));
}

/** `sessiondb ARGS --json` as the test's own check of the database. */
export function sessiondb(...args) {
	try {
		return JSON.parse(execFileSync("sessiondb", [...args, "--json"], { encoding: "utf8" }));
	} catch (e) {
		if (e.status === 1 && e.stdout) return JSON.parse(e.stdout);
		throw e;
	}
}

/** Polls `f` until it returns something; errors (a database still being created) count as not yet. */
export async function until(what, f, ms = 20000) {
	const end = Date.now() + ms;
	let last;
	for (;;) {
		try {
			const v = await f();
			if (v) return v;
		} catch (e) {
			last = e;
		}
		if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ""}`);
		await new Promise((r) => setTimeout(r, 50));
	}
}

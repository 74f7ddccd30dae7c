// One run of pi 1.6.0's real AgentSession (pi-ai's faux provider as the model, real read and
// bash tools on a temporary project) on either pi's SessionManager or the binding's, writing a
// snapshot after every step: session.messages, getBranch(), getTree(), buildSessionContext().
//
//   node agent-scenario.mjs <pi|binding> <main|reopen> <workdir> <out.json>
//
// `main` drives a conversation: tool calls, thinking and model changes, setSessionName,
// compact(), navigateTree with and without a summary, labels, then a second session forked as
// pi's runtime forks (open + createBranchedSession). `reopen`, in a fresh process, continues
// the most recent session with continueRecent and opens the first one with open.
// The binding's database is $SESSIONDB_PATH (agent.test.mjs sets it).
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [store, phase, W, out] = process.argv.slice(2);
const HOME = process.env.SESSIONDB_NODE_HOME;
const mod = (p) => import(pathToFileURL(path.join(HOME, "node_modules/@earendil-works", p)).href);
const pi = await mod("pi-coding-agent/dist/index.js");
const ai = await mod("pi-ai/dist/index.js");
const SM = store === "pi" ? pi.SessionManager : (await import("../index.js")).SessionManager;

process.env.PI_CODING_AGENT_DIR = path.join(W, "agent");
const cwd = path.join(W, "project");
const sessionDir = path.join(W, "sessions");

const faux = ai.fauxProvider({
	provider: "faux",
	models: [
		{ id: "faux-1", reasoning: true },
		{ id: "faux-2", reasoning: true },
	],
});
const modelRuntime = await pi.ModelRuntime.create({ agentDir: path.join(W, "agent") });
modelRuntime.registerNativeProvider(faux.provider);
await modelRuntime.setRuntimeApiKey("faux", "unused");
const say = (text) => ai.fauxAssistantMessage(text);
const tool = (thinking, name, args) =>
	ai.fauxAssistantMessage([ai.fauxThinking(thinking), ai.fauxToolCall(name, args)], { stopReason: "toolUse" });

const snapshots = [];
const state = { files: {} };
let session;

function snap(step) {
	const sm = session.sessionManager;
	// Serialized now: session.messages is one array the agent keeps changing.
	snapshots.push(JSON.stringify({
		step,
		file: sm.getSessionFile() ?? null,
		leaf: sm.getLeafId(),
		messages: session.messages,
		branch: sm.getBranch(),
		tree: sm.getTree(),
		context: sm.buildSessionContext(),
		entries: sm.getEntries(),
		name: sm.getSessionName() ?? null,
	}));
}

async function start(sessionManager) {
	session?.dispose();
	({ session } = await pi.createAgentSession({
		cwd,
		model: faux.getModel("faux-1") ?? faux.getModel(),
		thinkingLevel: "low",
		modelRuntime,
		sessionManager,
		settingsManager: pi.SettingsManager.inMemory({ compaction: { enabled: false, keepRecentTokens: 1 } }),
	}));
}

/** The id of the n-th entry of the branch of a given kind (pi and the binding agree on order). */
function find(pred) {
	const e = session.sessionManager.getBranch().find(pred);
	if (!e) throw new Error("scenario: entry not found");
	return e.id;
}
const userSaying = (text) => (e) =>
	e.type === "message" && e.message.role === "user" && JSON.stringify(e.message.content).includes(text);

if (phase === "main") {
	await start(SM.create(cwd, sessionDir));
	snap("start");
	faux.setResponses([tool("read the notes", "read", { path: "notes.txt" }), say("The notes say the answer is 42.")]);
	await session.prompt("What do my notes say?");
	snap("prompt with read");
	faux.setResponses([tool("count lines", "bash", { command: "wc -l < notes.txt && cat data/numbers.txt" }), say("One line; numbers 1 2 3.")]);
	await session.prompt("How many lines, and what numbers?");
	snap("prompt with bash");
	session.setThinkingLevel("high");
	snap("thinking level");
	await session.setModel(faux.getModel("faux-2"));
	snap("model change");
	session.setSessionName("notes session");
	snap("session name");
	faux.setResponses([say("Summary: notes say 42; one line; numbers 1 2 3."), say("Turn prefix: the user asked about lines.")]);
	await session.compact();
	snap("compact");
	faux.setResponses([say("Still 42.")]);
	await session.prompt("Are you sure?");
	snap("prompt after compact");
	session.sessionManager.appendLabelChange(find(userSaying("What do my notes say?")), "first question");
	snap("label");
	await session.navigateTree(find(userSaying("Are you sure?")), { summarize: false });
	snap("navigate without summary");
	faux.setResponses([say("Taking another direction.")]);
	await session.prompt("Let us try another direction.");
	snap("prompt on new branch");
	faux.setResponses([say("Branch summary: tried another direction.")]);
	await session.navigateTree(find(userSaying("How many lines")), { summarize: true });
	snap("navigate with summary");
	session.sessionManager.appendLabelChange(find(userSaying("What do my notes say?")), undefined);
	snap("label cleared");
	faux.setResponses([say("Back on the numbers.")]);
	await session.prompt("Back to the numbers.");
	snap("prompt after summary");
	state.files.first = session.sessionManager.getSessionFile();
	// File times tick coarsely (4 ms here): without a pause the fork's last write can share the
	// first session's tick, and pi's continueRecent (files by mtime) then picks either one.
	await new Promise((r) => setTimeout(r, 50));
	// A second session, forked as pi's AgentSessionRuntime.fork does.
	const forkAt = find((e) => e.type === "message" && JSON.stringify(e.message.content).includes("The notes say"));
	const forked = SM.open(state.files.first, session.sessionManager.getSessionDir());
	forked.createBranchedSession(forkAt);
	await start(forked);
	snap("fork");
	faux.setResponses([say("Forked and ready.")]);
	await session.prompt("Continue in the fork.");
	snap("prompt in fork");
	state.files.fork = session.sessionManager.getSessionFile();
} else {
	const prior = JSON.parse(fs.readFileSync(out.replace(/reopen/, "main"), "utf8")).state;
	await start(SM.continueRecent(cwd, sessionDir));
	snap("continueRecent");
	faux.setResponses([say("Continued.")]);
	await session.prompt("Still here after a restart?");
	snap("prompt after continueRecent");
	await start(SM.open(prior.files.first));
	snap("open");
	faux.setResponses([tool("look again", "read", { path: "notes.txt" }), say("Reopened: still 42.")]);
	await session.prompt("Read the notes once more.");
	snap("prompt after open");
	state.files = prior.files;
}
session.dispose();
fs.writeFileSync(out, JSON.stringify({ store, phase, state, snapshots: snapshots.map((s) => JSON.parse(s)) }));

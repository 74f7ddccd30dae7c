// (A copy of shared/oracle/faux-provider-ext.mjs.) A pi extension that gives pi's own CLI a scripted model, so the CLI can run offline in tests:
//   FAUX_REPLIES=replies.json node <pi>/dist/cli.js -e faux-provider-ext.mjs \
//     --provider faux --model faux-1 --mode rpc        (or -p "a prompt")
// replies.json is a JSON array; each element is the next reply: a string (plain text), or
// {"text": "...", "thinking": "...", "tool": {"name": "read", "arguments": {"path": "a.txt"}}}
// (a reply with a tool call stops with "toolUse"; pi runs the tool and asks for the next reply).
// Without FAUX_REPLIES every reply is "ok N". pi-ai comes from the oracle install (setup.sh).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const home = process.env.SESSIONDB_NODE_HOME || path.join(os.homedir(), ".cache", "sessiondb-node");
const ai = await import(pathToFileURL(path.join(home, "node_modules/@earendil-works/pi-ai/dist/index.js")).href);

function reply(spec) {
	if (typeof spec === "string") return ai.fauxAssistantMessage(spec);
	const parts = [];
	if (spec.thinking) parts.push(ai.fauxThinking(spec.thinking));
	if (spec.text) parts.push(spec.text);
	if (spec.tool) parts.push(ai.fauxToolCall(spec.tool.name, spec.tool.arguments ?? {}));
	const content = parts.length === 1 && typeof parts[0] === "string" ? parts[0] : parts.map((p) => (typeof p === "string" ? { type: "text", text: p } : p));
	return ai.fauxAssistantMessage(content, spec.tool ? { stopReason: "toolUse" } : undefined);
}

export default function (pi) {
	const faux = ai.fauxProvider({ provider: "faux", models: [{ id: "faux-1", reasoning: true }] });
	const file = process.env.FAUX_REPLIES;
	const specs = file ? JSON.parse(fs.readFileSync(file, "utf8")) : [];
	const replies = specs.map(reply);
	for (let i = 0; i < 500; i++) replies.push(ai.fauxAssistantMessage(`ok ${i}`));
	faux.setResponses(replies);
	pi.registerProvider(faux.provider);
}

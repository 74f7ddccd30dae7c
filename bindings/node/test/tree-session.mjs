// A generated session file holding what pi's getTree() and its /tree selector resolve (for
// test/tree.test.mjs and the /tree screens of test/launcher-tui.test.mjs).
import fs from "node:fs";

/**
 * A 3,000-entry session file with what pi's getTree() sorts and resolves: branch points whose
 * children are out of time order in the file, equal times, invalid and missing timestamps, a
 * repeated id, an orphan, labels set, changed, cleared and set again, a label without a
 * timestamp; and what its tree selector reads: assistants with whitespace, thinking-only,
 * aborted, error and image contents (`stringContents`: string contents too), tool calls.
 */
export function writeSession(file, cwd = "/tmp/p", { stringContents = false } = {}) {
	const lines = [{ type: "session", version: 3, id: "0199a000-0000-7000-8000-000000000000", timestamp: "2026-01-01T00:00:00.000Z", cwd }];
	const t0 = Date.parse("2026-01-01T00:00:00.000Z");
	let parent = null;
	let n = 0;
	const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
	const assistant = (content, stopReason) => ({ role: "assistant", content, api: "faux", provider: "faux", model: "faux-1", usage, stopReason, timestamp: 0 });
	const msg = (role, text, ts, p = parent, id = `e${++n}`) => {
		const message = role === "assistant" ? assistant([{ type: "text", text }], "stop") : { role, content: text, timestamp: 0 };
		lines.push({ type: "message", id, parentId: p, timestamp: ts, message });
		return id;
	};
	// A tool call and its result (pi's tree shows the call for the result).
	const tool = (k, ts) => {
		const call = `e${++n}`;
		lines.push({ type: "message", id: call, parentId: parent, timestamp: ts, message: assistant([{ type: "toolCall", id: `call_${k}`, name: "read", arguments: { path: `file-${k}.txt` } }], "toolUse") });
		const result = `e${++n}`;
		lines.push({ type: "message", id: result, parentId: call, timestamp: ts, message: { role: "toolResult", toolCallId: `call_${k}`, toolName: "read", content: [{ type: "text", text: "contents" }], isError: false, timestamp: 0 } });
		parent = result;
	};
	const branchPoints = [];
	for (let i = 0; i < 2900; i++) {
		parent = msg(i % 2 ? "assistant" : "user", `entry ${i} \u00e9`, new Date(t0 + i * 1000).toISOString());
		// Assistants pi's tree hides or shows by their content and stopReason.
		if (i % 2 && i % 50 === 1) {
			const variants = [
				[[{ type: "text", text: " \n\t\u00a0\ufeff" }], "stop"], // whitespace as JavaScript trims it: hidden
				[[{ type: "thinking", thinking: "thinking only" }], "stop"],
				[[], "aborted"],
				[[{ type: "text", text: "" }], "error"],
				[[{ type: "text", text: "\u2028" }, { type: "text", text: `second block ${i}` }], "toolUse"],
				[[{ type: "image", data: "", mimeType: "image/png" }], null],
			];
			// String contents, which pi's tree reads but its chat cannot draw (a TUI stops on them).
			if (stringContents) variants.push(["   ", "stop"], [`a string ${i}`, "stop"]);
			const [content, stopReason] = variants[((i - 1) / 50) % variants.length];
			const message = assistant(content, stopReason ?? undefined);
			if (stopReason === "error") message.errorMessage = `failed ${i}`;
			const id = `e${++n}`;
			lines.push({ type: "message", id, parentId: parent, timestamp: new Date(t0 + i * 1000 + 2).toISOString(), message });
			parent = id;
		}
		if (i % 2 && i % 7 === 3) tool(i, new Date(t0 + i * 1000 + 1).toISOString());
		if (i % 300 === 150) branchPoints.push(parent);
	}
	tool(2900, new Date(t0 + 2900 * 1000).toISOString());
	const leaf = parent;
	// Siblings under each branch point, written out of time order.
	for (const [k, p] of branchPoints.entries()) {
		msg("user", `late ${k}`, new Date(t0 + 9e9 + k).toISOString(), p);
		msg("user", `early ${k}`, new Date(t0 - 9e9).toISOString(), p);
		msg("user", `same ${k}`, new Date(t0 - 9e9).toISOString(), p);
		msg("user", `bad time ${k}`, "not a date", p);
		if (k % 2) msg("user", `no time ${k}`, undefined, p);
	}
	msg("assistant", "repeated id, first line", new Date(t0).toISOString(), branchPoints[1], "dup");
	msg("assistant", "repeated id, second line", new Date(t0 + 5).toISOString(), branchPoints[2], "dup");
	msg("user", "an orphan", new Date(t0).toISOString(), "no-such-parent");
	const label = (targetId, value, ts = new Date(t0 + 7).toISOString()) =>
		lines.push({ type: "label", id: `l${++n}`, parentId: leaf, timestamp: ts, targetId, label: value });
	label("e10", "first");
	label("e20", "second");
	label("e10", "first, changed");
	label("e20", undefined);
	label("e30", "third", undefined);
	label("e20", "second again");
	fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
	return lines.length - 1;
}

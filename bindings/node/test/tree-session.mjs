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

/**
 * A random `count`-entry session file (seeded: the same seed writes the same file) of every kind
 * pi's tree selector filters and draws: messages of each role, assistants with and without text,
 * tool calls (object and string arguments) and their results, settings and bookkeeping entries,
 * usage records, labels; chains, branches at random earlier entries, new roots, orphans, repeated
 * ids of entries without children (as a root, under the first line's parent, or under one of two
 * entries naming each other as parent), equal, invalid and missing timestamps. Returns the ids
 * written, in file order, the two of the loop (`r<seed>loop1`, `r<seed>loop2`) left out.
 */
export function writeRandomSession(file, seed, count, cwd = "/tmp/p") {
	let s = seed >>> 0 || 1;
	const rand = () => {
		// xorshift32
		s ^= s << 13;
		s >>>= 0;
		s ^= s >>> 17;
		s ^= s << 5;
		s >>>= 0;
		return s / 2 ** 32;
	};
	const pick = (a) => a[Math.floor(rand() * a.length)];
	const lines = [{ type: "session", version: 3, id: `0199a000-0000-7000-8000-${String(seed).padStart(12, "0")}`, timestamp: "2026-01-01T00:00:00.000Z", cwd }];
	const t0 = Date.parse("2026-01-01T00:00:00.000Z");
	const ids = [];
	const parentOf = new Map();
	const calls = [];
	let prev = null;
	const time = (k) => {
		const r = rand();
		if (r < 0.02) return "not a date";
		if (r < 0.03) return undefined;
		if (r < 0.08) return new Date(t0).toISOString();
		return new Date(t0 + k * 1000 + Math.floor(rand() * 5000) - 2500).toISOString();
	};
	const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
	const assistant = (k) => {
		const content = [];
		const blocks = Math.floor(rand() * 4);
		for (let b = 0; b < blocks; b++) {
			const r = rand();
			if (r < 0.35) content.push({ type: "text", text: pick(["", "  \n", `answer ${k}`, "\u00a0", `line\nbreak ${k}`]) });
			else if (r < 0.5) content.push({ type: "thinking", thinking: `thought ${k}` });
			else {
				const id = `call_${k}_${b}`;
				calls.push(id);
				const args = rand() < 0.8 ? { path: `f${k}.txt`, command: `ls ${k}` } : pick(["a string", 7]);
				content.push({ type: "toolCall", id, name: pick(["read", "bash", "edit", "custom_tool"]), arguments: args });
			}
		}
		const message = { role: "assistant", content: rand() < 0.05 ? pick(["  ", `plain ${k}`]) : content, api: "faux", provider: "faux", model: "faux-1", usage, timestamp: 0 };
		const stop = pick(["stop", "toolUse", "error", "aborted", undefined, "stop", "toolUse"]);
		if (stop !== undefined) message.stopReason = stop;
		if (stop === "error") message.errorMessage = `failed ${k}`;
		return message;
	};
	const entry = (k) => {
		const r = rand();
		if (r < 0.25) return { type: "message", message: { role: "user", content: `question ${k}`, timestamp: 0 } };
		if (r < 0.55) return { type: "message", message: assistant(k) };
		if (r < 0.7) {
			const toolCallId = calls.length > 0 && rand() < 0.9 ? pick(calls) : `missing_${k}`;
			return { type: "message", message: { role: "toolResult", toolCallId, toolName: "read", content: [{ type: "text", text: `result ${k}` }], isError: false, timestamp: 0 } };
		}
		if (r < 0.73) return { type: "message", message: { role: "bashExecution", command: `echo ${k}`, output: "", exitCode: 0, cancelled: false, truncated: false, timestamp: 0 } };
		if (r < 0.76) return { type: "model_change", provider: "faux", modelId: `faux-${k}` };
		if (r < 0.79) return { type: "thinking_level_change", thinkingLevel: pick(["low", "high"]) };
		if (r < 0.81) return { type: "custom", customType: "ext", data: { k } };
		if (r < 0.83) return { type: "custom_message", customType: "note", content: `note ${k}`, display: true };
		if (r < 0.85) return { type: "session_info", name: rand() < 0.5 ? `name ${k}` : undefined };
		if (r < 0.87) return { type: "usage", usage };
		if (r < 0.89) return { type: "compaction", summary: `summary ${k}`, firstKeptEntryId: ids.length > 0 ? pick(ids) : "none", tokensBefore: 1000 * k };
		if (r < 0.91) return { type: "branch_summary", fromId: ids.length > 0 ? pick(ids) : "root", summary: `branch ${k}` };
		if (r < 0.93 && ids.length > 0) return { type: "context_edit", targetId: pick(ids), replacement: null };
		if (ids.length > 0) return { type: "label", targetId: pick(ids), label: rand() < 0.8 ? `label ${k}` : undefined };
		return { type: "message", message: { role: "user", content: `question ${k}`, timestamp: 0 } };
	};
	for (let k = 0; k < count; k++) {
		if (k === Math.floor(count / 2)) {
			// Two entries naming each other as parent: in no root's subtree.
			lines.push({ type: "message", id: `r${seed}loop1`, parentId: `r${seed}loop2`, timestamp: time(k), message: { role: "user", content: "loop 1", timestamp: 0 } });
			lines.push({ type: "message", id: `r${seed}loop2`, parentId: `r${seed}loop1`, timestamp: time(k), message: { role: "user", content: "loop 2", timestamp: 0 } });
		}
		const r = rand();
		let id = `r${seed}e${k}`;
		let parentId = prev;
		if (r < 0.06 && ids.length > 0) parentId = pick(ids); // a branch
		else if (r < 0.07) parentId = null; // another root
		else if (r < 0.075) parentId = `nowhere${k}`; // an orphan
		const e = entry(k);
		const { type, ...rest } = e;
		const line = { type, id, parentId, timestamp: time(k), ...rest };
		if (line.timestamp === undefined) delete line.timestamp;
		lines.push(line);
		parentOf.set(id, parentId);
		ids.push(id);
		prev = id;
	}
	// Repeated ids last, of entries without children: a root, or under the first line's parent.
	// (pi's tree holds the node at both places, and pi's tree selector lists the visible
	// children of an id once for each place it is at: below a repeated id, its work doubles with
	// each level.)
	const parents = new Set(parentOf.values());
	const childless = ids.filter((id) => !parents.has(id));
	for (let k = 0; k < 3 && childless.length > 0; k++) {
		const id = pick(childless);
		const { type, ...rest } = entry(count + k);
		// The last one's line names an entry of the loop as its parent.
		const parentId = k === 2 ? `r${seed}loop1` : rand() < 0.5 ? null : parentOf.get(id);
		lines.push({ type, id, parentId, timestamp: time(count + k), ...rest });
	}
	fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
	return ids;
}

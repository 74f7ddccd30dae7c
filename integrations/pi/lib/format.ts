// Turning sessiondb's JSON into text for the model, the selector and notices.
import { basename } from "node:path";

/** One hit of `sessiondb search --json`. */
export interface Hit {
	sessionId: string;
	sessionFile: string;
	cwd: string | null;
	entryId: string | null;
	role: string;
	timestamp: number | null;
	snippet: string;
	rank: number;
}

/** One row of `sessiondb stats --json`. */
export interface Totals {
	group: string;
	entries: number;
	input: number;
	output: number;
	cacheRead: number;
	cacheWrite: number;
	totalTokens: number;
	/** null when a cost is not a finite number (an overflowing sum in a damaged session). */
	cost: number | null;
}

export function project(cwd: string | null | undefined): string {
	if (!cwd) return "(no project)";
	return basename(cwd.replace(/[\\/]+$/, "")) || cwd;
}

export function oneLine(s: string, max: number): string {
	const flat = s.replace(/\s+/g, " ").trim();
	return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function age(ms: number | null | undefined, now = Date.now()): string {
	if (ms === null || ms === undefined) return "?";
	const s = Math.max(0, Math.round((now - ms) / 1000));
	if (s < 60) return `${s}s ago`;
	if (s < 3600) return `${Math.floor(s / 60)}m ago`;
	if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
	if (s < 86400 * 60) return `${Math.floor(s / 86400)}d ago`;
	return new Date(ms).toISOString().slice(0, 10);
}

function iso(ms: number | null): string {
	return ms === null ? "unknown time" : new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
}

/** The model's view of search hits: enough to call session_read on any of them. */
export function hitsForModel(query: string, hits: Hit[], now = Date.now()): string {
	if (hits.length === 0) return `No past session entry matches "${query}".`;
	const lines = [`${hits.length} match${hits.length === 1 ? "" : "es"} for "${query}", best first:`];
	hits.forEach((h, i) => {
		lines.push(
			`${i + 1}. sessionId=${h.sessionId} entryId=${h.entryId ?? "-"} project=${project(h.cwd)} (${h.cwd ?? "?"}) role=${h.role} time=${iso(h.timestamp)} (${age(h.timestamp, now)})`,
			`   ${clipSnippet(h.snippet, 400)}`,
		);
	});
	lines.push("Query terms are in [brackets]. Call session_read with a sessionId and entryId to read the messages around one.");
	return lines.join("\n");
}

/** One selector line: age, project, role, snippet. */
export function hitLabel(h: Hit, i: number, now = Date.now()): string {
	return `${String(i + 1).padStart(2)}. ${age(h.timestamp, now).padEnd(8)} ${oneLine(project(h.cwd), 18).padEnd(18)} ${h.role.padEnd(10)} ${clipSnippet(h.snippet, 110)}`;
}

/** Shortest an unmarked stretch of a snippet is cut to (besides its `…`). */
const KEEP = 8;

/**
 * A snippet on one line in at most `max` characters with its `[marks]` kept: the text between
 * the marks is shortened (the longest stretch first, keeping the words next to the marks)
 * rather than the end cut off, so a term marked late in the snippet stays visible.
 */
export function clipSnippet(snippet: string, max: number): string {
	const flat = snippet.replace(/\s+/g, " ").trim();
	if (flat.length <= max) return flat;
	// Odd parts are marks, even parts the text before, between and after them.
	const parts = flat.split(/(\[[^[\]]*\])/);
	const room = parts.map((p) => p.length);
	let over = flat.length - max;
	while (over > 0) {
		let longest = -1;
		for (let k = 0; k < parts.length; k += 2) if (room[k] > KEEP + 1 && (longest < 0 || room[k] > room[longest])) longest = k;
		if (longest < 0) break;
		const cut = Math.min(over, room[longest] - KEEP - 1);
		room[longest] -= cut;
		over -= cut;
	}
	const text = parts
		.map((p, k) => {
			if (k % 2 === 1 || room[k] >= p.length) return p;
			const keep = room[k] - 1; // one character for the "…"
			if (k === 0) return `…${p.slice(p.length - keep)}`;
			if (k === parts.length - 1) return `${p.slice(0, keep)}…`;
			const head = Math.ceil(keep / 2);
			return `${p.slice(0, head)}…${p.slice(p.length - (keep - head))}`;
		})
		.join("");
	return oneLine(text, max);
}

type Json = Record<string, unknown>;

function textOf(content: unknown, max: number): string {
	if (typeof content === "string") return oneLineKeepBreaks(content, max);
	if (!Array.isArray(content)) return "";
	const parts: string[] = [];
	for (const c of content as Json[]) {
		if (c?.type === "text" && typeof c.text === "string") parts.push(c.text);
		else if (c?.type === "thinking" && typeof c.thinking === "string") parts.push(`(thinking) ${c.thinking}`);
		else if (c?.type === "toolCall") parts.push(`(tool call ${String(c.name)} ${JSON.stringify(c.arguments ?? {})})`);
		else if (c?.type === "image") parts.push("(image)");
	}
	return oneLineKeepBreaks(parts.join("\n"), max);
}

function oneLineKeepBreaks(s: string, max: number): string {
	const t = s.replace(/\n{3,}/g, "\n\n").trim();
	return t.length > max ? `${t.slice(0, max - 1)}… (${t.length - max + 1} more characters)` : t;
}

/** A message (pi's AgentMessage) as a few lines of text. */
export function renderMessage(m: Json, max: number): string {
	const role = String(m.role ?? "?");
	switch (role) {
		case "user":
		case "assistant":
			return `[${role}] ${textOf(m.content, max)}`;
		case "toolResult":
			return `[tool result ${String(m.toolName ?? "")}${m.isError ? ", error" : ""}] ${textOf(m.content, max)}`;
		case "bashExecution":
			return `[bash] $ ${String(m.command ?? "")}\n${oneLineKeepBreaks(String(m.output ?? ""), max)}`;
		case "custom":
			return `[${String(m.customType ?? "custom")}] ${textOf(m.content, max)}`;
		case "compactionSummary":
			return `[compaction summary] ${oneLineKeepBreaks(String(m.summary ?? ""), max)}`;
		case "branchSummary":
			return `[branch summary] ${oneLineKeepBreaks(String(m.summary ?? ""), max)}`;
		default:
			return `[${role}] ${textOf(m.content, max)}`;
	}
}

/** A session entry (one JSONL line) as text, or null for bookkeeping entries not worth showing. */
export function renderEntry(e: Json, max: number): string | null {
	switch (e.type) {
		case "message":
			return renderMessage((e.message ?? {}) as Json, max);
		case "custom_message":
			return `[${String(e.customType ?? "custom")}] ${textOf(e.content, max)}`;
		case "compaction":
			return `[compaction summary] ${oneLineKeepBreaks(String(e.summary ?? ""), max)}`;
		case "branch_summary":
			return `[branch summary] ${oneLineKeepBreaks(String(e.summary ?? ""), max)}`;
		case "session_info":
			return e.name ? `[session named] ${String(e.name)}` : null;
		default:
			return null;
	}
}

/** Fits blocks into `budget` characters, dropping from the far end (`keepEnd` keeps the last ones). */
export function fit(blocks: string[], budget: number, keepEnd: boolean): { text: string; dropped: number } {
	const kept: string[] = [];
	let used = 0;
	const order = keepEnd ? [...blocks].reverse() : blocks;
	for (const b of order) {
		if (used + b.length + 2 > budget && kept.length > 0) break;
		kept.push(b);
		used += b.length + 2;
	}
	if (keepEnd) kept.reverse();
	return { text: kept.join("\n\n"), dropped: blocks.length - kept.length };
}

const money = (n: number | null) => (n === null || !Number.isFinite(n) ? "?" : `$${n.toFixed(n >= 100 ? 0 : 2)}`);
const tokens = (n: number) => (n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e4 ? `${Math.round(n / 1e3)}k` : String(n));

/** The /usage notice: today and this month at a glance, then the grouped table. */
export function usageTable(by: string, groups: Totals[], total: Totals, today: Totals, month: Totals): string {
	const head = ["", "entries", "input", "output", "cache r", "cache w", "total", "cost"];
	const row = (t: Totals, label: string) => [
		label,
		String(t.entries),
		tokens(t.input),
		tokens(t.output),
		tokens(t.cacheRead),
		tokens(t.cacheWrite),
		tokens(t.totalTokens),
		money(t.cost),
	];
	const rows = [head, ...groups.map((g) => row(g, g.group)), row(total, "total")];
	rows[0][0] = by;
	const widths = head.map((_, c) => Math.max(...rows.map((r) => r[c].length)));
	const lines = rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("  "));
	return [
		`Today ${money(today.cost)} (${tokens(today.totalTokens)} tokens) · this month ${money(month.cost)} (${tokens(month.totalTokens)} tokens)`,
		"",
		...lines,
	].join("\n");
}

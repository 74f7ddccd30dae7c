// sessiondb inside pi: keeps the sessiondb database in step with pi's sessions, and gives the
// user /search and /usage and the model session_search and session_read.
//
// Everything goes through the sessiondb CLI's --json output, run asynchronously with a
// timeout. A missing binary or a failing sync is a warning, never an exception in pi.
import { existsSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { getAgentDir } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import {
	type Cli,
	dbExists,
	expandHome,
	findBinary,
	run,
	runJson,
	SessiondbMissing,
	type SessiondbSettings,
} from "../lib/cli.ts";
import { fit, type Hit, hitLabel, hitsForModel, renderEntry, renderMessage, type Totals, usageTable } from "../lib/format.ts";

const ROLES = ["user", "assistant", "toolResult", "custom", "compaction", "branch_summary", "session_info"];
const OWN_TOOLS = ["session_search", "session_read"];
const USAGE_GROUPS = ["day", "week", "month", "model", "provider", "project", "session"];
const MAX_LIMIT = 50;
const MAX_WINDOW = 40;
/** Characters of text a session_read result may hold (about 4k tokens). */
const READ_BUDGET = 16_000;

const SEARCH_TIMEOUT = 120_000; // the first search after a big import builds the index
const READ_TIMEOUT = 30_000;
const SYNC_TIMEOUT = 600_000; // the first sync of a large history
const FILE_SYNC_TIMEOUT = 30_000;
const SHUTDOWN_WAIT = 5_000;
const STARTUP_DELAY = 1_000;

type Json = Record<string, unknown>;

/** A tool error the model reads: thrown from execute(), pi reports it as an error result. */
class ToolInputError extends Error {}

export default function sessiondb(pi: ExtensionAPI) {
	/** Syncs run one at a time, in order; the chain never rejects. */
	let chain: Promise<void> = Promise.resolve();
	/** A sync of the current file is queued and has not started: another request can ride on it. */
	let fileSyncQueued: Promise<void> | null = null;
	let warnedMissing = false;

	function settings(): SessiondbSettings {
		const s = (pi.getSettings() as Json).sessiondb;
		return s && typeof s === "object" ? (s as SessiondbSettings) : {};
	}

	function cli(cwd: string): Cli {
		const s = settings();
		const found = findBinary(s, cwd);
		if ("missing" in found) throw new SessiondbMissing(found.missing);
		return { bin: found.bin, db: s.db ? expandHome(s.db, cwd) : undefined };
	}

	/** pi's session folders: the agent dir's `sessions`, a custom sessionDir (env or setting), extra configured ones, and the current session's folder when it is elsewhere (`--session-dir`). */
	function sessionRoots(ctx: ExtensionContext): string[] {
		const roots: string[] = [resolve(getAgentDir(), "sessions")];
		const custom = process.env.PI_CODING_AGENT_SESSION_DIR || (pi.getSettings() as Json).sessionDir;
		if (typeof custom === "string" && custom) roots.push(expandHome(custom, ctx.cwd));
		for (const d of settings().sessionDirs ?? []) roots.push(expandHome(d, ctx.cwd));
		const current = ctx.sessionManager.getSessionDir();
		if (current && !roots.some((r) => isBelow(current, r))) roots.push(resolve(current));
		return [...new Set(roots)].filter((r) => existsSync(r));
	}

	function enqueue(job: () => Promise<void>): Promise<void> {
		// Never rejects: an unhandled rejection would take pi down.
		chain = chain.then(job).catch(() => {});
		return chain;
	}

	/** A notice from background work; the ctx may be stale by then (the session was replaced). */
	function tell(ctx: ExtensionContext, message: string, type: "info" | "warning") {
		try {
			if (ctx.hasUI) ctx.ui.notify(message, type);
		} catch {
			// the session that started the sync is gone: nobody to tell
		}
	}

	function warn(ctx: ExtensionContext, message: string) {
		tell(ctx, message, "warning");
	}

	function warnMissing(ctx: ExtensionContext, e: unknown) {
		if (e instanceof SessiondbMissing) {
			if (!warnedMissing) warn(ctx, e.message);
			warnedMissing = true;
		} else {
			warn(ctx, `sessiondb: sync failed: ${(e as Error).message}`);
		}
	}

	/** Syncs every session folder; the first time (no database yet) says so, as it may take a while. */
	function syncAll(ctx: ExtensionContext): Promise<void> {
		let c: Cli;
		let roots: string[];
		try {
			c = cli(ctx.cwd);
			roots = sessionRoots(ctx);
		} catch (e) {
			warnMissing(ctx, e);
			return chain;
		}
		const first = !dbExists(c);
		return enqueue(async () => {
			if (first) tell(ctx, `sessiondb: importing your pi sessions (${roots.join(", ")}) for /search; this runs in the background`, "info");
			const started = Date.now();
			let sessions = 0;
			for (const root of roots) {
				try {
					const s = await runJson<Json>(c, ["sync", "--sessions-dir", root], { timeoutMs: SYNC_TIMEOUT, okCodes: [1] });
					sessions += Number(s.new ?? 0);
					if (Number(s.failures ?? 0) > 0) warn(ctx, `sessiondb: ${s.failures} session file(s) in ${root} could not be synced (run \`sessiondb sync --sessions-dir ${root}\` to see why)`);
				} catch (e) {
					warnMissing(ctx, e);
					return;
				}
			}
			if (first) {
				// Build the search index now rather than on the first search.
				await run(c, ["index"], { timeoutMs: SYNC_TIMEOUT }).catch(() => {});
				tell(ctx, `sessiondb: ${sessions} sessions imported in ${((Date.now() - started) / 1000).toFixed(1)} s; try /search`, "info");
			}
		});
	}

	/** Syncs the current session's file (the conversation in progress); requests made while one waits share it. */
	function syncCurrent(ctx: ExtensionContext): Promise<void> {
		if (fileSyncQueued) return fileSyncQueued;
		let file: string | undefined;
		let roots: string[];
		let c: Cli;
		try {
			file = ctx.sessionManager.getSessionFile();
			roots = sessionRoots(ctx);
			c = cli(ctx.cwd);
		} catch (e) {
			warnMissing(ctx, e);
			return chain;
		}
		if (!file || !existsSync(file)) return chain; // pi writes the file once the first reply is in
		const root = roots.find((r) => isBelow(file as string, r)) ?? dirname(file);
		const p = enqueue(async () => {
			fileSyncQueued = null;
			try {
				await run(c, ["sync", "--sessions-dir", root, file as string, "--json"], { timeoutMs: FILE_SYNC_TIMEOUT, okCodes: [1] });
			} catch (e) {
				warnMissing(ctx, e);
			}
		});
		fileSyncQueued = p;
		return p;
	}

	let startTimer: ReturnType<typeof setTimeout> | undefined;
	pi.on("session_start", async (_event, ctx) => {
		// Not awaited, and a moment later: pi finishes starting before a sync walks the folders
		// (a walk of 10,000 files takes a core for a few hundred ms).
		startTimer = setTimeout(() => void syncAll(ctx), STARTUP_DELAY);
		startTimer.unref?.();
	});

	pi.on("turn_end", async (_event, ctx) => {
		void syncCurrent(ctx);
	});

	pi.on("session_shutdown", async (_event, ctx) => {
		clearTimeout(startTimer);
		// Wait a little for the last entries to land, never longer.
		await Promise.race([syncCurrent(ctx), new Promise((r) => setTimeout(r, SHUTDOWN_WAIT).unref())]);
	});

	/** Before reading: the conversation in progress is in the database (bounded wait). */
	async function current(ctx: ExtensionContext) {
		await Promise.race([syncCurrent(ctx), new Promise((r) => setTimeout(r, FILE_SYNC_TIMEOUT).unref())]);
	}

	async function search(ctx: ExtensionContext, c: Cli, query: string, o: { cwd?: string; role?: string; since?: string; limit: number; signal?: AbortSignal }) {
		const args = ["search", query, "--limit", String(o.limit)];
		if (o.cwd) args.push("--cwd", o.cwd);
		if (o.role) args.push("--role", o.role);
		if (o.since) args.push("--since", o.since);
		const hits = await runJson<Hit[]>(c, args, { timeoutMs: SEARCH_TIMEOUT, signal: o.signal, okCodes: [1] });
		return hits.filter((h) => !isOwnEcho(ctx, h));
	}

	/** A search that finds its own query: this package's tool calls and results (they repeat the query and earlier hits). */
	function isOwnEcho(ctx: ExtensionContext, h: Hit): boolean {
		if (/^session_(search|read) /.test(h.snippet)) return true;
		if (h.sessionId !== ctx.sessionManager.getSessionId() || !h.entryId) return false;
		const e = ctx.sessionManager.getEntry(h.entryId) as Json | undefined;
		const m = (e?.type === "message" ? e.message : undefined) as Json | undefined;
		if (!m) return false;
		if (m.role === "toolResult") return OWN_TOOLS.includes(String(m.toolName));
		if (m.role !== "assistant" || !Array.isArray(m.content)) return false;
		// An assistant message that calls one of these tools and does not say the words itself.
		const parts = m.content as Json[];
		const callsOwn = parts.some((p) => p.type === "toolCall" && OWN_TOOLS.includes(String(p.name)));
		const needle = h.snippet.match(/\[([^\]]+)\]/)?.[1]?.toLowerCase();
		const says = parts.some((p) => p.type === "text" && typeof p.text === "string" && (!needle || p.text.toLowerCase().includes(needle)));
		return callsOwn && !says;
	}

	pi.registerTool({
		name: "session_search",
		label: "Search past sessions",
		description:
			"Full-text search over every past pi session of every project (user and assistant messages, thinking, tool calls and results, summaries), " +
			"newest conversation included. Use it when the user refers to earlier work (\"like we did last week\", \"the bug we fixed in the other repo\"), " +
			"asks what was decided about something, or when you need a command, error message or design choice from a previous session. " +
			"Returns snippets (match in [brackets]) with session_id, entry_id, project and time; read one with session_read. " +
			"The query matches as a case-insensitive substring: use distinctive words or identifiers, not a question.",
		promptSnippet: "Search every past pi session (all projects) for text",
		promptGuidelines: [
			"Use session_search when the user refers to earlier sessions or past decisions, then session_read on the best hit before answering from it.",
		],
		parameters: Type.Object({
			query: Type.String({ description: "Text to find (a substring, case-insensitive): a distinctive word, identifier, error message or phrase" }),
			project: Type.Optional(Type.String({ description: "Only this project: its directory path, or part of its folder name" })),
			role: Type.Optional(Type.String({ description: `Only entries of this role or type: ${ROLES.join(", ")}` })),
			since: Type.Optional(Type.String({ description: "Only entries since an ISO date (2026-01-31) or an age (7d, 12h, 30m)" })),
			limit: Type.Optional(Type.Number({ description: `Maximum hits, 1 to ${MAX_LIMIT} (default 10)` })),
			include_current: Type.Optional(Type.Boolean({ description: "Also search this session (default false: you already see it)" })),
		}),
		async execute(_id, params, signal, _onUpdate, ctx) {
			const query = params.query.trim();
			if (!query) throw new ToolInputError("session_search: query is empty; give a word or phrase to find");
			if (!/[\p{L}\p{N}]/u.test(query)) {
				throw new ToolInputError(`session_search: query ${JSON.stringify(query)} has no letters or digits; search for words, identifiers or messages from the session you want`);
			}
			const limit = params.limit ?? 10;
			if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
				throw new ToolInputError(`session_search: limit must be a whole number from 1 to ${MAX_LIMIT} (got ${params.limit})`);
			}
			if (params.role !== undefined && !ROLES.includes(params.role)) {
				throw new ToolInputError(`session_search: role must be one of ${ROLES.join(", ")} (got ${JSON.stringify(params.role)})`);
			}
			const c = cli(ctx.cwd);
			await current(ctx);
			// A path filters in the database; a name is matched against the project folder here,
			// as are hits of this session, so ask for more than the limit.
			const project = params.project?.trim();
			const byPath = project && (isAbsolute(project) || project.startsWith("~") || project.startsWith("."));
			const here = ctx.sessionManager.getSessionId();
			const filtering = (project && !byPath) || !params.include_current;
			const raw = await search(ctx, c, query, {
				cwd: byPath ? expandHome(project, ctx.cwd) : undefined,
				role: params.role,
				since: params.since,
				limit: filtering ? Math.min(limit * 5 + 20, 500) : limit,
				signal,
			});
			const needle = project && !byPath ? project.toLowerCase() : undefined;
			const hits = raw
				.filter((h) => params.include_current || h.sessionId !== here)
				.filter((h) => !needle || (h.cwd ?? "").toLowerCase().split(/[\\/]/).some((part) => part.includes(needle)))
				.slice(0, limit);
			return { content: [{ type: "text", text: hitsForModel(query, hits) }], details: { hits } };
		},
	});

	pi.registerTool({
		name: "session_read",
		label: "Read a past session",
		description:
			"Read messages of a past pi session found with session_search: with entry_id, the messages before and after that entry on its branch " +
			"(the entry marked >>); without entry_id, the end of the session's current context (what the model saw last). Output is bounded; " +
			"use before/after to widen or narrow the window.",
		promptSnippet: "Read the messages around an entry of a past pi session",
		parameters: Type.Object({
			session_id: Type.String({ description: "session_id from session_search (or a unique prefix of 4+ characters)" }),
			entry_id: Type.Optional(Type.String({ description: "entry_id from session_search: read around this entry" })),
			before: Type.Optional(Type.Number({ description: `Entries before the hit, 0 to ${MAX_WINDOW} (default 6)` })),
			after: Type.Optional(Type.Number({ description: `Entries after the hit, 0 to ${MAX_WINDOW} (default 6)` })),
		}),
		async execute(_id, params, signal, _onUpdate, ctx) {
			const sid = params.session_id.trim();
			if (!sid) throw new ToolInputError("session_read: session_id is empty; take one from a session_search result");
			const window = (v: number | undefined, name: string) => {
				const n = v ?? 6;
				if (!Number.isInteger(n) || n < 0 || n > MAX_WINDOW) throw new ToolInputError(`session_read: ${name} must be a whole number from 0 to ${MAX_WINDOW} (got ${v})`);
				return n;
			};
			const before = window(params.before, "before");
			const after = window(params.after, "after");
			const c = cli(ctx.cwd);
			await current(ctx);
			const opts = { timeoutMs: READ_TIMEOUT, signal };
			const missing = (e: unknown) => {
				const m = (e as Error).message;
				if (/no session/.test(m)) {
					return new ToolInputError(`session_read: ${m}: the session is not in the sessiondb database (deleted, or never synced). Search again with session_search.`);
				}
				return e;
			};
			if (!params.entry_id) {
				const p = await runJson<{ messages?: Json[] }>(c, ["context", sid], opts).catch((e) => Promise.reject(missing(e)));
				const msgs = (p.messages ?? []).map((m) => renderMessage(m, 2000));
				const { text, dropped } = fit(msgs.slice(-(before + after + 1)), READ_BUDGET, true);
				const head = `Session ${sid}: last ${msgs.length - Math.max(0, msgs.length - (before + after + 1)) - dropped} of ${msgs.length} context messages`;
				return { content: [{ type: "text", text: `${head}\n\n${text}` }], details: { sessionId: sid, messages: msgs.length } };
			}
			const entryId = params.entry_id.trim();
			const active = await runJson<Json[]>(c, ["branch", sid], opts).catch((e) => Promise.reject(missing(e)));
			let path = active;
			let at = active.findIndex((e) => e.id === entryId);
			let note = "";
			if (at < 0) {
				// Not on the active branch: the path to it from the root (an abandoned branch).
				path = await runJson<Json[]>(c, ["branch", sid, "--from", entryId], opts).catch((e) => Promise.reject(missing(e)));
				at = path.findIndex((e) => e.id === entryId);
				if (at < 0) throw new ToolInputError(`session_read: session ${sid} has no entry ${entryId}; take entry ids from session_search`);
				note = " (on a branch the session later left; nothing after it is shown)";
			}
			const shown: string[] = [];
			// Walk outwards from the hit, counting only entries with something to show.
			const pick = (from: number, step: number, n: number) => {
				const out: string[] = [];
				for (let i = from; i >= 0 && i < path.length && out.length < n; i += step) {
					const r = renderEntry(path[i], 1500);
					if (r) out.push(r);
				}
				return step < 0 ? out.reverse() : out;
			};
			const hit = renderEntry(path[at], 4000) ?? `(${String(path[at].type)} entry)`;
			const pre = pick(at - 1, -1, before);
			const post = pick(at + 1, 1, after);
			const half = Math.floor((READ_BUDGET - hit.length) / 2);
			const preFit = fit(pre, half, true);
			const postFit = fit(post, half, false);
			shown.push(
				`Session ${sid}, entry ${entryId} (marked >>)${note}; ${path.length} entries on this path, ${at} before it.`,
				...(preFit.dropped ? [`(${preFit.dropped} earlier entries left out for size)`] : []),
				...(preFit.text ? [preFit.text] : []),
				`>> ${hit}`,
				...(postFit.text ? [postFit.text] : []),
				...(postFit.dropped ? [`(${postFit.dropped} later entries left out for size)`] : []),
			);
			return { content: [{ type: "text", text: shown.join("\n\n") }], details: { sessionId: sid, entryId } };
		},
	});

	/** Commands report problems as notices; they never throw into pi. */
	function guarded(handler: (args: string, ctx: ExtensionCommandContext) => Promise<void>) {
		return async (args: string, ctx: ExtensionCommandContext) => {
			try {
				await handler(args, ctx);
			} catch (e) {
				ctx.ui.notify(e instanceof SessiondbMissing ? e.message : `sessiondb: ${(e as Error).message}`, "error");
			}
		};
	}

	pi.registerCommand("search", {
		description: "Search every past session (all projects); pick a hit to resume that session there",
		handler: guarded(async (args, ctx) => {
			const query = args.trim() || (await ctx.ui.input("Search past sessions:", "words, identifiers, error messages"))?.trim();
			if (!query) return;
			const c = cli(ctx.cwd);
			await current(ctx);
			const hits = await search(ctx, c, query, { limit: 30 });
			if (hits.length === 0) {
				ctx.ui.notify(`sessiondb: nothing matches "${query}"`, "info");
				return;
			}
			const now = Date.now();
			const labels = hits.map((h, i) => hitLabel(h, i, now));
			const choice = await ctx.ui.select(`"${query}": ${hits.length} match${hits.length === 1 ? "" : "es"} (age, project, role, text)`, labels);
			if (choice === undefined) return;
			const hit = hits[labels.indexOf(choice)];
			if (!hit) return;
			await resume(ctx, hit);
		}),
	});

	/** Opens the hit's session and, when the user wants it, moves to the hit the way /tree does. */
	async function resume(ctx: ExtensionCommandContext, hit: Hit) {
		const goTo = async (c: ExtensionCommandContext) => {
			const entryId = hit.entryId;
			if (!entryId || entryId === c.sessionManager.getLeafId() || !c.sessionManager.getEntry(entryId)) return;
			const where = await c.ui.select("Resume where?", [
				"At the end of the session",
				"At the hit (like /tree: new messages branch from there)",
			]);
			if (where?.startsWith("At the hit")) await c.navigateTree(entryId);
		};
		if (hit.sessionId === ctx.sessionManager.getSessionId()) {
			await goTo(ctx);
			return;
		}
		if (!existsSync(hit.sessionFile)) {
			ctx.ui.notify(
				`sessiondb: the file of session ${hit.sessionId} is gone (${hit.sessionFile}); \`sessiondb export ${hit.sessionId} -o FILE\` writes it back from the database`,
				"warning",
			);
			return;
		}
		await ctx.switchSession(hit.sessionFile, { withSession: goTo });
	}

	pi.registerCommand("usage", {
		description: `Token and cost totals of every session: /usage [${USAGE_GROUPS.join("|")}] (default day)`,
		getArgumentCompletions: (prefix: string) => {
			const items = USAGE_GROUPS.filter((g) => g.startsWith(prefix)).map((g) => ({ value: g, label: g }));
			return items.length > 0 ? items : null;
		},
		handler: guarded(async (args, ctx) => {
			const by = args.trim() || "day";
			if (!USAGE_GROUPS.includes(by)) {
				ctx.ui.notify(`sessiondb: /usage groups by one of ${USAGE_GROUPS.join(", ")} (got "${by}")`, "error");
				return;
			}
			const c = cli(ctx.cwd);
			await current(ctx);
			const now = new Date();
			const dayStart = new Date(now.getFullYear(), now.getMonth(), now.getDate()).toISOString();
			const monthStart = new Date(now.getFullYear(), now.getMonth(), 1).toISOString();
			// The by-day table covers the last 30 days, by-week and by-month everything.
			const range = by === "day" ? ["--since", "30d"] : [];
			const opts = { timeoutMs: READ_TIMEOUT };
			type Stats = { groups: Totals[]; total: Totals };
			const [table, today, month] = await Promise.all([
				runJson<Stats>(c, ["stats", "--by", by, ...range], opts),
				runJson<Stats>(c, ["stats", "--since", dayStart], opts),
				runJson<Stats>(c, ["stats", "--since", monthStart], opts),
			]);
			ctx.ui.notify(usageTable(by, table.groups, table.total, today.total, month.total), "info");
		}),
	});
}

function isBelow(path: string, dir: string): boolean {
	const r = relative(resolve(dir), resolve(path));
	return r === "" || (!r.startsWith("..") && !isAbsolute(r));
}

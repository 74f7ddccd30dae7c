// sessiondb inside pi: keeps the sessiondb database in step with pi's sessions, and gives the
// user /search, /usage and /move and the model session_search and session_read.
//
// Everything goes through the sessiondb CLI's --json output, run asynchronously with a
// timeout. A missing binary or a failing sync is a warning, never an exception in pi.
//
// Under the `sessiondb-pi` launcher (SESSIONDB_PI_LAUNCHER=1), pi's sessions are written to
// the database as they happen: the package then uses the launcher's database
// (SESSIONDB_PATH) and runs none of its syncs.
import { existsSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import {
	type Cli,
	type Paths,
	paths,
	type Progress,
	expandHome,
	findBinary,
	HeldSync,
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
/** How long /search, /usage and the tools wait for a sync under way (the `waitSeconds` setting). */
const ANSWER_WAIT = 15_000;

type Json = Record<string, unknown>;

/** Session folders named by pi's settings and by the session open (`sessionRoots`). */
interface OwnRoots {
	listed: string[];
	current?: string;
}

/** A tool error the model reads: thrown from execute(), pi reports it as an error result. */
class ToolInputError extends Error {}

/** The sync of every session folder while it runs, and how far it got. */
interface FullSync {
	promise: Promise<void>;
	/** No database before it: the first import (asked of the binary as the sync starts). */
	first: Promise<boolean>;
	/** The last `--progress-json` line, counted over every folder synced so far. */
	phase: string;
	done: number;
	total: number;
}

export default function sessiondb(pi: ExtensionAPI) {
	/** Under the sessiondb-pi launcher: its database, and no syncs of ours. */
	const launcher = process.env.SESSIONDB_PI_LAUNCHER === "1";
	/** Syncs run one at a time, in order; the chain never rejects. */
	let chain: Promise<void> = Promise.resolve();
	/** A sync of the current file is queued and has not started: another request can ride on it. */
	let fileSyncQueued: Promise<void> | null = null;
	/** The startup sync of every folder, while it runs. */
	let full: FullSync | null = null;
	/** The startup sync was started (by its timer, or by a question asked before it). */
	let startedFull = false;
	let warnedMissing = false;
	/** The `sync --stdin` process the per-turn syncs go through, for one binary, database and folder. */
	let held: HeldSync | null = null;

	function settings(): SessiondbSettings {
		const s = (pi.getSettings() as Json).sessiondb;
		return s && typeof s === "object" ? (s as SessiondbSettings) : {};
	}

	function cli(cwd: string): Cli {
		const s = settings();
		const found = findBinary(s, cwd);
		if ("missing" in found) throw new SessiondbMissing(found.missing);
		// The launcher's database is the one pi writes to: it wins over the setting.
		if (launcher && process.env.SESSIONDB_PATH) return { bin: found.bin, db: process.env.SESSIONDB_PATH };
		return { bin: found.bin, db: s.db ? expandHome(s.db, cwd) : undefined };
	}

	/** pi's folders as the binary finds them, asked once per binary and database (they do not change while pi runs). */
	let known: { key: string; paths: Promise<Paths> } | null = null;
	function folders(c: Cli): Promise<Paths> {
		const key = `${c.bin}\0${c.db ?? ""}`;
		let asked = known;
		if (asked?.key !== key) {
			const fresh = { key, paths: paths(c) };
			fresh.paths.catch(() => {
				if (known === fresh) known = null; // asked again next time
			});
			known = asked = fresh;
		}
		return asked.paths;
	}

	/** The session folders pi's settings and this session add (read while the context is current). */
	function ownRoots(ctx: ExtensionContext): OwnRoots {
		const listed: string[] = [];
		const custom = (pi.getSettings() as Json).sessionDir;
		if (typeof custom === "string" && custom) listed.push(expandHome(custom, ctx.cwd));
		for (const d of settings().sessionDirs ?? []) listed.push(expandHome(d, ctx.cwd));
		return { listed, current: ctx.sessionManager.getSessionDir() || undefined };
	}

	/** pi's session folders: the sessions root and the sessions dir as the binary finds them (pi's rules, kept in Rust), the sessionDir setting, extra configured ones, and the current session's folder when it is elsewhere (`--session-dir`). */
	function sessionRoots(p: Paths, own: OwnRoots): string[] {
		const roots: string[] = [p.sessionsRoot, p.sessionsDir, ...own.listed];
		const { current } = own;
		if (current && !roots.some((r) => isBelow(current, r))) roots.push(resolve(current));
		return [...new Set(roots)].filter((r) => existsSync(r));
	}

	function enqueue(job: () => Promise<void>): Promise<void> {
		// Never rejects: an unhandled rejection would take pi down.
		chain = chain.then(job).catch(() => {});
		return chain;
	}

	/** Runs `job` in the queue of syncs; its result or error is the caller's (the chain goes on). */
	function inQueue<T>(job: () => Promise<T>): Promise<T> {
		const p = chain.then(job);
		chain = p.then(
			() => {},
			() => {},
		);
		return p;
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
		startedFull = true;
		if (full) return full.promise;
		let c: Cli;
		let own: OwnRoots;
		try {
			c = cli(ctx.cwd);
			own = ownRoots(ctx);
		} catch (e) {
			warnMissing(ctx, e);
			return chain;
		}
		// Asked now, before a sync can create the database.
		const now = paths(c);
		const state: FullSync = { promise: chain, first: now.then((p) => !p.exists, () => false), phase: "sync", done: 0, total: 0 };
		state.promise = enqueue(async () => {
			let roots: string[];
			try {
				roots = sessionRoots(await now, own);
			} catch (e) {
				warnMissing(ctx, e);
				return;
			}
			const first = await state.first;
			if (first) tell(ctx, `sessiondb: importing your pi sessions (${roots.join(", ")}) for /search; this runs in the background`, "info");
			const started = Date.now();
			let sessions = 0;
			let before = 0; // files of the folders already synced
			for (const root of roots) {
				const onProgress = (p: Progress) => {
					state.phase = p.progress;
					if (p.progress === "index") [state.done, state.total] = [p.done, p.total];
					else [state.done, state.total] = [before + p.done, before + p.total];
				};
				try {
					const s = await runJson<Json>(c, ["sync", "--sessions-dir", root, "--progress-json"], { timeoutMs: SYNC_TIMEOUT, okCodes: [1], onProgress });
					sessions += Number(s.new ?? 0);
					before += Number(s.files_scanned ?? 0);
					if (Number(s.failures ?? 0) > 0) warn(ctx, `sessiondb: ${s.failures} session file(s) in ${root} could not be synced (run \`sessiondb sync --sessions-dir ${root}\` to see why)`);
				} catch (e) {
					warnMissing(ctx, e);
					return;
				}
			}
			if (first) {
				// Fold the sessions' texts for `list` now rather than on the first search.
				state.phase = "index";
				await run(c, ["index"], { timeoutMs: SYNC_TIMEOUT }).catch(() => {});
				tell(ctx, `sessiondb: ${sessions} sessions imported in ${((Date.now() - started) / 1000).toFixed(1)} s; try /search`, "info");
			}
		}).finally(() => {
			if (full === state) full = null;
		});
		full = state;
		return state.promise;
	}

	/** Syncs the current session's file (the conversation in progress); requests made while one waits share it. */
	function syncCurrent(ctx: ExtensionContext): Promise<void> {
		if (fileSyncQueued) return fileSyncQueued;
		let file: string | undefined;
		let own: OwnRoots;
		let c: Cli;
		try {
			file = ctx.sessionManager.getSessionFile();
			own = ownRoots(ctx);
			c = cli(ctx.cwd);
		} catch (e) {
			warnMissing(ctx, e);
			return chain;
		}
		if (!file || !existsSync(file)) return chain; // pi writes the file once the first reply is in
		const p = enqueue(async () => {
			fileSyncQueued = null;
			try {
				const root = sessionRoots(await folders(c), own).find((r) => isBelow(file as string, r)) ?? dirname(file as string);
				if (!held || held.cli.bin !== c.bin || held.cli.db !== c.db || held.root !== root) {
					held?.close();
					held = new HeldSync(c, root);
				}
				if (held.unsupported) {
					await run(c, ["sync", "--sessions-dir", root, file as string, "--json"], { timeoutMs: FILE_SYNC_TIMEOUT, okCodes: [1] });
				} else {
					await held.sync([file as string], FILE_SYNC_TIMEOUT).catch(async (e) => {
						// A binary without --stdin: this sync, and the next ones, as a process each.
						if (!held?.unsupported) throw e;
						await run(c, ["sync", "--sessions-dir", root, file as string, "--json"], { timeoutMs: FILE_SYNC_TIMEOUT, okCodes: [1] });
					});
				}
			} catch (e) {
				warnMissing(ctx, e);
			}
		});
		fileSyncQueued = p;
		return p;
	}

	let startTimer: ReturnType<typeof setTimeout> | undefined;
	pi.on("session_start", async (_event, ctx) => {
		if (launcher) return; // the launcher keeps the database current itself
		// Not awaited, and a moment later: pi finishes starting before a sync walks the folders
		// (a walk of 10,000 files takes a core for a few hundred ms). A question asked before
		// then starts it at once (see `ready`).
		if (startedFull) return; // a session replaced (/new, /resume): the folders are synced
		clearTimeout(startTimer);
		startTimer = setTimeout(() => void syncAll(ctx), STARTUP_DELAY);
		startTimer.unref?.();
	});

	pi.on("turn_end", async (_event, ctx) => {
		if (!launcher) void syncCurrent(ctx);
	});

	pi.on("session_shutdown", async (_event, ctx) => {
		clearTimeout(startTimer);
		if (launcher) return;
		// Wait a little for the last entries to land, never longer.
		await Promise.race([syncCurrent(ctx), sleep(SHUTDOWN_WAIT)]);
		// The held sync process exits once it has answered what it was asked.
		held?.close();
		held = null;
	});

	/**
	 * Before reading: the startup sync (started now if its moment has not come) and the sync of
	 * the conversation in progress are through, waiting at most `waitSeconds`. Returns what to
	 * say first when a sync is still running then: its progress, and that what follows is
	 * what the database holds so far.
	 */
	async function ready(ctx: ExtensionContext): Promise<string | undefined> {
		if (launcher) return undefined;
		if (!startedFull) {
			clearTimeout(startTimer);
			void syncAll(ctx);
		}
		const syncs = Promise.all([full?.promise, syncCurrent(ctx)]);
		const wait = Number(settings().waitSeconds);
		await Promise.race([syncs, sleep(Number.isFinite(wait) && wait >= 0 ? wait * 1000 : ANSWER_WAIT)]);
		const f = full;
		if (!f) return undefined;
		const n = (x: number) => x.toLocaleString("en-US");
		const what =
			f.total === 0
				? "listing the session files"
				: f.phase === "index"
					? `indexing ${n(f.done)} of ${n(f.total)} texts`
					: `importing ${n(f.done)} of ${n(f.total)} files`;
		return `sessiondb: ${(await f.first) ? "the first import of your pi sessions" : "a sync of your pi sessions"} is still running (${what}); results so far:`;
	}

	/** True while the first import runs and has not created the database yet. */
	async function noDatabaseYet(c: Cli): Promise<boolean> {
		if (!full || !(await full.first)) return false;
		// A binary that cannot answer: the search that follows says why.
		return paths(c).then((p) => !p.exists, () => false);
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
			"Returns snippets (every query term in [brackets]) with sessionId, entryId, project and time; read one with session_read. " +
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
			includeCurrent: Type.Optional(Type.Boolean({ description: "Also search this session (default false: you already see it)" })),
		}),
		// Calls made with the names of earlier versions (include_current) still work.
		prepareArguments: (args: unknown) => camelCaseArguments(args, { include_current: "includeCurrent" }) as never,
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
			const note = await ready(ctx);
			// A path filters in the database; a name is matched against the project folder here,
			// as are hits of this session, so ask for more than the limit.
			const project = params.project?.trim();
			const byPath = project && (isAbsolute(project) || project.startsWith("~") || project.startsWith("."));
			const here = ctx.sessionManager.getSessionId();
			const filtering = (project && !byPath) || !params.includeCurrent;
			const raw = (await noDatabaseYet(c)) ? [] : await search(ctx, c, query, {
				cwd: byPath ? expandHome(project, ctx.cwd) : undefined,
				role: params.role,
				since: params.since,
				limit: filtering ? Math.min(limit * 5 + 20, 500) : limit,
				signal,
			});
			const needle = project && !byPath ? project.toLowerCase() : undefined;
			const hits = raw
				.filter((h) => params.includeCurrent || h.sessionId !== here)
				.filter((h) => !needle || (h.cwd ?? "").toLowerCase().split(/[\\/]/).some((part) => part.includes(needle)))
				.slice(0, limit);
			const text = hitsForModel(query, hits);
			return { content: [{ type: "text", text: note ? `${note}\n${text}` : text }], details: { hits, importing: note !== undefined } };
		},
	});

	pi.registerTool({
		name: "session_read",
		label: "Read a past session",
		description:
			"Read messages of a past pi session found with session_search: with entryId, the messages before and after that entry on its branch " +
			"(the entry marked >>); without entryId, the end of the session's current context (what the model saw last). Output is bounded; " +
			"use before/after to widen or narrow the window.",
		promptSnippet: "Read the messages around an entry of a past pi session",
		parameters: Type.Object({
			sessionId: Type.String({ description: "sessionId from session_search (or a unique prefix of 4+ characters)" }),
			entryId: Type.Optional(Type.String({ description: "entryId from session_search: read around this entry" })),
			before: Type.Optional(Type.Number({ description: `Entries before the hit, 0 to ${MAX_WINDOW} (default 6)` })),
			after: Type.Optional(Type.Number({ description: `Entries after the hit, 0 to ${MAX_WINDOW} (default 6)` })),
		}),
		// Calls made with the names of earlier versions (session_id, entry_id) still work.
		prepareArguments: (args: unknown) => camelCaseArguments(args, { session_id: "sessionId", entry_id: "entryId" }) as never,
		async execute(_id, params, signal, _onUpdate, ctx) {
			const sid = params.sessionId.trim();
			if (!sid) throw new ToolInputError("session_read: sessionId is empty; take one from a session_search result");
			const window = (v: number | undefined, name: string) => {
				const n = v ?? 6;
				if (!Number.isInteger(n) || n < 0 || n > MAX_WINDOW) throw new ToolInputError(`session_read: ${name} must be a whole number from 0 to ${MAX_WINDOW} (got ${v})`);
				return n;
			};
			const before = window(params.before, "before");
			const after = window(params.after, "after");
			const c = cli(ctx.cwd);
			const note = await ready(ctx);
			const opts = { timeoutMs: READ_TIMEOUT, signal };
			const missing = (e: unknown) => {
				const m = (e as Error).message;
				if (/no session|no database|does not exist/.test(m)) {
					const why = note ? `${note.replace(/; results so far:$/, "")}: it may not be imported yet` : "deleted, or never synced";
					return new ToolInputError(`session_read: ${m}: the session is not in the sessiondb database (${why}). Search again with session_search.`);
				}
				return e;
			};
			const withNote = (text: string) => (note ? `${note}\n${text}` : text);
			if (!params.entryId) {
				const p = await runJson<{ messages?: Json[] }>(c, ["context", sid], opts).catch((e) => Promise.reject(missing(e)));
				const msgs = (p.messages ?? []).map((m) => renderMessage(m, 2000));
				const { text, dropped } = fit(msgs.slice(-(before + after + 1)), READ_BUDGET, true);
				const head = `Session ${sid}: last ${msgs.length - Math.max(0, msgs.length - (before + after + 1)) - dropped} of ${msgs.length} context messages`;
				return { content: [{ type: "text", text: withNote(`${head}\n\n${text}`) }], details: { sessionId: sid, messages: msgs.length } };
			}
			const entryId = params.entryId.trim();
			const active = await runJson<Json[]>(c, ["branch", sid], opts).catch((e) => Promise.reject(missing(e)));
			let path = active;
			let at = active.findIndex((e) => e.id === entryId);
			let left = "";
			if (at < 0) {
				// Not on the active branch: the path to it from the root (an abandoned branch).
				path = await runJson<Json[]>(c, ["branch", sid, "--from", entryId], opts).catch((e) => Promise.reject(missing(e)));
				at = path.findIndex((e) => e.id === entryId);
				if (at < 0) throw new ToolInputError(`session_read: session ${sid} has no entry ${entryId}; take entry ids from session_search`);
				left = " (on a branch the session later left; nothing after it is shown)";
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
				`Session ${sid}, entry ${entryId} (marked >>)${left}; ${path.length} entries on this path, ${at} before it.`,
				...(preFit.dropped ? [`(${preFit.dropped} earlier entries left out for size)`] : []),
				...(preFit.text ? [preFit.text] : []),
				`>> ${hit}`,
				...(postFit.text ? [postFit.text] : []),
				...(postFit.dropped ? [`(${postFit.dropped} later entries left out for size)`] : []),
			);
			return { content: [{ type: "text", text: withNote(shown.join("\n\n")) }], details: { sessionId: sid, entryId } };
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
			const note = await ready(ctx);
			const hits = (await noDatabaseYet(c)) ? [] : await search(ctx, c, query, { limit: 30 });
			if (hits.length === 0) {
				ctx.ui.notify(`${note ? `${note} none yet.\n` : ""}sessiondb: nothing matches "${query}"`, "info");
				return;
			}
			const now = Date.now();
			const labels = hits.map((h, i) => hitLabel(h, i, now));
			const title = `"${query}": ${hits.length} match${hits.length === 1 ? "" : "es"} (age, project, role, text)`;
			const choice = await ctx.ui.select(note ? `${note}\n${title}` : title, labels);
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

	pi.registerCommand("move", {
		description: "Move this session to another project folder (a worktree, a moved checkout): /move DIR; pi continues it there",
		handler: guarded(async (args, ctx) => {
			const arg = args.trim() || (await ctx.ui.input("Move this session to the project folder:", "a directory path"))?.trim();
			if (!arg) return;
			const dir = expandHome(arg, ctx.cwd);
			if (!existsSync(dir)) {
				ctx.ui.notify(`sessiondb: ${dir} does not exist; /move takes the project folder the session belongs to from now on`, "error");
				return;
			}
			const id = ctx.sessionManager.getSessionId();
			if (launcher) {
				// The launcher's SessionManager writes this session to the database as it goes: moving
				// it from under that writer would split it.
				ctx.ui.notify(`sessiondb: under sessiondb-pi, quit first, then run \`sessiondb move ${id} ${dir}\` and continue with \`sessiondb-pi --session ${id}\` in ${dir}`, "warning");
				return;
			}
			const file = ctx.sessionManager.getSessionFile();
			if (!file || !existsSync(file)) {
				ctx.ui.notify("sessiondb: this session has no file yet (pi writes it with the first reply): nothing to move; start it in the other folder instead", "info");
				return;
			}
			// A move under a running turn would lose the turn's last entries to the old path.
			await ctx.waitForIdle();
			const c = cli(ctx.cwd);
			// The database learns this session's newest entries first (the move finds it by its file).
			await syncCurrent(ctx);
			type Moved = { sessionId: string; from: string; to: string; cwd: string; fileMoved: boolean };
			// In the sync queue: no sync reads the file while it moves. Its folder is the binary's
			// default, pi's sessions root.
			const moved = await inQueue(() => runJson<Moved>(c, ["move", file, dir], { timeoutMs: SYNC_TIMEOUT }));
			const to = moved.to;
			if (moved.from === to) {
				ctx.ui.notify(`sessiondb: this session is already in ${moved.cwd}`, "info");
				return;
			}
			const done = `sessiondb: moved this session to ${moved.cwd} (${to})`;
			// pi appends to the file it opened: it must continue from the moved one, in its folder.
			const switched = await ctx
				.switchSession(to, { withSession: async (next) => next.ui.notify(`${done}; continuing it there`, "info") })
				.catch((e: Error) => ({ cancelled: true, error: e }));
			if (switched.cancelled) {
				const why = "error" in switched ? `: ${(switched.error as Error).message}` : "";
				ctx.ui.notify(`${done}, but pi could not switch to it${why}. Quit and continue it with \`pi --session ${to}\` (or \`pi -c\` in ${moved.cwd})`, "warning");
			}
		}),
	});

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
			const note = await ready(ctx);
			if (await noDatabaseYet(c)) {
				ctx.ui.notify(`${note} nothing imported yet.`, "info");
				return;
			}
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
			const text = usageTable(by, table.groups, table.total, today.total, month.total);
			ctx.ui.notify(note ? `${note}\n${text}` : text, "info");
		}),
	});
}

function sleep(ms: number): Promise<void> {
	return new Promise((r) => setTimeout(r, ms).unref());
}

/** Tool arguments with the names earlier versions used (snake_case) renamed, unless the new name is there too. */
function camelCaseArguments(args: unknown, names: Record<string, string>): unknown {
	if (!args || typeof args !== "object" || Array.isArray(args)) return args;
	const out: Json = { ...(args as Json) };
	for (const [old, now] of Object.entries(names)) {
		if (old in out) {
			if (!(now in out)) out[now] = out[old];
			delete out[old];
		}
	}
	return out;
}

function isBelow(path: string, dir: string): boolean {
	const r = relative(resolve(dir), resolve(path));
	return r === "" || (!r.startsWith("..") && !isAbsolute(r));
}

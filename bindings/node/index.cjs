// sessiondb for Node: pi 1.6.0's SessionManager over a sessiondb (SQLite) database.
//
// Each SessionManager holds a native rpc server (src/lib.rs) whose current session is this
// instance; calls go over as JSON and answers come back through JSON.parse, so entries are
// exactly what JavaScript makes of the stored lines. Parsed lines are immutable: each is parsed
// once and kept by its storage key; getEntries() reads only lines written since, and getBranch()
// takes the path from Rust (branchSteps) and parses only lines not seen yet.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { FileMirror, Folders } = require("./files.cjs");
const leases = require("./leases.cjs");
const platform = require("./platform.cjs");
const parses = require("./parse-count.cjs");
const { buildTree } = require("./tree.cjs");
const { forwarding } = require("./proxy.cjs");
const { ParsedEntries, SEQS } = require("./parsed.cjs");

const native = loadNative();

/** The addon: a local build (build.mjs), else this platform's prebuilt package (platform.cjs). */
function loadNative() {
	const file = platform.addonPath();
	if (!file) throw new Error(platform.missingMessage("native addon"));
	try {
		return require(file);
	} catch (e) {
		throw new Error(`sessiondb: cannot load the native addon ${file} (${e?.message ?? e}); reinstall sessiondb`);
	}
}

let database = null; // the database every new manager uses; chosen on first use
const lookups = new Map(); // database path -> Native serving findById/list/listAll
let filesMode = false; // pi's JSONL files are written beside the database (useFiles)
let leasesOn; // managers hold leases on the sessions they write (useLeases; unset: on)
const folders = new Map(); // database path -> Folders catching it up with the files

/** The catch-up of the current database, in files mode; null otherwise. */
function catchUp() {
	if (!filesMode) return null;
	const db = currentDatabase();
	let f = folders.get(db);
	if (!f) folders.set(db, (f = new Folders(native, db)));
	return f;
}

/** pi's session folder for `cwd`, or the explicit one. */
function folderOf(cwd, sessionDir) {
	return sessionDir ? path.resolve(sessionDir) : native.defaultSessionDir(path.resolve(cwd));
}

/** The folder holding every project's session folder (pi's getSessionsDir()). */
function sessionsRoot() {
	return native.sessionsRoot();
}

/** Before a session file is opened: the database catches up with it (a file gone: its folder). */
function catchUpFile(file) {
	const f = catchUp();
	if (!f || typeof file !== "string") return;
	const p = path.resolve(file);
	if (fs.existsSync(p)) f.file(p);
	else f.folder(path.dirname(p));
}

function currentDatabase() {
	if (database === null) {
		const p = process.env.SESSIONDB_PATH || native.defaultDatabase();
		native.checkDatabase(p);
		database = p;
	}
	return database;
}

/** Sends one call; returns pi's value or throws pi's error. */
function request(n, method, args) {
	let end = args.length;
	while (end > 0 && args[end - 1] === undefined) end--; // a missing trailing argument is pi's undefined
	const line = JSON.stringify({ id: 0, method, params: args.slice(0, end) });
	const response = JSON.parse(n.call(line));
	if (response.error) throw new Error(response.error.message);
	return response.result;
}

const undef = (v) => (v === null ? undefined : v);

/** A typed array of `size` elements (at least `a`'s) beginning with `a`'s. */
function grown(a, size) {
	const b = new a.constructor(size);
	b.set(a);
	return b;
}

/** `buf` itself when typed arrays can view it (8-byte aligned), else an aligned copy. */
function aligned(buf) {
	if (buf.byteOffset % 8 === 0) return buf;
	const copy = new Uint8Array(buf.length);
	copy.set(buf);
	return Buffer.from(copy.buffer);
}

/**
 * `{ upto, n, numbers, names, inLine: [key, ...] }` from the columns `entryUsages` writes
 * (src/lib.rs): `n` rows, `numbers` six per row (key, input, output, cacheRead, cacheWrite,
 * costTotal), `names` two per row (provider, model; null where absent); `upto` null when the
 * store knows nothing. The numbers stay one typed array: 44,000 rows as arrays of boxed numbers
 * were most of the footer's first read of HUGE's usages.
 */
function decodeUsages(buf) {
	buf = aligned(buf);
	const r = buf.readUInt32LE(0);
	const l = buf.readUInt32LE(4);
	const known = buf.readUInt32LE(8) === 1;
	const tableLen = buf.readUInt32LE(12);
	const upto = known ? buf.readDoubleLE(16) : null;
	let at = buf.byteOffset + 24;
	const numbers = new Float64Array(buf.buffer, at, 6 * r);
	at += 48 * r;
	const inLine = Array.from(new Float64Array(buf.buffer, at, l));
	at += 8 * l;
	const providers = new Uint16Array(buf.buffer, at, r);
	const models = new Uint16Array(buf.buffer, at + 2 * r, r);
	const table = [null, ...JSON.parse(buf.toString("utf8", buf.length - tableLen))];
	const names = new Array(2 * r);
	for (let i = 0; i < r; i++) {
		names[2 * i] = table[providers[i]];
		names[2 * i + 1] = table[models[i]];
	}
	return { upto, n: r, numbers, names, inLine };
}

/**
 * `{ keys, ids, types, roles }` (plain arrays, null where absent) from the columns `branchSteps`
 * and `entrySteps` write (src/lib.rs, `steps_bin`): typed arrays and one text of the ids, sliced,
 * where JSON.parse of a 100,000-step path spent most of its time interning the ids.
 */
function decodeSteps(buf) {
	return pickSteps(stepColumns(buf), null);
}

/** The columns of `steps_bin` as typed arrays over `buf`, and the ids' text, not yet picked. */
function stepColumns(buf) {
	buf = aligned(buf);
	const n = buf.readUInt32LE(0);
	const tableLen = buf.readUInt32LE(4);
	let at = buf.byteOffset + 8;
	const keyCol = new Float64Array(buf.buffer, at, n);
	at += 8 * n;
	const typeCol = new Uint16Array(buf.buffer, at, n);
	at += 2 * n;
	const roleCol = new Uint16Array(buf.buffer, at, n);
	at += 2 * n;
	const offsets = new Uint32Array(buf.buffer, at, n + 1);
	at += 4 * (n + 1);
	const nulls = new Uint8Array(buf.buffer, at, n);
	at += n;
	const end = buf.byteOffset + buf.length - tableLen;
	const text = buf.toString("utf8", at - buf.byteOffset, end - buf.byteOffset);
	const table = [null, ...JSON.parse(buf.toString("utf8", end - buf.byteOffset))];
	return { n, keyCol, typeCol, roleCol, offsets, nulls, text, table };
}

/** `{ keys, ids, types, roles }` of the steps at indexes `at` of `c` (all when null). */
function pickSteps(c, at) {
	const n = at === null ? c.n : at.length;
	const keys = new Array(n);
	const ids = new Array(n);
	const types = new Array(n);
	const roles = new Array(n);
	for (let i = 0; i < n; i++) {
		const j = at === null ? i : at[i];
		keys[i] = c.keyCol[j];
		ids[i] = c.nulls[j] === 1 ? null : c.text.slice(c.offsets[j], c.offsets[j + 1]);
		types[i] = c.table[c.typeCol[j]];
		roles[i] = c.table[c.roleCol[j]];
	}
	return { keys, ids, types, roles };
}

/**
 * `{ keys, ids, parents, parentAt, types, roles, times, labels }` (plain arrays, null where a
 * column is not a string; a time null for NaN, false when not read) from the columns `treeLinks`
 * writes (src/lib.rs): a parent is the id string of the link it names, not another copy of it;
 * `parentAt` (Int32Array) is that link's index (the last line holding the id), < 0 for none.
 */
function decodeTreeLinks(buf) {
	buf = aligned(buf);
	const n = buf.readUInt32LE(0);
	const stepsLen = buf.readUInt32LE(4);
	const textLen = buf.readUInt32LE(8);
	let at = 16;
	const timeCol = new Float64Array(buf.buffer, buf.byteOffset + at, n);
	at += 8 * n;
	const parentCol = new Int32Array(buf.buffer, buf.byteOffset + at, n);
	at += 4 * n;
	const timeState = new Uint8Array(buf.buffer, buf.byteOffset + at, n);
	at += n;
	at += (8 - (at % 8)) % 8;
	const { keys, ids, types, roles } = decodeSteps(buf.subarray(at, at + stepsLen));
	at += stepsLen;
	const rest = JSON.parse(buf.toString("utf8", at, at + textLen));
	const parents = new Array(n);
	const times = new Array(n);
	for (let i = 0; i < n; i++) {
		const p = parentCol[i];
		parents[i] = p >= 0 ? ids[p] : null;
		const state = timeState[i];
		times[i] = state === 0 ? timeCol[i] : state === 1 ? null : false;
	}
	for (const [i, parent] of rest.parents) parents[i] = parent;
	return { keys, ids, parents, parentAt: parentCol, types, roles, times, labels: rest.labels };
}

/** pi's SessionInfo from `listInfos`' row: dates cross as milliseconds (null: Invalid Date). */
function sessionInfo(info) {
	info.created = new Date(info.created ?? Number.NaN);
	info.modified = new Date(info.modified ?? Number.NaN);
	return info;
}

const TOKEN = Symbol("sessiondb.SessionManager");
const LAZY_BRANCH = 2000; // a longer branch is parsed as its entries are looked at
const WINDOW = 256; // entries read at once from a lazy branch
const USAGE_WINDOW = 4096; // lines scanned at once for usages their rows do not give (see #usageAt)
const STEPS_TAIL = 64; // steps read to extend the last path to an entry appended below it
const BATCH = 20000; // lines per crossing: one JSON text stays far below V8's string limit
// pi's footer (pi/footer.mjs) runs its usage totals through this method: see [USAGE_WALK].
const USAGE_WALK = Symbol.for("sessiondb.usageWalk");

class SessionManager {
	#n;
	#mirror = null; // { epoch, lastKey, entries }: the parsed session, see #sync
	#file = null; // FileMirror writing the session's JSONL file, in files mode
	#projection = null; // { epoch, leaf, count, entries, thinkingLevel, model }: see buildSessionProjection
	#parsed = null; // ParsedEntries (parsed.cjs): every entry parsed, by storage key, see #linesAt and #sync
	#steps = null; // { epoch, start, keys, ids, types }: the last path getBranch read, see #branchSteps
	#messages = null; // { epoch, byId }: messages appended by this manager, see #own
	#all = null; // { epoch, lazy }: a long session's entries, see getEntries
	#allSteps = null; // { epoch, columns }: a long session's entries read with a path, see #wholePath
	#usages = null; // { epoch, upto, rows, scanned, proxies }: entries' usages by key, see #usageAt
	#usageWalk = false; // the next getEntries() is a usage totals walk's: see [USAGE_WALK]

	/** @private Use the static constructors, as with pi's SessionManager. */
	constructor(token, n) {
		if (token !== TOKEN) throw new TypeError("SessionManager: use SessionManager.create/open/continueRecent/inMemory/forkFrom");
		this.#n = n;
	}

	static #start(method, args, how = "open") {
		if (leasesOn === undefined) SessionManager.useLeases(true);
		const n = new native.Native(currentDatabase());
		request(n, method, args);
		leases.track(native, n);
		const sm = new SessionManager(TOKEN, n);
		if (filesMode && method !== "inMemory") {
			sm.#file = new FileMirror(n);
			sm.#file.changed(sm.getSessionFile(), how);
		}
		return sm;
	}

	/** After a call that makes another session current: the file side follows. */
	#changed(how) {
		this.#file?.changed(this.getSessionFile(), how);
	}

	/** After an append: the file gets the new line. */
	#appended(result) {
		this.#file?.appended();
		return result;
	}

	/** list (cwd given) or listAll: pi's SessionInfo rows, without their texts. */
	static #infos(cwd, sessionDir) {
		return JSON.parse(SessionManager.#lookups().listInfos(cwd ?? null, sessionDir ?? null).toString());
	}
	static #lookups() {
		const db = currentDatabase();
		let n = lookups.get(db);
		if (!n) lookups.set(db, (n = new native.Native(db)));
		return n;
	}

	/** Selects the database for managers made from now on (default: $SESSIONDB_PATH, else the CLI's). */
	static useDatabase(file) {
		if (typeof file !== "string" || file === "") throw new TypeError("useDatabase(path): path must be a non-empty string");
		// A PostgreSQL URL is not a path: resolving it would name a local file "postgres:".
		const p = native.isServerUrl(file) ? file : path.resolve(file);
		native.checkDatabase(p);
		database = p;
	}

	/**
	 * Files mode (what `sessiondb-pi` runs by default): managers made from now on also write
	 * each session to pi's JSONL file as pi does, and lookups first catch the database up with
	 * files changed or deleted behind its back.
	 */
	static useFiles(on) {
		filesMode = Boolean(on);
	}

	/**
	 * One writer per session (on unless turned off before the first manager is made): a
	 * manager holds a lease on the session it writes, renewed while the process runs and
	 * released when it exits; opening a session another live process holds continues in a new
	 * session forked from it (pi's `--fork`), and says so on stderr (or to `onLeaseNotice`).
	 */
	static useLeases(on) {
		leasesOn = Boolean(on);
		native.holdLeases(leasesOn);
	}

	/** Who hears the line saying a session was forked because another process writes it. */
	static onLeaseNotice(handler) {
		leases.setNoticeHandler(handler);
	}

	/**
	 * Who holds the lease on the session at `file` (or with that id): `{ pid, host, start,
	 * sinceMs, ageMs, live, mine }`, `live` false for a holder gone (the next opener takes it
	 * over); undefined when no process holds it.
	 */
	static leaseHolder(file) {
		const text = native.leaseHolder(currentDatabase(), String(file));
		return text ? JSON.parse(text) : undefined;
	}

	/** Releases every lease this process holds now (a host about to be killed by a signal). */
	static releaseLeases() {
		leases.releaseAll();
	}

	/** Whether managers write pi's files too (see useFiles). */
	static usesFiles() {
		return filesMode;
	}

	/**
	 * Imports every session file below `dirs` that the database does not hold yet (the
	 * launcher's first start); with `progress`, a progress line on stderr. Returns the summary.
	 */
	static importFolders(dirs, progress = false) {
		return new Folders(native, currentDatabase()).importAll(dirs, progress);
	}

	/**
	 * Removes the session recorded at `file` from the database (pi's /resume delete of a
	 * session kept in the database only); true when there was one.
	 */
	static deleteSession(file) {
		return new Folders(native, currentDatabase()).remove(file);
	}

	/** The database file managers use now. */
	static databasePath() {
		return currentDatabase();
	}

	static create(cwd, sessionDir, options) {
		return SessionManager.#start("create", [cwd, sessionDir, options], "new");
	}
	static open(path, sessionDir, cwdOverride) {
		catchUpFile(path);
		return SessionManager.#start("open", [path, sessionDir, cwdOverride]);
	}
	static continueRecent(cwd, sessionDir) {
		catchUp()?.folder(folderOf(cwd, sessionDir));
		return SessionManager.#start("continueRecent", [cwd, sessionDir]);
	}
	static inMemory(cwd = process.cwd(), options, entries) {
		// pi's `preloadedFileEntries?.length`: an empty array is a new session.
		return SessionManager.#start("inMemory", [cwd, options, entries?.length ? entries : undefined]);
	}
	static forkFrom(sourcePath, targetCwd, sessionDir, options) {
		catchUpFile(sourcePath);
		return SessionManager.#start("forkFrom", [sourcePath, targetCwd, sessionDir, options], "fork");
	}
	static findById(cwd, id, sessionDir) {
		catchUp()?.folder(folderOf(cwd, sessionDir));
		return undef(request(SessionManager.#lookups(), "findById", [cwd, id, sessionDir]));
	}
	static async list(cwd, sessionDir, onProgress, signal) {
		signal?.throwIfAborted();
		catchUp()?.folder(folderOf(cwd, sessionDir));
		const infos = lazyTexts(SessionManager.#lookups(), SessionManager.#infos(cwd, sessionDir));
		report(infos, onProgress);
		return infos;
	}
	static async listAll(sessionDirOrOnProgress, onProgressOrSignal, signal) {
		const dir = typeof sessionDirOrOnProgress === "string" ? sessionDirOrOnProgress : undefined;
		const progress =
			typeof sessionDirOrOnProgress === "function"
				? sessionDirOrOnProgress
				: typeof onProgressOrSignal === "function"
					? onProgressOrSignal
					: undefined;
		const abortSignal =
			typeof sessionDirOrOnProgress === "string" || typeof onProgressOrSignal === "function"
				? signal
				: (onProgressOrSignal ?? signal);
		abortSignal?.throwIfAborted();
		catchUp()?.folder(dir ? path.resolve(dir) : sessionsRoot());
		const infos = lazyTexts(SessionManager.#lookups(), SessionManager.#infos(undefined, dir));
		report(infos, progress);
		return infos;
	}

	#call(method, ...args) {
		return request(this.#n, method, args);
	}

	/**
	 * Every entry of the session, parsed once: lines never change once written, so only lines
	 * written since the last call (by this manager or another process) cross the boundary.
	 */
	#sync() {
		const epoch = this.#n.epoch();
		let m = this.#mirror;
		if (m === null || m.epoch !== epoch) m = this.#mirror = { epoch, lastKey: undefined, entries: [] };
		if (this.#parsed === null || this.#parsed.epoch !== epoch) this.#parsed = new ParsedEntries(epoch);
		const byKey = this.#parsed;
		for (;;) {
			const [keys, lines] = JSON.parse(this.#n.linesAfter(m.lastKey, BATCH).toString());
			parses.count("lines", lines.length);
			// One object per line, whichever of getBranch() and getEntries() parsed it, as with pi.
			for (let i = 0; i < lines.length; i++) {
				let e = byKey.get(keys[i]);
				if (e === undefined) byKey.set(keys[i], (e = this.#own(lines[i], epoch)));
				m.entries.push(e);
			}
			if (keys.length > 0) m.lastKey = keys[keys.length - 1];
			if (keys.length < BATCH) return m;
		}
	}

	// ----- session ----------------------------------------------------------------------
	setSessionFile(sessionFile) {
		if (this.#file) catchUpFile(sessionFile);
		this.#call("open", sessionFile, this.getSessionDir(), this.getCwd());
		leases.track(native, this.#n);
		this.#changed("open");
	}
	newSession(options) {
		if (this.isPersisted()) this.#call("create", this.getCwd(), this.getSessionDir(), options);
		else this.#call("inMemory", this.getCwd(), options);
		leases.track(native, this.#n);
		this.#changed("new");
		return this.getSessionFile();
	}
	isPersisted() {
		return this.#call("isPersisted");
	}
	getCwd() {
		return this.#call("getCwd");
	}
	getSessionDir() {
		return this.#call("getSessionDir");
	}
	usesDefaultSessionDir() {
		return path.resolve(this.getSessionDir()) === path.resolve(native.defaultSessionDir(this.getCwd()));
	}
	getSessionId() {
		return this.#call("getSessionId");
	}
	getSessionFile() {
		return undef(this.#call("getSessionFile"));
	}
	getSessionName() {
		return undef(this.#call("getSessionName"));
	}
	getHeader() {
		return this.#call("getHeader");
	}
	/** True once the session is in the database (pi writes its file then). */
	isSaved() {
		return this.#n.isSaved();
	}
	/** Writes the session as pi's JSONL file (the stored lines, byte for byte) to `file`. */
	writeSessionFile(file) {
		const { text } = this.#n.fileLinesAfter(undefined);
		fs.writeFileSync(file, Buffer.concat([Buffer.from(`${this.#n.headerLine()}\n`), text]));
	}
	getEntryCount() {
		return this.#call("getEntryCount");
	}

	// ----- appends ----------------------------------------------------------------------
	appendMessage(message) {
		const text = JSON.stringify(message);
		if (text === undefined) return this.#appended(this.#call("appendMessage", message)); // as the rpc treats undefined
		const id = this.#appended(this.#n.appendMessage(text));
		// pi's entry holds the caller's object: pi's AgentSession finds a message's entry by
		// identity (`entry.message === message`), from the end of the branch.
		const epoch = this.#n.epoch();
		if (this.#messages?.epoch !== epoch) this.#messages = { epoch, byId: new Map() };
		this.#messages.byId.set(id, message);
		return id;
	}
	/** A parsed entry, holding the caller's own message object when this manager appended it. */
	#own(entry, epoch) {
		const m = this.#messages?.epoch === epoch ? this.#messages.byId.get(entry?.id) : undefined;
		if (m !== undefined && entry.type === "message") entry.message = m;
		return entry;
	}
	appendThinkingLevelChange(thinkingLevel) {
		return this.#appended(this.#call("appendThinkingLevelChange", thinkingLevel));
	}
	appendModelChange(provider, modelId) {
		return this.#appended(this.#call("appendModelChange", provider, modelId));
	}
	appendUsage(kind, provider, model, usage, note) {
		return this.#appended(this.#call("appendUsage", kind, provider, model, usage, note));
	}
	appendCompaction(summary, firstKeptEntryId, tokensBefore, details, fromHook, usage) {
		return this.#appended(this.#call("appendCompaction", summary, firstKeptEntryId, tokensBefore, details, fromHook, usage));
	}
	appendCustomEntry(customType, data) {
		return this.#appended(this.#call("appendCustomEntry", customType, data));
	}
	appendSessionInfo(name) {
		return this.#appended(this.#call("appendSessionInfo", name));
	}
	appendCustomMessageEntry(customType, content, display, details) {
		return this.#appended(this.#call("appendCustomMessageEntry", customType, content, display, details));
	}
	appendContextEdit(targetId, replacement) {
		return this.#appended(this.#call("appendContextEdit", targetId, replacement));
	}
	appendLabelChange(targetId, label) {
		return this.#appended(this.#call("appendLabelChange", targetId, label));
	}

	// ----- tree -------------------------------------------------------------------------
	getLeafId() {
		return this.#call("getLeafId");
	}
	getLeafEntry() {
		return undef(this.#call("getLeafEntry"));
	}
	getEntry(id) {
		return undef(this.#call("getEntry", id));
	}
	getChildren(parentId) {
		return this.#call("getChildren", parentId);
	}
	getLabel(id) {
		return undef(this.#call("getLabel", id));
	}
	getBranch(fromId) {
		// The path is Rust's walk (pi's: the later line of a repeated id wins, a cycle stops it);
		// its lines are the entries parsed already, and the others parsed now. A long branch of
		// a session not parsed yet is parsed as its entries are looked at (pi's callers mostly
		// look at a few entries at one end).
		const steps = this.#branchSteps(fromId);
		if (steps.keys.length <= LAZY_BRANCH || this.#mirror?.epoch === this.#n.epoch()) {
			// The entries of the path it extends are kept: an append costs its own lines only.
			const kept = steps.entries ?? [];
			if (steps.entries === undefined || kept.length < steps.keys.length) steps.entries = kept.concat(this.#linesAt(steps.keys.slice(kept.length)));
			return steps.entries.slice();
		}
		steps.lazy ??= this.#lazy(steps, true);
		return steps.lazy.slice();
	}
	/**
	 * Keys, ids and types of the path to `fromId` (default: the leaf). The last path asked for
	 * is kept: the path to an entry never changes, and the path to an entry appended below it
	 * is that path plus the few steps read from the database.
	 */
	#branchSteps(fromId) {
		const start = fromId ?? this.getLeafId();
		if (start === null || start === undefined) return { keys: [], ids: [], types: [], roles: [] };
		const epoch = this.#n.epoch();
		const held = this.#steps?.epoch === epoch ? this.#steps : null;
		if (held?.start === start) return held;
		let steps = null;
		// An entry on the held path (pi's /tree navigation asks for the old leaf's path, then for
		// the target's, often an entry above it): its path is the held one's beginning, unless the
		// held walk stopped on a loop of parents (its first entry's parent is on it), where the
		// walk from the entry would go on past the entries below it.
		const on = held === null ? -1 : held.ids.lastIndexOf(start);
		if (on !== -1 && !held.ids.includes(this.#linesAt([held.keys[0]])[0]?.parentId)) {
			const end = on + 1;
			steps = {
				keys: held.keys.slice(0, end),
				ids: held.ids.slice(0, end),
				types: held.types.slice(0, end),
				roles: held.roles.slice(0, end),
				prefix: held.lazy?.slice(0, end), // the same entry objects (see #lazy)
				entries: held.entries?.slice(0, end), // the same, parsed (see getBranch)
			};
		} else if (held && held.keys.length > 0) {
			const tail = decodeSteps(this.#n.branchSteps(start, STEPS_TAIL));
			const at = tail.ids.lastIndexOf(held.start);
			if (at !== -1 && tail.keys[at] === held.keys[held.keys.length - 1]) {
				steps = {
					keys: held.keys.concat(tail.keys.slice(at + 1)),
					ids: held.ids.concat(tail.ids.slice(at + 1)),
					types: held.types.concat(tail.types.slice(at + 1)),
					roles: held.roles.concat(tail.roles.slice(at + 1)),
					prefix: held.lazy, // the entries of the path it extends, kept (see #lazy)
					entries: held.entries, // the same, parsed (see getBranch)
				};
			} else if (tail.keys.length < STEPS_TAIL) steps = tail; // the whole path
		}
		steps ??= this.#wholePath(start, epoch);
		this.#steps = { epoch, start, ...steps };
		return this.#steps;
	}

	/**
	 * The steps of the path to `start`, read whole. A long session's entries not read yet
	 * (getEntries) are read with it and kept for getEntries: both come from one read of every
	 * link, and pi's TUI asks for the branch at start, then for every entry (its footer).
	 */
	#wholePath(start, epoch) {
		if (this.#all?.epoch !== epoch && this.#mirror?.epoch !== epoch && this.getEntryCount() > LAZY_BRANCH) {
			const got = this.#n.entriesAndPath(start);
			if (got !== null) {
				// The entries stay in columns until getEntries() asks: -p never does.
				const columns = stepColumns(got[0]);
				const raw = aligned(got[1]);
				this.#allSteps = { epoch, columns };
				return pickSteps(columns, new Uint32Array(raw.buffer, raw.byteOffset, raw.length / 4));
			}
		}
		return decodeSteps(this.#n.branchSteps(start));
	}

	/** The parsed entries stored under `keys`, the same objects each time (within an epoch). */
	#linesAt(keys) {
		const epoch = this.#n.epoch();
		if (this.#parsed === null || this.#parsed.epoch !== epoch) this.#parsed = new ParsedEntries(epoch);
		const byKey = this.#parsed;
		const missing = keys.filter((k) => !byKey.has(k));
		if (missing.length > 0) {
			const lines = JSON.parse(this.#n.linesAt(missing).toString());
			parses.count("lines", missing.length);
			for (let i = 0; i < missing.length; i++) byKey.set(missing[i], this.#own(lines[i], epoch));
		}
		return keys.map((k) => byKey.get(k));
	}

	/**
	 * A long branch as an array of entries read and parsed (in windows) only when looked at; an
	 * entry's `id`, `type` and message `role` are known without reading it, so pi's searches of
	 * the branch by id, type or role (findIndex, scans for the last compaction) parse nothing.
	 * The array is built once per path (getBranch returns copies): the same entry objects each
	 * time, as with pi, and array methods run at native speed.
	 */
	#lazy({ keys, ids, types, roles, prefix }, path = false) {
		const epoch = this.#n.epoch();
		const branch = {
			epoch,
			keys,
			ids,
			types,
			roles,
			path, // a path from the root: each entry's parentId is the id of the one before
			messages: new Array(keys.length),
			back: 0.5, // half the next backward window of parsedLike
			// pi's footer reads an assistant's usage a dozen times a render: each entry's usages
			// are looked up once (lines never change; a parsed entry answers for itself instead).
			usages: [new Array(keys.length), new Array(keys.length)],
			usage: (i, which) => {
				let u = branch.usages[which][i];
				if (u === undefined) {
					u = this.#usageAt(branch, i, which);
					branch.usages[which][i] = u === undefined ? NO_USAGE : u; // a usage may be null
				}
				return u === NO_USAGE ? undefined : u;
			},
			// An assistant's provider (k 0) or model (1) from its usage row, undefined without one.
			rowName: (i, k) => {
				const r = this.#rowOf(branch, i, 1);
				return r < 0 ? undefined : this.#usages.names[2 * r + k];
			},
			own: (i) => (this.#messages?.epoch === epoch ? this.#messages.byId.has(ids[i]) : false),
			isParsed: (i) => this.#parsed?.has(keys[i]) ?? false,
			one: (i) => this.#linesAt([keys[i]])[0],
			parsed: (i) => {
				let e = this.#parsed?.get(keys[i]);
				if (e === undefined) {
					const from = Math.max(0, i - WINDOW / 2);
					this.#linesAt(keys.slice(from, Math.min(keys.length, from + WINDOW)));
					e = this.#parsed.get(keys[i]);
				}
				return e;
			},
			// Entry `i` parsed with the next entries of its type and role not parsed yet (some
			// before it when none follows: a walk backwards), not with its neighbours: a walk
			// looking into one kind of message (pi's fork selector reads every user message's
			// content) parses those only.
			parsedLike: (i) => {
				let e = this.#parsed?.get(keys[i]);
				if (e === undefined) {
					const like = [keys[i]];
					const same = (j) => types[j] === types[i] && roles[j] === roles[i] && !branch.isParsed(j);
					for (let j = i + 1; j < keys.length && j < i + 8 * WINDOW && like.length < WINDOW; j++) if (same(j)) like.push(keys[j]);
					// Backwards, a window doubling with each backward read of this array (1, 2, 4, ...,
					// a quarter window): a walk from the end mostly stops early, often at its first
					// entry (pi's _checkCompaction reads the last compaction's timestamp, and 64
					// compactions parsed cost 21 ms on HUGE), and a long one still costs few reads.
					if (like.length === 1) {
						const want = (branch.back = Math.min(WINDOW / 4, branch.back * 2));
						for (let j = i - 1; j >= 0 && j > i - 8 * WINDOW && like.length < want; j--) if (same(j)) like.push(keys[j]);
					}
					this.#linesAt(like);
					e = this.#parsed.get(keys[i]);
				}
				return e;
			},
		};
		const entries = new Array(keys.length);
		const kept = prefix?.length ?? 0;
		for (let i = 0; i < kept; i++) entries[i] = prefix[i];
		for (let i = kept; i < keys.length; i++) entries[i] = new Proxy({ [SLOT]: branch, [INDEX]: i }, entryHandler);
		Object.defineProperty(entries, "branch", { value: branch }); // slices do not keep it
		return entries;
	}

	/**
	 * Every entry, in file order. A long session not parsed yet gives its entries as a lazy
	 * branch does (#lazy), so that pi's footer, which sums the usage of every entry on each
	 * change, parses nothing: an entry's `usage` and its message's `usage` are read from the
	 * lines without parsing them (#usage).
	 */
	getEntries() {
		const entries = this.#entries();
		if (!this.#usageWalk) return entries;
		this.#usageWalk = false;
		return this.#usageStandIns(entries) ?? entries;
	}

	/**
	 * Runs `walk`, pi's usage totals (the footer's getSessionStats: pi/footer.mjs), with the next
	 * getEntries() answered by what that walk reads: only the entries whose `type` makes it read a
	 * usage, and of those, each one whose usage a row of the store gives exactly as a plain
	 * object holding just that (`type`, the message's `role`, the five numbers summed). Every
	 * other such entry is the lazy entry itself, which answers as pi's would (a usage read from
	 * the line, or none: pi then throws as it does on the file). The totals are pi's own sums in
	 * pi's order; a walk of 100,000 entry proxies was most of the TUI's first screen of HUGE.
	 */
	[USAGE_WALK](walk) {
		this.#usageWalk = true;
		try {
			return walk();
		} finally {
			this.#usageWalk = false;
		}
	}

	/** See [USAGE_WALK]: `entries` (a long session's lazy getEntries()) as the totals read them; null when not lazy. */
	#usageStandIns(entries) {
		const epoch = this.#n.epoch();
		const lazy = this.#all?.epoch === epoch ? this.#all.lazy : null;
		if (lazy === null || lazy.length !== entries.length) return null;
		const b = lazy.branch;
		const u = this.#usageState(epoch);
		const out = [];
		for (let i = 0; i < entries.length; i++) {
			const t = b.types[i];
			const read = usageRead(t, b.roles[i]);
			// A type or role that is not a string: the entry itself answers (pi may throw on it).
			const known = t !== null && (t !== "message" || b.roles[i] !== null);
			if (read === USAGE_NONE && known) continue; // nothing read but the type and role
			if (read !== USAGE_NONE && !b.isParsed(i) && !b.own(i)) {
				const seq = this.#usageSeq(u, b.keys[i]);
				if (seq >= 0 && u.inLine[seq] !== 1) {
					const row = u.rowAt[seq] - 1;
					if (row >= 0 && read !== USAGE_TOOL_RESULT) {
						out.push(usageStandIn(t, read, u.numbers, row));
						continue;
					}
					// Known to have no usage: a tool result's or a summary's is only read when present.
					if (read === USAGE_TOOL_RESULT || t === "compaction" || t === "branch_summary") continue;
				}
			}
			out.push(entries[i]);
		}
		parses.count("usageWalks", 1);
		return out;
	}

	#entries() {
		const epoch = this.#n.epoch();
		if (this.#mirror?.epoch === epoch) return this.#sync().entries.slice();
		let all = this.#all?.epoch === epoch ? this.#all : null;
		if (all === null) {
			if (this.getEntryCount() <= LAZY_BRANCH) return this.#sync().entries.slice();
			// Read with the path by getBranch (#wholePath), else now.
			const held = this.#allSteps?.epoch === epoch ? pickSteps(this.#allSteps.columns, null) : null;
			this.#allSteps = null;
			all = this.#all = { epoch, lazy: this.#lazy(held ?? decodeSteps(this.#n.entrySteps(undefined))) };
			if (held === null) return all.lazy.slice();
		}
		const last = all.lazy.length > 0 ? all.lazy.branch.keys[all.lazy.length - 1] : undefined;
		const more = decodeSteps(this.#n.entrySteps(last));
		if (more.keys.length > 0) {
			const b = all.lazy.branch;
			all.lazy = this.#lazy({
				keys: b.keys.concat(more.keys),
				ids: b.ids.concat(more.ids),
				types: b.types.concat(more.types),
				roles: b.roles.concat(more.roles),
				prefix: all.lazy,
			});
		}
		return all.lazy.slice();
	}

	/**
	 * What the store knows of the session's usages (`entryUsages`): rows and whether an entry's
	 * usages are read from its line, by line number (seq, the key's low 32 bits: small integers
	 * index arrays where pi's walks ask for every entry). Lines never change, so they are kept
	 * across appends and only what follows the last line covered (`upto`) is asked for. `epoch`
	 * is the one of the lazy array asking (no native call per entry); null for an array from
	 * before the manager moved to another session (its lines are read).
	 */
	#usageState(epoch) {
		if (this.#usages?.epoch !== epoch) {
			if (epoch !== this.#n.epoch()) return null;
			// rowAt: by line number, 1 + the index of the line's row in numbers (six each) and
			// names (two each), 0 for none.
			this.#usages = {
				epoch,
				base: undefined,
				upto: undefined,
				rowAt: new Uint32Array(0),
				numbers: new Float64Array(0),
				names: [],
				rows: 0,
				inLine: new Uint8Array(0),
				scanned: new Map(),
				proxies: new Map(),
			};
		}
		return this.#usages;
	}

	/** The line number of `key` when the store's usages cover it (see #usageState), else -1. */
	#usageSeq(u, key) {
		if (u === null || u.upto === null) return -1; // the store knows none (PostgreSQL): the lines are read
		const seq = key % SEQS;
		if (u.base !== undefined && key - seq !== u.base) return -1; // another session's
		if (u.upto === undefined || seq > u.upto) {
			if (u.epoch !== this.#n.epoch()) return -1;
			const got = decodeUsages(this.#n.entryUsages(u.upto === undefined ? undefined : u.base + u.upto));
			if (got.upto === null) {
				u.upto = null;
				return -1;
			}
			u.base = got.upto - (got.upto % SEQS);
			u.upto = got.upto % SEQS;
			if (u.inLine.length <= u.upto) {
				const size = Math.max(u.upto + 1, 2 * u.inLine.length);
				u.inLine = grown(u.inLine, size);
				u.rowAt = grown(u.rowAt, size);
			}
			// Rows already held keep their index: a usage proxy reads u.numbers by it.
			const first = u.rows;
			if (u.numbers.length < 6 * (first + got.n)) u.numbers = grown(u.numbers, Math.max(6 * (first + got.n), 2 * u.numbers.length));
			u.numbers.set(got.numbers, 6 * first);
			for (let r = 0; r < got.n; r++) {
				u.rowAt[got.numbers[6 * r] % SEQS] = first + r + 1;
				u.names.push(got.names[2 * r], got.names[2 * r + 1]);
			}
			u.rows = first + got.n;
			for (const k of got.inLine) u.inLine[k % SEQS] = 1;
			if (key - seq !== u.base) return -1;
		}
		return seq <= u.upto ? seq : -1;
	}

	/** The index of entry `i` of `branch`'s usage row (see #usageState) when it gives the usage `which` (see #usageAt), else -1. */
	#rowOf(branch, i, which) {
		const u = this.#usageState(branch.epoch);
		const seq = this.#usageSeq(u, branch.keys[i]);
		if (seq < 0 || u.inLine[seq] === 1) return -1;
		const read = usageRead(branch.types[i], branch.roles[i]);
		const mine = which === 1 ? read === USAGE_ASSISTANT : read === USAGE_OWN;
		return mine ? u.rowAt[seq] - 1 : -1;
	}

	/**
	 * Entry `i` of `branch`'s `usage` (`which` 0) or its message's `usage` (1), not parsing its
	 * line. pi's usage totals read only the numbers a usage row holds (`input`, `output`,
	 * `cacheRead`, `cacheWrite`, `cost.total`): where the row gives the usage, it is an object
	 * answering those from the row and anything else from the parsed line (usageHandler); an
	 * entry the store covers that has no row and is not read from its line has no usage.
	 * Otherwise the line is scanned natively for its usages, with the lines after it that need
	 * the same (pi walks them in order).
	 */
	#usageAt(branch, i, which) {
		const key = branch.keys[i];
		const row = this.#rowOf(branch, i, which);
		const u = this.#usageState(branch.epoch);
		if (row >= 0) {
			let p = u.proxies.get(key);
			if (p === undefined) u.proxies.set(key, (p = new Proxy({ [SLOT]: branch, [INDEX]: i, u, row, which }, usageHandler)));
			return p;
		}
		const seq = this.#usageSeq(u, key);
		if (seq >= 0 && u.inLine[seq] !== 1) return undefined;
		const scanned = u?.scanned ?? new Map(); // an array of another session: not kept
		let got = scanned.get(key);
		if (got === undefined) {
			const keys = [key];
			for (let j = i + 1; j < branch.keys.length && keys.length < USAGE_WINDOW; j++) {
				const k = branch.keys[j];
				if (scanned.has(k) || branch.isParsed(j)) continue;
				const s = seq >= 0 ? k - u.base : -1;
				let needs;
				if (s >= 0 && s <= u.upto) needs = u.inLine[s] === 1;
				else {
					// Nothing known: the entries whose usages pi's totals read.
					needs = usageRead(branch.types[j], branch.roles[j]) !== USAGE_NONE;
				}
				if (needs) keys.push(k);
			}
			const raw = JSON.parse(this.#n.usagesAt(keys).toString());
			parses.count("usages", keys.length);
			for (let k = 0; k < keys.length; k++) scanned.set(keys[k], [raw[2 * k], raw[2 * k + 1]]);
			got = scanned.get(key);
		}
		return got[which] === null ? undefined : got[which][0];
	}

	/**
	 * pi's getTree(), built from the links (tree.cjs): a long session's entries are parsed only
	 * when a field other than id, parentId, type or role is read (pi's /tree reads the rows on
	 * screen); a short one's are parsed at once, as getEntries() would.
	 */
	getTree() {
		const links = decodeTreeLinks(this.#n.treeLinks());
		const { keys } = links;
		if (keys.length <= LAZY_BRANCH || this.#mirror?.epoch === this.#n.epoch()) this.#linesAt(keys);
		const byKey = () => this.#parsed;
		let rows = null;
		return buildTree(
			links,
			(i) => byKey()?.get(keys[i]),
			(i) => {
				// pi's tree selector reads the content of every assistant message (and of nothing
				// else but the rows on screen): the entry is parsed with the next entries of its
				// type and role, not with its neighbours.
				const { types, roles } = links;
				const held = byKey();
				const want = [keys[i]];
				for (let j = i + 1; j < keys.length && j < i + 8 * WINDOW && want.length < WINDOW; j++) {
					if (types[j] === types[i] && roles[j] === roles[i] && !held?.has(keys[j])) want.push(keys[j]);
				}
				this.#linesAt(want);
				return byKey().get(keys[i]);
			},
			(i) => {
				// What pi's tree selector reads of each assistant (tree.cjs, withStandIns), for all
				// of them at once: it reads every one.
				if (rows === null) {
					const { types, roles } = links;
					const held = byKey();
					const at = [];
					for (let j = 0; j < keys.length; j++) if (types[j] === "message" && roles[j] === "assistant" && !held?.has(keys[j])) at.push(j);
					const got = JSON.parse(this.#n.assistantRows(at.map((j) => keys[j])).toString());
					parses.count("rows", at.length);
					rows = new Array(keys.length);
					for (let k = 0; k < at.length; k++) rows[at[k]] = got[k];
				}
				return rows[i];
			},
		);
	}
	buildContextEntries() {
		const entries = this.#call("buildContextEntries");
		parses.count("results", entries?.length ?? 0);
		return entries;
	}
	/**
	 * pi's projection, read again only when the session has changed (another leaf, another entry
	 * count, another session): pi asks for it several times a turn (six in `-p` on HUGE, 150 KB
	 * to 480 KB of JSON each). Each call gets new arrays, as pi builds them, holding the same
	 * entry and message objects, as pi's are its session's own; `messages` is the entries'
	 * messages, flattened as pi does.
	 */
	buildSessionProjection() {
		const epoch = this.#n.epoch();
		const leaf = this.getLeafId();
		const count = this.getEntryCount();
		let held = this.#projection;
		if (held?.epoch !== epoch || held.leaf !== leaf || held.count !== count) {
			const { entries, thinkingLevel, model } = this.#call("buildSessionProjection");
			parses.count("results", entries.length);
			held = this.#projection = { epoch, leaf, count, entries, thinkingLevel, model };
		}
		const entries = held.entries.map((e) => ({ sourceEntry: e.sourceEntry, messages: e.messages.slice() }));
		return { entries, messages: entries.flatMap((e) => e.messages), thinkingLevel: held.thinkingLevel, model: held.model };
	}
	buildSessionContext() {
		const { messages, thinkingLevel, model } = this.buildSessionProjection();
		return { messages, thinkingLevel, model };
	}
	branch(branchFromId) {
		this.#call("branch", branchFromId);
	}
	resetLeaf() {
		this.#call("resetLeaf");
	}
	branchWithSummary(branchFromId, summary, details, fromHook, usage) {
		return this.#appended(this.#call("branchWithSummary", branchFromId, summary, details, fromHook, usage));
	}
	createBranchedSession(leafId) {
		const file = undef(this.#call("createBranchedSession", leafId));
		this.#changed("branch");
		return file;
	}
}

// The entries of a lazy branch (see #lazy) are proxies sharing one handler: the target holds the
// branch and the index; `id`, `type` and a message's `role` are answered without parsing, any
// other property parses the entry (with the next entries of its kind: see parsedLike).
const SLOT = Symbol("sessiondb.lazy");
const NO_USAGE = Symbol("sessiondb.noUsage"); // a lazy entry's usage looked up and absent
const INDEX = Symbol("sessiondb.index");
const MESSAGE = Symbol("sessiondb.message"); // on a message proxy's target: true
const parsedOf = (t) => {
	const e = t[MESSAGE] ? t[SLOT].parsedLike(t[INDEX]) : t[SLOT].parsed(t[INDEX]);
	return Object(t[MESSAGE] ? e?.message : e);
};
const forward = forwarding(parsedOf);
const entryHandler = {
	...forward,
	get(t, prop) {
		const branch = t[SLOT];
		const i = t[INDEX];
		if (prop === "id" && branch.ids[i] !== null) return branch.ids[i];
		if (prop === "type" && branch.types[i] !== null) return branch.types[i];
		// On a path, an entry's parent is the entry before it (pi's getBranch walks parentId).
		if (prop === "parentId" && branch.path && !branch.isParsed(i)) {
			if (i > 0 && branch.ids[i - 1] !== null) return branch.ids[i - 1];
			// The root's (where pi's walk up stops): that line alone, not a window around it.
			if (i === 0) return branch.one(0)?.parentId;
		}
		if (prop === "message" && branch.roles[i] !== null && !branch.isParsed(i) && !branch.own(i)) {
			return (branch.messages[i] ??= new Proxy({ [SLOT]: branch, [INDEX]: i, [MESSAGE]: true }, messageHandler));
		}
		if (prop === "usage" && !branch.isParsed(i)) return branch.usage(i, 0);
		// With the next entries of its kind, not its neighbours: pi's compaction reads every
		// thinking_level_change and model_change of the branch (getSessionContextSettings), and a
		// window around each parsed the whole branch of a giant session.
		return branch.parsedLike(i)?.[prop];
	},
};
/**
 * Which usage pi's usage totals (the footer, getSessionStats) read of an entry of type `t` whose
 * message has role `role`: USAGE_OWN (its `usage`: usage entries, compactions, branch summaries),
 * USAGE_ASSISTANT (an assistant message's `usage`), USAGE_TOOL_RESULT (a tool result's, when
 * present), or USAGE_NONE.
 */
const USAGE_NONE = -1;
const USAGE_OWN = 0;
const USAGE_ASSISTANT = 1;
const USAGE_TOOL_RESULT = 2;
function usageRead(t, role) {
	if (t === "message") return role === "assistant" ? USAGE_ASSISTANT : role === "toolResult" ? USAGE_TOOL_RESULT : USAGE_NONE;
	return t === "usage" || t === "compaction" || t === "branch_summary" ? USAGE_OWN : USAGE_NONE;
}

/** What pi's usage totals read of an entry whose usage row `row` gives its usage (see [USAGE_WALK]). */
function usageStandIn(type, read, numbers, row) {
	const at = 6 * row;
	const usage = {
		input: numbers[at + 1],
		output: numbers[at + 2],
		cacheRead: numbers[at + 3],
		cacheWrite: numbers[at + 4],
		cost: { total: numbers[at + 5] },
	};
	return read === USAGE_ASSISTANT ? { type, message: { role: "assistant", usage } } : { type, usage };
}
// A usage whose row holds the line's numbers (see #usageAt): the target holds the usages' state
// `u`, the row's index in it and `which` (0: the entry's usage, 1: its message's); `cost` is a
// proxy answering `total`.
const USAGE_FIELDS = new Map([
	["input", 1],
	["output", 2],
	["cacheRead", 3],
	["cacheWrite", 4],
]);
const usageOf = (t) => {
	const e = t[SLOT].parsed(t[INDEX]);
	return Object(t.which === 1 ? e?.message?.usage : e?.usage);
};
const usageForward = forwarding(usageOf);
const usageHandler = {
	...usageForward,
	get(t, prop) {
		if (t[SLOT].isParsed(t[INDEX])) return usageOf(t)[prop];
		const column = USAGE_FIELDS.get(prop);
		if (column !== undefined) return t.u.numbers[6 * t.row + column];
		if (prop === "cost") return (t.cost ??= new Proxy({ [SLOT]: t[SLOT], [INDEX]: t[INDEX], u: t.u, row: t.row, which: t.which, cost: true }, costHandler));
		return usageOf(t)[prop];
	},
};
const costOf = (t) => Object(usageOf(t).cost);
const costHandler = {
	...forwarding(costOf),
	get(t, prop) {
		if (prop === "total" && !t[SLOT].isParsed(t[INDEX])) return t.u.numbers[6 * t.row + 5];
		return costOf(t)[prop];
	},
};
const messageHandler = {
	...forward,
	get(t, prop) {
		const i = t[INDEX];
		if (prop === "role") return t[SLOT].roles[i];
		if (prop === "usage" && !t[SLOT].isParsed(i)) return t[SLOT].usage(i, 1);
		// An assistant's provider and model, read by pi's walks of the branch (compaction's
		// getSessionContextSettings): from its usage row, when it gives them.
		if ((prop === "provider" || prop === "model") && !t[SLOT].isParsed(i)) {
			const v = t[SLOT].rowName(i, prop === "provider" ? 0 : 1);
			if (typeof v === "string") return v;
		}
		return t[SLOT].parsedLike(i)?.message?.[prop];
	},
};

/**
 * pi's SessionInfo objects, whose `allMessagesText` (every message's text: most of a list's
 * size) is read from the database the first time one of them is looked at, for the whole list
 * at once. pi's session selector reads it only to search, so listing holds no text.
 */
function lazyTexts(n, rows) {
	const keys = rows.map((r) => [r.sid, r.lastSeq]);
	let texts = null;
	const textAt = (i) => {
		texts ??= request(n, "messagesTexts", [keys]);
		return texts[i];
	};
	return rows.map((r, i) => {
		delete r.sid;
		delete r.lastSeq;
		const info = sessionInfo(r);
		Object.defineProperty(info, "allMessagesText", {
			get: () => textAt(i),
			set(value) {
				Object.defineProperty(info, "allMessagesText", { value, writable: true, enumerable: true, configurable: true });
			},
			enumerable: true,
			configurable: true,
		});
		return info;
	});
}

/** pi reports (loaded, total) as sessions load; the database has them all at once. */
function report(infos, onProgress) {
	if (!onProgress) return;
	const total = infos.length;
	for (let i = 1; i <= total; i++) onProgress(i, total);
}

/**
 * The rules the Rust library owns, for this package's own modules (the launcher) and tests:
 * whether a database names a PostgreSQL server, and where pi keeps its folders.
 */
const layout = Object.freeze({
	isServerUrl: (text) => native.isServerUrl(String(text)),
	agentDir: () => native.agentDir(),
	sessionsRoot: () => native.sessionsRoot(),
	sessionsDir: () => native.sessionsDir(),
});

module.exports = { SessionManager, default: SessionManager, layout };

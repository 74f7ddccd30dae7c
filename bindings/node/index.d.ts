// Types of the sessiondb binding: pi 1.6.0's SessionManager surface, with pi's own types
// (install @earendil-works/pi-coding-agent, as every user of pi's SDK has).
import type {
	ContextEditEntry,
	FileEntry,
	NewSessionOptions,
	SessionContext,
	SessionEntry,
	SessionHeader,
	SessionInfo,
	SessionManager as PiSessionManager,
	SessionProjection,
	SessionTreeNode,
} from "@earendil-works/pi-coding-agent";

type AppendMessage = Parameters<PiSessionManager["appendMessage"]>[0];
type Usage = Parameters<PiSessionManager["appendUsage"]>[3];
type UsageEntry = ReturnType<PiSessionManager["appendUsage"]>;
type TextOrImages = Parameters<PiSessionManager["appendCustomMessageEntry"]>[1];

/** Why a manager continued in a fork instead of the session asked for. */
export interface LeaseNotice {
	/** The process writing the session: pid, host, start time, when it took the lease (ms since 1970), ms since its renewal. */
	holder: { pid: number; host: string; start: string; sinceMs: number; ageMs: number; live: boolean; mine: boolean };
	/** The session asked for. */
	sessionFile: string;
	/** The new session continued in instead, and its id. */
	forkedTo: string;
	forkedId: string;
	/** The whole notice, one line. */
	message: string;
}

/** pi's `SessionListProgress`. */
export type SessionListProgress = (loaded: number, total: number, partialSessions?: readonly SessionInfo[]) => void;

/**
 * pi's SessionManager, stored in a sessiondb database ($SESSIONDB_PATH, else
 * ~/.pi/agent/sessiondb.sqlite, or the one `useDatabase` selects). Pass an instance to pi's SDK:
 * `createAgentSession({ sessionManager: SessionManager.create(cwd) })`.
 */
export declare class SessionManager {
	private constructor();
	/** Selects the database file (or `postgres://` URL) for managers made from now on; throws naming the file and the cause if it cannot be opened. */
	static useDatabase(path: string): void;
	/** The database file managers use now. */
	static databasePath(): string;
	/**
	 * Files mode (what `sessiondb-pi` runs): managers made from now on also write each session to
	 * pi's JSONL file as pi does, and lookups first catch the database up with changed or deleted files.
	 */
	static useFiles(on: boolean): void;
	/** Whether managers write pi's files too. */
	static usesFiles(): boolean;
	/**
	 * One writer per session (on unless turned off before the first manager is made): a manager
	 * holds a lease on the session it writes, renewed while the process runs and released when it
	 * exits; opening a session another live process holds continues in a new session forked from
	 * it (pi's `--fork`), and the notice goes to stderr or to `onLeaseNotice`'s handler.
	 */
	static useLeases(on: boolean): void;
	/** Who hears that a session was forked because another process writes it. */
	static onLeaseNotice(handler: (notice: LeaseNotice) => void): void;
	/** Who holds the lease on the session at `file` (or with that id); `live` false for a holder gone; undefined when none. */
	static leaseHolder(file: string): LeaseNotice["holder"] | undefined;
	/** Releases every lease this process holds now (a host about to be killed by a signal). */
	static releaseLeases(): void;
	/** Imports the session files below `dirs` the database does not hold yet (a progress line on stderr when asked). */
	static importFolders(dirs: string[], progress?: boolean): { files?: number; sessions?: number; unchanged?: number; failures?: number; failed?: string[] };
	/** Removes the session recorded at `file` from the database; true when there was one. */
	static deleteSession(file: string): boolean;

	static create(cwd: string, sessionDir?: string, options?: NewSessionOptions): SessionManager;
	static open(path: string, sessionDir?: string, cwdOverride?: string): SessionManager;
	static continueRecent(cwd: string, sessionDir?: string): SessionManager;
	/** `entries`: a preloaded session (pi's file entries, with or without the header). */
	static inMemory(cwd?: string, options?: NewSessionOptions, entries?: FileEntry[]): SessionManager;
	static forkFrom(sourcePath: string, targetCwd: string, sessionDir?: string, options?: NewSessionOptions): SessionManager;
	static findById(cwd: string, id: string, sessionDir?: string): string | undefined;
	static list(cwd: string, sessionDir?: string, onProgress?: SessionListProgress, signal?: AbortSignal): Promise<SessionInfo[]>;
	static listAll(onProgress?: SessionListProgress, signal?: AbortSignal): Promise<SessionInfo[]>;
	static listAll(sessionDir?: string, onProgress?: SessionListProgress, signal?: AbortSignal): Promise<SessionInfo[]>;

	setSessionFile(sessionFile: string): void;
	newSession(options?: NewSessionOptions): string | undefined;
	isPersisted(): boolean;
	getCwd(): string;
	getSessionDir(): string;
	usesDefaultSessionDir(): boolean;
	getSessionId(): string;
	getSessionFile(): string | undefined;

	appendMessage(message: AppendMessage): string;
	appendThinkingLevelChange(thinkingLevel: string): string;
	appendModelChange(provider: string, modelId: string): string;
	appendUsage(kind: string, provider: string, model: string, usage: Usage, note?: string): UsageEntry;
	appendCompaction<T = unknown>(
		summary: string,
		firstKeptEntryId: string | null,
		tokensBefore: number,
		details?: T,
		fromHook?: boolean,
		usage?: Usage,
	): string;
	appendCustomEntry(customType: string, data?: unknown): string;
	appendSessionInfo(name: string): string;
	getSessionName(): string | undefined;
	appendCustomMessageEntry<T = unknown>(customType: string, content: TextOrImages, display: boolean, details?: T): string;
	appendContextEdit(targetId: string, replacement: ContextEditEntry["replacement"]): string;

	getLeafId(): string | null;
	getLeafEntry(): SessionEntry | undefined;
	getEntry(id: string): SessionEntry | undefined;
	getChildren(parentId: string): SessionEntry[];
	getLabel(id: string): string | undefined;
	appendLabelChange(targetId: string, label: string | undefined): string;
	/** Entries are parsed once and shared between calls: treat them as immutable, as pi does. */
	getBranch(fromId?: string): SessionEntry[];
	buildContextEntries(): SessionEntry[];
	buildSessionProjection(): SessionProjection;
	buildSessionContext(): SessionContext;
	getHeader(): SessionHeader | null;
	getEntryCount(): number;
	/** True once the session is in the database (pi writes its file then). */
	isSaved(): boolean;
	/** Writes the session as pi's JSONL file (the stored lines, byte for byte) to `file`. */
	writeSessionFile(file: string): void;
	getEntries(): SessionEntry[];
	getTree(): SessionTreeNode[];
	branch(branchFromId: string): void;
	resetLeaf(): void;
	branchWithSummary(branchFromId: string | null, summary: string, details?: unknown, fromHook?: boolean, usage?: Usage): string;
	createBranchedSession(leafId: string): string | undefined;
}

export default SessionManager;

// Finding and running the sessiondb CLI. Everything goes through `sessiondb ... --json`, run
// asynchronously with a timeout (progress read from stderr as it comes), so a slow or broken sessiondb never blocks or crashes pi.
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { delimiter, isAbsolute, join, resolve } from "node:path";

export const INSTALL_HINT =
	"Install it with `npm install -g sessiondb` (or `cargo install sessiondb`), or point this package at a " +
	"binary with the SESSIONDB_BIN environment " +
	'variable or `"sessiondb": {"bin": "/path/to/sessiondb"}` in ~/.pi/agent/settings.json.';

/** The package's own settings: the `sessiondb` object of pi's settings.json. */
export interface SessiondbSettings {
	/** Path of the sessiondb binary. */
	bin?: string;
	/** Database file (otherwise the CLI's default: $SESSIONDB_PATH, else ~/.pi/agent/sessiondb.sqlite). */
	db?: string;
	/** Extra session folders to keep synced besides pi's own. */
	sessionDirs?: string[];
	/** Seconds /search, /usage and the tools wait for a sync under way before answering with what is there (default 15). */
	waitSeconds?: number;
}

/** sessiondb could not be found or run: the message says what to install. */
export class SessiondbMissing extends Error {
	constructor(detail: string) {
		super(`sessiondb is not available: ${detail}. ${INSTALL_HINT}`);
		this.name = "SessiondbMissing";
	}
}

/** sessiondb ran and failed: the message is its own one-line error. */
export class SessiondbFailed extends Error {
	constructor(
		message: string,
		readonly code: number | null,
	) {
		super(message);
		this.name = "SessiondbFailed";
	}
}

export function expandHome(p: string, cwd: string): string {
	if (p === "~") return homedir();
	if (p.startsWith("~/")) return join(homedir(), p.slice(2));
	return isAbsolute(p) ? p : resolve(cwd, p);
}

function isExecutable(p: string): boolean {
	try {
		accessSync(p, constants.X_OK);
		return statSync(p).isFile();
	} catch {
		return false;
	}
}

/**
 * The binary to run: $SESSIONDB_BIN, else the `sessiondb.bin` setting, else the executable of the
 * `sessiondb` npm package this package depends on, else `sessiondb` on PATH, else
 * ~/.cargo/bin/sessiondb (where `cargo install` puts it, often not on PATH).
 */
export function findBinary(settings: SessiondbSettings, cwd: string): { bin: string } | { missing: string } {
	const configured = process.env.SESSIONDB_BIN || settings.bin;
	if (configured) {
		const p = expandHome(configured, cwd);
		const from = process.env.SESSIONDB_BIN ? "SESSIONDB_BIN" : "the sessiondb.bin setting";
		return isExecutable(p) ? { bin: p } : { missing: `${from} names ${p}, which is not an executable file` };
	}
	const packaged = packagedBinary();
	if (packaged) return { bin: packaged };
	for (const dir of (process.env.PATH ?? "").split(delimiter)) {
		if (dir && isExecutable(join(dir, "sessiondb"))) return { bin: join(dir, "sessiondb") };
	}
	const cargo = join(homedir(), ".cargo", "bin", "sessiondb");
	if (isExecutable(cargo)) return { bin: cargo };
	return { missing: "no `sessiondb` package, none on PATH and none in ~/.cargo/bin" };
}

/** The executable of the `sessiondb` dependency (its platform package), as its own shim runs it. */
function packagedBinary(): string | null {
	try {
		const platform = createRequire(import.meta.url)("sessiondb/platform");
		const exe: string | null = platform.executablePath();
		return exe && isExecutable(exe) ? exe : null;
	} catch {
		return null; // not installed beside this package (a checkout, or a `pi install` of a folder)
	}
}

export interface RunOptions {
	timeoutMs: number;
	signal?: AbortSignal;
	/** Exit codes that still mean success (search and find exit 1 when nothing matched). */
	okCodes?: number[];
	/** With `--progress-json`: each progress line sessiondb prints on stderr. */
	onProgress?: (p: Progress) => void;
}

/** One `--progress-json` line of `sessiondb sync` / `import`. */
export interface Progress {
	/** "sync" or "import" (files), then "index" (texts). */
	progress: string;
	done: number;
	total: number;
}

export interface Cli {
	bin: string;
	db?: string;
}

/** Most stderr kept for an error message. */
const STDERR_KEPT = 64 * 1024;

/** The arguments of `sessiondb [--db DB] ARGS...`. */
function argvOf(cli: Cli, args: string[]): string[] {
	return cli.db ? ["--db", cli.db, ...args] : args;
}

/** Why a `sessiondb` process could not be started (or was cancelled). */
function spawnError(bin: string, e: NodeJS.ErrnoException): Error {
	if (e.code === "ENOENT" || e.code === "EACCES") return new SessiondbMissing(`cannot run ${bin} (${e.code})`);
	if (e.name === "AbortError") return new SessiondbFailed("cancelled", null);
	return new SessiondbFailed(`cannot run ${bin}: ${e.message}`, null);
}

/** A failed `sessiondb`'s error: the last lines it wrote on stderr, without its prefix. */
function exitError(stderr: string, code: number | null): SessiondbFailed {
	const msg = stderr.trim().split("\n").filter(Boolean).slice(-3).join("; ") || `exit status ${code}`;
	return new SessiondbFailed(msg.replace(/^sessiondb: (error: )?/, ""), code);
}

/** Hands `f` each whole line of a text stream; the returned function gives what follows the last one. */
function onLines(stream: NodeJS.ReadableStream, f: (line: string) => void): () => string {
	let partial = "";
	stream.setEncoding("utf8");
	stream.on("data", (s: string) => {
		partial += s;
		for (let nl = partial.indexOf("\n"); nl >= 0; nl = partial.indexOf("\n")) {
			f(partial.slice(0, nl));
			partial = partial.slice(nl + 1);
		}
	});
	return () => partial;
}

/** Runs `sessiondb [--db DB] ARGS...`; resolves with stdout, rejects with a typed error. */
export function run(cli: Cli, args: string[], opts: RunOptions): Promise<string> {
	const argv = argvOf(cli, args);
	return new Promise((resolvePromise, reject) => {
		let settled = false;
		const settle = (f: () => void) => {
			if (settled) return;
			settled = true;
			clearTimeout(timer);
			f();
		};
		const child = spawn(cli.bin, argv, { signal: opts.signal, stdio: ["ignore", "pipe", "pipe"] });
		let timedOut = false;
		const timer = setTimeout(() => {
			timedOut = true;
			child.kill();
		}, opts.timeoutMs);
		const out: Buffer[] = [];
		let err = "";
		const stderrLine = (line: string) => {
			if (opts.onProgress && line.startsWith('{"progress"')) {
				try {
					opts.onProgress(JSON.parse(line) as Progress);
					return;
				} catch {
					// not a progress line after all: keep it as text
				}
			}
			err = `${err}${line}\n`.slice(-STDERR_KEPT);
		};
		child.stdout.on("data", (b: Buffer) => out.push(b));
		const rest = onLines(child.stderr, stderrLine);
		child.on("error", (e: NodeJS.ErrnoException) => settle(() => reject(spawnError(cli.bin, e))));
		child.on("close", (code, signal) =>
			settle(() => {
				const tail = rest();
				if (tail) stderrLine(tail);
				const stdout = Buffer.concat(out).toString("utf8");
				if (code === 0 || (code !== null && opts.okCodes?.includes(code))) return resolvePromise(stdout);
				if (timedOut || signal) {
					return reject(new SessiondbFailed(`sessiondb ${args[0]} did not finish within ${Math.round(opts.timeoutMs / 1000)} s`, null));
				}
				reject(exitError(err, code));
			}),
		);
	});
}

/** Runs a `--json` command and parses its output. */
export async function runJson<T>(cli: Cli, args: string[], opts: RunOptions): Promise<T> {
	const out = await run(cli, [...args, "--json"], opts);
	try {
		return JSON.parse(out) as T;
	} catch {
		throw new SessiondbFailed(`sessiondb ${args[0]} --json printed something that is not JSON: ${out.slice(0, 200)}`, 0);
	}
}

/** What `sessiondb paths --json` answers: the database and pi's folders, as the binary decides them. */
export interface Paths {
	/** The database `--db` names, else the CLI's default (a URL without its password). */
	database: string;
	/** Whether it is a PostgreSQL URL (`postgres://` or `postgresql://`, the scheme in any case). */
	server: boolean;
	/** Whether the database file exists (a server: true). */
	exists: boolean;
	/** pi's agent dir. */
	agentDir: string;
	/** The folder of every project's session folder (pi's getSessionsDir). */
	sessionsRoot: string;
	/** The folder pi writes sessions in as the environment says ($PI_CODING_AGENT_SESSION_DIR, else the root). */
	sessionsDir: string;
}

/** The database and pi's folders, asked of the binary: these rules are its own, not restated here. */
export function paths(cli: Cli, opts: RunOptions = { timeoutMs: 10_000 }): Promise<Paths> {
	return runJson<Paths>(cli, ["paths"], opts);
}

/** A request written to a `sync --stdin` process and not answered yet. */
interface Waiting {
	resolve: (v: Record<string, unknown>) => void;
	reject: (e: Error) => void;
}

/** One `sync --stdin` process and what it owes. */
interface SyncProcess {
	child: ChildProcess;
	/** Oldest first: answers come in the order of the requests. */
	waiting: Waiting[];
	err: string;
}

/**
 * A `sessiondb sync --stdin` process kept open between turns: the sync after each turn is one
 * line written and one read, without starting a process and connecting each time (most of a
 * per-turn sync's time on a PostgreSQL server). It starts at the first request, ends when
 * `close()` ends its input (or pi exits), and is started again after it died.
 */
export class HeldSync {
	private proc: SyncProcess | null = null;
	/** The binary has no `--stdin` (older than this package): each sync is a process of its own. */
	unsupported = false;

	constructor(
		readonly cli: Cli,
		/** The sessions directory the files are below. */
		readonly root: string,
	) {}

	/** Syncs the files; resolves with the summary `sync --json` prints. */
	sync(files: string[], timeoutMs: number): Promise<Record<string, unknown>> {
		const p = this.proc ?? this.start();
		return new Promise((resolvePromise, reject) => {
			const timer = setTimeout(() => {
				this.fail(p, new SessiondbFailed(`sessiondb sync did not finish within ${Math.round(timeoutMs / 1000)} s`, null));
			}, timeoutMs);
			p.waiting.push({
				resolve: (v) => {
					clearTimeout(timer);
					resolvePromise(v);
				},
				reject: (e) => {
					clearTimeout(timer);
					reject(e);
				},
			});
			ref(p.child, true);
			p.child.stdin?.write(`${JSON.stringify(files)}\n`);
		});
	}

	/** Ends the process's input: it exits once the requests written are answered. */
	close(): void {
		this.proc?.child.stdin?.end();
		this.proc = null;
	}

	private start(): SyncProcess {
		const argv = argvOf(this.cli, ["sync", "--stdin", "--sessions-dir", this.root]);
		const child = spawn(this.cli.bin, argv, { stdio: ["pipe", "pipe", "pipe"] });
		const p: SyncProcess = { child, waiting: [], err: "" };
		this.proc = p;
		onLines(child.stdout, (line) => answer(p, line));
		// Read, or a full pipe would stop the process.
		child.stderr.setEncoding("utf8");
		child.stderr.on("data", (s: string) => {
			p.err = `${p.err}${s}`.slice(-STDERR_KEPT);
		});
		child.stdin.on("error", () => {}); // a dead process: reported by "close"
		child.on("error", (e: NodeJS.ErrnoException) => this.fail(p, spawnError(this.cli.bin, e)));
		child.on("close", (code) => {
			if (code === 2 && /--stdin/.test(p.err)) this.unsupported = true;
			this.fail(p, exitError(p.err, code));
		});
		ref(child, false);
		return p;
	}

	/** Rejects what `p` owes; `p` is stopped, and replaced at the next request if it was the current one. */
	private fail(p: SyncProcess, e: Error): void {
		if (this.proc === p) this.proc = null;
		p.child.kill();
		for (const w of p.waiting.splice(0)) w.reject(e);
	}
}

/** One answer line, for the oldest request. */
function answer(p: SyncProcess, line: string): void {
	const w = p.waiting.shift();
	if (!w) return;
	if (p.waiting.length === 0) ref(p.child, false);
	let v: Record<string, unknown>;
	try {
		v = JSON.parse(line) as Record<string, unknown>;
	} catch {
		return w.reject(new SessiondbFailed(`sessiondb sync --stdin answered something that is not JSON: ${line.slice(0, 200)}`, 0));
	}
	if (typeof v.error === "string") w.reject(new SessiondbFailed(v.error, 1));
	else w.resolve(v);
}

/** While a request waits, the process keeps pi's event loop alive; between turns it does not. */
function ref(c: ChildProcess, on: boolean): void {
	for (const h of [c, c.stdin, c.stdout, c.stderr] as Array<{ ref?: () => void; unref?: () => void } | null>) {
		if (on) h?.ref?.();
		else h?.unref?.();
	}
}

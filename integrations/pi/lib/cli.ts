// Finding and running the sessiondb CLI. Everything goes through `sessiondb ... --json`, run
// asynchronously with a timeout (progress read from stderr as it comes), so a slow or broken sessiondb never blocks or crashes pi.
import { spawn } from "node:child_process";
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, isAbsolute, join, resolve } from "node:path";

export const INSTALL_HINT =
	"Install it from a checkout of the sessiondb repository with `cargo install --path .` (it lands in " +
	"~/.cargo/bin), or point this package at a binary with the SESSIONDB_BIN environment " +
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
 * The binary to run: $SESSIONDB_BIN, else the `sessiondb.bin` setting, else `sessiondb` on PATH,
 * else ~/.cargo/bin/sessiondb (where `cargo install` puts it, often not on PATH).
 */
export function findBinary(settings: SessiondbSettings, cwd: string): { bin: string } | { missing: string } {
	const configured = process.env.SESSIONDB_BIN || settings.bin;
	if (configured) {
		const p = expandHome(configured, cwd);
		const from = process.env.SESSIONDB_BIN ? "SESSIONDB_BIN" : "the sessiondb.bin setting";
		return isExecutable(p) ? { bin: p } : { missing: `${from} names ${p}, which is not an executable file` };
	}
	for (const dir of (process.env.PATH ?? "").split(delimiter)) {
		if (dir && isExecutable(join(dir, "sessiondb"))) return { bin: join(dir, "sessiondb") };
	}
	const cargo = join(homedir(), ".cargo", "bin", "sessiondb");
	if (isExecutable(cargo)) return { bin: cargo };
	return { missing: "no `sessiondb` on PATH or in ~/.cargo/bin" };
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

/** Runs `sessiondb [--db DB] ARGS...`; resolves with stdout, rejects with a typed error. */
export function run(cli: Cli, args: string[], opts: RunOptions): Promise<string> {
	const argv = cli.db ? ["--db", cli.db, ...args] : args;
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
		let partial = "";
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
		child.stderr.setEncoding("utf8");
		child.stderr.on("data", (s: string) => {
			partial += s;
			for (let nl = partial.indexOf("\n"); nl >= 0; nl = partial.indexOf("\n")) {
				stderrLine(partial.slice(0, nl));
				partial = partial.slice(nl + 1);
			}
		});
		child.on("error", (e: NodeJS.ErrnoException) =>
			settle(() => {
				if (e.code === "ENOENT" || e.code === "EACCES") reject(new SessiondbMissing(`cannot run ${cli.bin} (${e.code})`));
				else if (e.name === "AbortError") reject(new SessiondbFailed("cancelled", null));
				else reject(new SessiondbFailed(`cannot run ${cli.bin}: ${e.message}`, null));
			}),
		);
		child.on("close", (code, signal) =>
			settle(() => {
				if (partial) stderrLine(partial);
				const stdout = Buffer.concat(out).toString("utf8");
				if (code === 0 || (code !== null && opts.okCodes?.includes(code))) return resolvePromise(stdout);
				if (timedOut || signal) {
					return reject(new SessiondbFailed(`sessiondb ${args[0]} did not finish within ${Math.round(opts.timeoutMs / 1000)} s`, null));
				}
				const msg = err.trim().split("\n").filter(Boolean).slice(-3).join("; ") || `exit status ${code}`;
				reject(new SessiondbFailed(msg.replace(/^sessiondb: (error: )?/, ""), code));
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

export function dbExists(cli: Cli): boolean {
	const db = cli.db || process.env.SESSIONDB_PATH || join(homedir(), ".pi", "agent", "sessiondb.sqlite");
	return /^postgres(ql)?:\/\//.test(db) || existsSync(db);
}

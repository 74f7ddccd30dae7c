// Finding and running the sessiondb CLI. Everything goes through `sessiondb ... --json`, run
// asynchronously with a timeout, so a slow or broken sessiondb never blocks or crashes pi.
import { execFile } from "node:child_process";
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
}

export interface Cli {
	bin: string;
	db?: string;
}

/** Runs `sessiondb [--db DB] ARGS...`; resolves with stdout, rejects with a typed error. */
export function run(cli: Cli, args: string[], opts: RunOptions): Promise<string> {
	const argv = cli.db ? ["--db", cli.db, ...args] : args;
	return new Promise((resolvePromise, reject) => {
		execFile(
			cli.bin,
			argv,
			{ timeout: opts.timeoutMs, signal: opts.signal, maxBuffer: 64 * 1024 * 1024, encoding: "utf8" },
			(err, stdout, stderr) => {
				if (!err) return resolvePromise(stdout);
				const e = err as NodeJS.ErrnoException & { code?: string | number; killed?: boolean; signal?: string };
				if (e.code === "ENOENT" || e.code === "EACCES") {
					return reject(new SessiondbMissing(`cannot run ${cli.bin} (${e.code})`));
				}
				if (e.name === "AbortError") return reject(new SessiondbFailed("cancelled", null));
				if (e.killed || e.signal) {
					return reject(
						new SessiondbFailed(`sessiondb ${args[0]} did not finish within ${Math.round(opts.timeoutMs / 1000)} s`, null),
					);
				}
				const code = typeof e.code === "number" ? e.code : null;
				if (code !== null && opts.okCodes?.includes(code)) return resolvePromise(stdout);
				const msg = stderr.trim().split("\n").filter(Boolean).slice(-3).join("; ") || `exit status ${code}`;
				reject(new SessiondbFailed(msg.replace(/^sessiondb: (error: )?/, ""), code));
			},
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
	return existsSync(db);
}

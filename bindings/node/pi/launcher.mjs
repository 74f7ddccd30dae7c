#!/usr/bin/env node
// sessiondb-pi: pi's own CLI with its sessions in a sessiondb database.
//
// It finds pi (1.6.x), registers Node module hooks that give pi's code sessiondb's
// SessionManager in place of its own (everything else is pi's), and runs pi's CLI with every
// argument but `--db`. Nothing of pi's is copied or changed on disk. See
// bindings/node/README.md, "sessiondb-pi".
import fs from "node:fs";
import module from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createHash } from "node:crypto";
import { extension, resumeLine, show, tuiState } from "./session-extension.mjs";

const SUPPORTED = /^1\.6\.\d+$/;
const SUPPORTED_TEXT = "1.6.x";
const PI = "@earendil-works/pi-coding-agent";
const here = path.dirname(fileURLToPath(import.meta.url));

function fail(message) {
	process.stderr.write(`sessiondb-pi: ${message}\n`);
	process.exit(1);
}

/** Where pi is: $SESSIONDB_PI_PACKAGE, else resolvable from the current folder, else the global npm root. */
function findPi() {
	const env = process.env.SESSIONDB_PI_PACKAGE;
	if (env) {
		const root = path.resolve(env);
		if (!fs.existsSync(path.join(root, "package.json"))) fail(`$SESSIONDB_PI_PACKAGE=${env} holds no package.json`);
		return root;
	}
	const candidates = [];
	for (let dir = process.cwd(); ; dir = path.dirname(dir)) {
		candidates.push(path.join(dir, "node_modules", PI));
		if (path.dirname(dir) === dir) break;
	}
	// Installed globally beside this package (npm install -g), then npm's default global root.
	candidates.push(path.resolve(here, "..", "..", PI));
	candidates.push(path.resolve(here, "..", "..", "..", PI));
	const prefix = process.env.npm_config_prefix || path.dirname(path.dirname(process.execPath));
	candidates.push(path.join(prefix, "lib", "node_modules", PI));
	for (const c of candidates) if (fs.existsSync(path.join(c, "package.json"))) return c;
	fail(`cannot find pi (${PI}): install it (npm install -g ${PI}@1.6) or set $SESSIONDB_PI_PACKAGE to its folder`);
}

/** `--db PATH` / `--db=PATH` taken out of the arguments (pi does not know it). */
function takeDbArg(args) {
	for (let i = 0; i < args.length; i++) {
		if (args[i] === "--") break;
		if (args[i] === "--db") {
			if (i + 1 >= args.length) fail("--db needs a database path or postgres:// URL");
			const v = args[i + 1];
			args.splice(i, 2);
			return v;
		}
		if (args[i].startsWith("--db=")) {
			const v = args[i].slice(5);
			args.splice(i, 1);
			return v;
		}
	}
	return undefined;
}

const piRoot = findPi();
let version;
try {
	version = JSON.parse(fs.readFileSync(path.join(piRoot, "package.json"), "utf8")).version;
} catch (e) {
	fail(`cannot read pi's package.json in ${piRoot}: ${e.message}`);
}
const managerFile = path.join(piRoot, "dist", "core", "session-manager.js");
const exportFile = path.join(piRoot, "dist", "core", "export-html", "index.js");
const selectorFile = path.join(piRoot, "dist", "modes", "interactive", "components", "session-selector.js");
const cliFile = path.join(piRoot, "dist", "cli.js");
if (!SUPPORTED.test(String(version)) || !fs.existsSync(managerFile) || !fs.existsSync(cliFile)) {
	fail(
		`pi ${version} at ${piRoot} is not supported (sessiondb-pi supports pi ${SUPPORTED_TEXT}); ` +
			`run it as \`pi\`, or install ${PI}@1.6 and point $SESSIONDB_PI_PACKAGE at it`,
	);
}
if (typeof module.registerHooks !== "function") {
	fail(`Node ${process.version} has no module.registerHooks; sessiondb-pi needs Node 22.19 or later`);
}

const args = process.argv.slice(2);
const dbArg = takeDbArg(args);
const filesOff = /^(off|0|false|no)$/i.test(process.env.SESSIONDB_PI_FILES ?? "");

const require = module.createRequire(import.meta.url);
let SessionManager;
let layout; // pi's folders, as the Rust library decides them
try {
	({ SessionManager, layout } = require("../index.cjs"));
	if (dbArg !== undefined) SessionManager.useDatabase(dbArg);
} catch (e) {
	fail(e.message);
}
let db;
try {
	db = SessionManager.databasePath();
} catch (e) {
	fail(e.message);
}
SessionManager.useFiles(!filesOff);
// One writer per session (see bindings/node/README.md, "Leases"): the line saying a session
// was continued in a fork goes to the TUI's screen, or to stderr in -p/json/rpc modes.
const interactive = isInteractive(args);
const tui = tuiState();
let injected = false; // pi's main was given our extension (see withOptions)
SessionManager.onLeaseNotice((notice) => {
	if (interactive && injected) show(tui, `sessiondb-pi: ${notice.message}`);
	else process.stderr.write(`sessiondb-pi: ${notice.message}\n`);
});
releaseLeasesOnSignals();
if (interactive) {
	// After pi's own exit (it stopped its TUI and printed its resume hint): ours, on one line.
	process.once("exit", () => {
		try {
			const line = resumeLine(tui, dbArg);
			if (line) fs.writeSync(1, `${line}\n`);
		} catch {
			// no line rather than a crash on the way out
		}
	});
}
// pi's `main(args)` is given `{ extensionFactories: [our hidden extension] }` (a load hook
// rewrites the one call of its CLI's entry module; without it, only the TUI's lines are lost).
const MAIN_CALL = "main(process.argv.slice(2))";
globalThis[Symbol.for("sessiondb.piMainOptions")] = {
	extensionFactories: [{ name: "sessiondb-pi", factory: extension(tui), hidden: true }],
};
function withOptions(source) {
	if (source.split(MAIN_CALL).length !== 2) return source; // another build of pi: lines go to stderr
	injected = true;
	return source.replace(MAIN_CALL, `main(process.argv.slice(2),globalThis[Symbol.for("sessiondb.piMainOptions")])`);
}
// The pi package (integrations/pi) reads these and leaves the syncing to the launcher.
process.env.SESSIONDB_PI_LAUNCHER = "1";
process.env.SESSIONDB_PATH = db;

firstStart();

// With files (the default), pi's own `pi` command runs: its bundle declares the class once as
// `var SessionManager=class _SessionManager{`; a load hook makes that one declaration take
// sessiondb's class instead (pi's class is kept under another name and never used). The chunk
// holding it is found before pi starts; a bundle without exactly one such declaration (another
// build of pi), or SESSIONDB_PI_FILES=off (whose exporter and session selector are wrapped as
// modules), runs pi's unbundled CLI with the module redirects below.
const BUNDLE_DECLARATION = "var SessionManager=class _SessionManager{";
// pi makes each of these classes in one place; a load hook patches the class there, before its
// first use. Without exactly one such place (another build of pi), pi's class runs unpatched.
// - TreeList (/tree): its rows read a native scan of the assistants, not their bodies
//   (pi/tree-selector.mjs);
// - SessionList (/resume): its threading resolves every session's path (pi/session-list.mjs);
// - FooterComponent: its usage totals read the store's usage rows, not every entry
//   (pi/footer.mjs).
function patchedNew(className, patch) {
	const marker = `new ${className}(`;
	const slot = `sessiondb.${className}`;
	globalThis[Symbol.for(slot)] = patch;
	const apply = (source) =>
		source.split(marker).length === 2 ? source.replace(marker, `new (globalThis[Symbol.for(${JSON.stringify(slot)})](${className}))(`) : source;
	return { marker, apply };
}
const treeList = patchedNew("TreeList", (await import("./tree-selector.mjs")).patch);
const sessionList = patchedNew("SessionList", (await import("./session-list.mjs")).patch);
const footer = patchedNew("FooterComponent", (await import("./footer.mjs")).patch);
const PATCHED_NEW = [treeList, sessionList, footer];
const bundleCli = path.join(piRoot, "dist", "bundle", "cli.js");
const bundle = filesOff || process.env.SESSIONDB_PI_UNBUNDLED === "1" ? null : findBundleChunk();
const bundleChunk = bundle?.chunk ?? null;
if (bundleChunk !== null) {
	const chunkUrl = pathToFileURL(bundleChunk).href;
	// The chunk making each patched class, when exactly one does.
	const makers = new Map();
	for (const [p, file] of bundle.makers) {
		const url = pathToFileURL(file).href;
		makers.set(url, [...(makers.get(url) ?? []), p]);
	}
	const runtimeUrl = pathToFileURL(path.join(piRoot, "dist", "bundle", "cli-runtime.js")).href;
	const slot = Symbol.for("sessiondb.SessionManager");
	globalThis[slot] = SessionManager;
	module.registerHooks({
		load(url, context, nextLoad) {
			const r = nextLoad(url, context);
			if (url === runtimeUrl) return { ...r, source: withOptions(String(r.source)) };
			const patches = makers.get(url);
			if (url !== chunkUrl && patches === undefined) return r;
			let source = String(r.source);
			for (const p of patches ?? []) source = p.apply(source);
			if (url === chunkUrl) {
				source = source.replace(BUNDLE_DECLARATION, `var SessionManager=globalThis[Symbol.for("sessiondb.SessionManager")],__piSessionManager=class _SessionManager{`);
			}
			return { ...r, source };
		},
	});
	module.enableCompileCache?.();
	process.argv = [process.argv[0], bundleCli, ...args];
	await import(pathToFileURL(bundleCli).href);
} else {
	await runUnbundled();
}

/**
 * The bundle chunk declaring SessionManager exactly once (else null), and for each class of
 * PATCHED_NEW, the chunk making it when exactly one does (`makers`; none: pi's runs unpatched).
 */
function findBundleChunk() {
	const dir = path.join(piRoot, "dist", "bundle", "chunks");
	let found = null;
	const making = new Map(PATCHED_NEW.map((p) => [p, []]));
	try {
		for (const name of fs.readdirSync(dir)) {
			if (!name.endsWith(".js")) continue;
			const text = fs.readFileSync(path.join(dir, name), "latin1");
			for (const [p, files] of making) if (text.includes(p.marker)) files.push(path.join(dir, name));
			const at = text.indexOf(BUNDLE_DECLARATION);
			if (at === -1) continue;
			if (found !== null || text.indexOf(BUNDLE_DECLARATION, at + 1) !== -1) return null;
			found = path.join(dir, name);
		}
	} catch {
		return null;
	}
	if (found === null || !fs.existsSync(bundleCli)) return null;
	const makers = new Map([...making].filter(([, files]) => files.length === 1).map(([p, files]) => [p, files[0]]));
	return { chunk: found, makers };
}

async function runUnbundled() {
	// pi's modules import ./session-manager.js (and export-html/index.js): they get a module that
	// re-exports all of pi's, with sessiondb's SessionManager (and, for a session kept in the
	// database only, an HTML export that writes the file pi's exporter reads to a temporary folder,
	// and a session selector whose delete removes the session from the database).
	const managerUrl = pathToFileURL(managerFile).href;
	const exportUrl = pathToFileURL(exportFile).href;
	const shims = new Map([
		[managerUrl, { url: `${managerUrl}?sessiondb-pi`, source: `export * from ${JSON.stringify(managerUrl)};\nexport { SessionManager } from ${JSON.stringify(pathToFileURL(path.join(here, "session-manager.mjs")).href)};\n` }],
		[exportUrl, { url: `${exportUrl}?sessiondb-pi`, source: [
			`import * as pi from ${JSON.stringify(exportUrl)};`,
			`import { wrap } from ${JSON.stringify(pathToFileURL(path.join(here, "export-html.mjs")).href)};`,
			`export * from ${JSON.stringify(exportUrl)};`,
			"const wrapped = wrap(pi);",
			"export const exportSessionToHtml = wrapped.exportSessionToHtml;",
			"export const exportFromFile = wrapped.exportFromFile;",
		].join("\n") }],
	]);
	const selectorUrl = pathToFileURL(selectorFile).href;
	const modes = path.join(piRoot, "dist", "modes", "interactive");
	// The module making each patched class.
	const makers = new Map([
		[pathToFileURL(path.join(modes, "components", "tree-selector.js")).href, treeList],
		[pathToFileURL(path.join(modes, "interactive-mode.js")).href, footer],
	]);
	const cliUrl = pathToFileURL(cliFile).href;
	shims.set(selectorUrl, {
		url: `${selectorUrl}?sessiondb-pi`,
		source: [
			`import * as pi from ${JSON.stringify(selectorUrl)};`,
			`import { wrap } from ${JSON.stringify(pathToFileURL(path.join(here, "session-selector.mjs")).href)};`,
			`export * from ${JSON.stringify(selectorUrl)};`,
			"export const SessionSelectorComponent = wrap(pi.SessionSelectorComponent);",
		].join("\n"),
	});
	const shimSources = new Map([...shims.values()].map((s) => [s.url, s.source]));
	const shimUrls = new Set(shimSources.keys());
	module.registerHooks({
		resolve(specifier, context, nextResolve) {
			const r = nextResolve(specifier, context);
			const shim = shims.get(r.url);
			if (shim && !shimUrls.has(context.parentURL) && !context.parentURL?.startsWith(pathToFileURL(here).href)) {
				return { ...r, url: shim.url, shortCircuit: true };
			}
			return r;
		},
		load(url, context, nextLoad) {
			const source = shimSources.get(url);
			if (source !== undefined) return { format: "module", source, shortCircuit: true };
			const r = nextLoad(url, context);
			if (url === cliUrl) return { ...r, source: withOptions(String(r.source)) };
			const p = makers.get(url);
			if (p !== undefined) return { ...r, source: p.apply(String(r.source)) };
			return r;
		},
	});
	module.enableCompileCache?.();

	process.argv = [process.argv[0], cliFile, ...args];
	await import(pathToFileURL(cliFile).href);
}

/**
 * The first start with a database: the user's existing session folders are imported once
 * (a progress line on a terminal). A marker beside pi's settings remembers it per database.
 */
function firstStart() {
	const agentDir = layout.agentDir();
	const sessionsDir = layout.sessionsDir();
	const marker = path.join(agentDir, "sessiondb-pi.json");
	const key = createHash("sha256").update(`${db}\0${sessionsDir}`).digest("hex");
	let state = { imported: [] };
	try {
		state = JSON.parse(fs.readFileSync(marker, "utf8"));
		if (!Array.isArray(state.imported)) state.imported = [];
	} catch {
		// no marker yet
	}
	if (state.imported.includes(key)) return;
	if (fs.existsSync(sessionsDir)) {
		const tty = Boolean(process.stderr.isTTY);
		const started = Date.now();
		let summary;
		try {
			summary = SessionManager.importFolders([sessionsDir], tty);
		} catch (e) {
			fail(`importing ${sessionsDir} into ${db} failed: ${e.message}`);
		}
		for (const f of summary.failed ?? []) process.stderr.write(`sessiondb-pi: not imported: ${f}\n`);
		if (tty && summary.files) {
			process.stderr.write(
				`sessiondb-pi: ${summary.sessions} sessions imported from ${sessionsDir} into ${db} in ${((Date.now() - started) / 1000).toFixed(1)} s (once)\n`,
			);
		}
	}
	state.imported.push(key);
	try {
		fs.mkdirSync(agentDir, { recursive: true });
		fs.writeFileSync(marker, `${JSON.stringify(state, null, "\t")}\n`);
	} catch (e) {
		process.stderr.write(`sessiondb-pi: cannot write ${marker} (${e.message}); the import runs again next time\n`);
	}
}

/** Whether pi runs its interactive TUI with these arguments (pi's resolveAppMode). */
function isInteractive(argv) {
	if (!process.stdin.isTTY || !process.stdout.isTTY) return false;
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];
		if (a === "--") break;
		if (a === "-p" || a === "--print") return false;
		if (a === "--mode" && (argv[i + 1] === "json" || argv[i + 1] === "rpc")) return false;
	}
	return true;
}

/**
 * SIGINT, SIGTERM and SIGHUP release this process's leases first; then whoever else listens
 * (pi's TUI shuts down) handles the signal, or, when no one does, Node's default (exit) runs.
 * Registered before pi's own handlers, and removed when it runs, so pi's see themselves alone.
 */
function releaseLeasesOnSignals() {
	for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
		const handler = () => {
			SessionManager.releaseLeases();
			process.removeListener(signal, handler);
			if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
		};
		process.on(signal, handler);
	}
}

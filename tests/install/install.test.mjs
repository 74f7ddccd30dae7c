// Installs the packed tarballs (test.sh makes them with bindings/node/pack.mjs) as a user
// without Rust would: npm under an empty HOME, with a PATH that holds node and the system's
// tools but no cargo or rustc. Then the three ways in must work: the `sessiondb` command (through
// its JS shim), `sessiondb-pi` on pi 1.6.0 from npm, `require("sessiondb")`, and the pi package
// finding its executable through its `sessiondb` dependency.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..", "..");
const tarballs = process.env.SESSIONDB_TARBALLS;
const work = process.env.SESSIONDB_INSTALL_WORK;
assert.ok(tarballs && work, "run through tests/install/test.sh");
const nodeHome = process.env.SESSIONDB_NODE_HOME;
const nodeDir = path.dirname(process.execPath);
const version = JSON.parse(fs.readFileSync(path.join(root, "bindings/node/package.json"), "utf8")).version;
const PI = "@earendil-works/pi-coding-agent";
const fauxExt = path.join(root, "bindings/node/test/pi/faux-provider-ext.mjs");

const tgz = (name) => {
	const f = path.join(tarballs, `${name}-${version}.tgz`);
	assert.ok(fs.existsSync(f), `${f} was not packed`);
	return f;
};
// The repository's platform.cjs names this machine's platform as the packages do.
const hostKey = createRequire(import.meta.url)(path.join(root, "bindings/node/platform.cjs")).hostKey();
const rootTgz = tgz("sessiondb");
const platformTgz = tgz(`sessiondb-${hostKey}`);
const piTgz = tgz("pi-sessiondb");

/**
 * A user's environment: this machine's (its proxy and CA settings reach the registry), with an
 * empty HOME, node and the system's tools on PATH, and nothing of Rust or of the repository.
 */
function userEnv(name, extra = {}) {
	const home = path.join(work, `home-${name}`);
	fs.mkdirSync(home, { recursive: true });
	const prefixBin = extra.prefix ? [path.join(extra.prefix, "bin")] : [];
	const inherited = Object.fromEntries(
		Object.entries(process.env).filter(([k]) => !/^(CARGO|RUST|SESSIONDB_|npm_|NODE_PATH$|INIT_CWD$)/i.test(k)),
	);
	return {
		...inherited,
		HOME: home,
		PATH: [...prefixBin, nodeDir, "/usr/local/bin", "/usr/bin", "/bin"].join(":"),
		npm_config_cache: path.join(home, ".npm"),
		npm_config_update_notifier: "false",
		npm_config_audit: "false",
		npm_config_fund: "false",
		npm_config_loglevel: "error",
		...extra.env,
	};
}

function sh(cmd, args, env, opts = {}) {
	const r = spawnSync(cmd, args, { env, encoding: "utf8", maxBuffer: 64 << 20, ...opts });
	if (r.error) throw r.error;
	return r;
}

function ok(r, what) {
	assert.equal(r.status, 0, `${what} exited ${r.status} (${r.signal ?? ""}):\n${r.stdout}\n${r.stderr}`);
	return r;
}

const prefix = path.join(work, "global");
const env = userEnv("global", { prefix });
const bin = (name) => path.join(prefix, "bin", name);
const db = path.join(work, "user.sqlite");

test("the PATH of these installs has no Rust toolchain", () => {
	for (const tool of ["cargo", "rustc"]) {
		const r = sh("sh", ["-c", `command -v ${tool}`], env);
		assert.notEqual(r.status, 0, `${tool} is on the test's PATH: ${r.stdout}`);
	}
});

test("npm install -g of the root and platform tarballs: under 30 s, nothing compiled", () => {
	const started = process.hrtime.bigint();
	ok(sh("npm", ["install", "-g", "--prefix", prefix, rootTgz, platformTgz], env), "npm install -g");
	const seconds = Number(process.hrtime.bigint() - started) / 1e9;
	console.log(`# install took ${seconds.toFixed(1)} s`);
	assert.ok(seconds < 30, `the install took ${seconds.toFixed(1)} s`);
	const pkg = path.join(prefix, "lib/node_modules/sessiondb");
	// A build from source would have left these beside index.cjs (build.mjs).
	assert.equal(fs.existsSync(path.join(pkg, "sessiondb.node")), false, "the addon was built, not taken prebuilt");
	assert.equal(fs.existsSync(path.join(pkg, "native")), false, "the executable was built, not taken prebuilt");
	assert.ok(fs.existsSync(bin("sessiondb")) && fs.existsSync(bin("sessiondb-pi")));
});

test("sessiondb --version, import of examples/sessions, list --json", () => {
	const v = ok(sh(bin("sessiondb"), ["--version"], env), "sessiondb --version");
	assert.match(v.stdout, new RegExp(`^sessiondb ${version.replaceAll(".", "\\.")}\\b`));
	const files = fs.readdirSync(path.join(root, "examples/sessions"), { recursive: true }).filter((f) => f.endsWith(".jsonl"));
	ok(sh(bin("sessiondb"), ["--db", db, "import", path.join(root, "examples/sessions")], env), "sessiondb import");
	const list = JSON.parse(ok(sh(bin("sessiondb"), ["--db", db, "list", "--json"], env), "sessiondb list --json").stdout);
	assert.equal(list.length, files.length);
});

test("the shim keeps the exit status, stderr, stdin and stdout of the executable", () => {
	const exe = path.join(prefix, "lib/node_modules", `sessiondb-${hostKey}`, "sessiondb");
	const viaShim = sh(bin("sessiondb"), ["--db", db, "export", "no-such-session"], env);
	const direct = sh(exe, ["--db", db, "export", "no-such-session"], env);
	assert.notEqual(direct.status, 0);
	assert.equal(viaShim.status, direct.status);
	assert.equal(viaShim.stderr, direct.stderr);
	// A request on stdin, its answer on stdout, the end of stdin ends the process.
	const file = fs.readdirSync(path.join(root, "examples/sessions"), { recursive: true }).find((f) => f.endsWith(".jsonl"));
	const r = ok(sh(bin("sessiondb"), ["--db", db, "sync", "--stdin"], env, { input: `${JSON.stringify([path.join(root, "examples/sessions", file)])}\n` }), "sync --stdin");
	assert.equal(r.stdout.trim().split("\n").length, 1);
	assert.doesNotThrow(() => JSON.parse(r.stdout));
});

test("the shim behind a closed pipe ends as the executable does, with nothing on stderr", () => {
	const big = path.join(work, "big.sqlite");
	// A session far larger than a pipe's buffer, so that `head` closes the pipe mid-export.
	const src = path.join(work, "big.jsonl");
	const lines = [JSON.stringify({ type: "session", version: 3, id: "big-session-0001", timestamp: "2026-01-01T00:00:00.000Z", cwd: work })];
	for (let i = 0; i < 20000; i++) {
		const message = { role: "user", content: `message ${i} ${"x".repeat(100)}`, timestamp: i };
		lines.push(JSON.stringify({ type: "message", id: `m${i}`, parentId: i ? `m${i - 1}` : null, timestamp: "2026-01-01T00:00:01.000Z", message }));
	}
	fs.writeFileSync(src, `${lines.join("\n")}\n`);
	ok(sh(bin("sessiondb"), ["--db", big, "import", src], env), "import");
	const [session] = JSON.parse(ok(sh(bin("sessiondb"), ["--db", big, "list", "--json"], env), "list").stdout);
	const exe = path.join(prefix, "lib/node_modules", `sessiondb-${hostKey}`, "sessiondb");
	const run = (cmd) => sh("bash", ["-c", `"${cmd}" --db "${big}" export "${session.id}" | head -c 10 >/dev/null; echo "\${PIPESTATUS[0]}"`], env);
	const shim = run(bin("sessiondb"));
	const direct = run(exe);
	assert.equal(shim.stdout, direct.stdout);
	assert.equal(shim.stderr, direct.stderr);
	assert.equal(shim.stderr, "");
});

test("a signal sent to the shim reaches the executable, and the shim dies of it", async () => {
	const child = spawn(bin("sessiondb"), ["--db", db, "sync", "--stdin"], { env, stdio: ["pipe", "pipe", "pipe"] });
	// The executable is the shim's one child.
	let grandchild = null;
	for (let i = 0; i < 100 && !grandchild; i++) {
		await new Promise((r) => setTimeout(r, 50));
		try {
			const kids = fs.readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim();
			if (kids) grandchild = Number(kids.split(/\s+/)[0]);
		} catch {
			// not yet
		}
	}
	assert.ok(grandchild, "the shim started no executable");
	assert.match(fs.readFileSync(`/proc/${grandchild}/cmdline`, "utf8"), /sessiondb\0--db/);
	const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
	child.kill("SIGTERM");
	const ended = await Promise.race([exited, new Promise((r) => setTimeout(() => r(null), 10000))]);
	if (!ended) {
		for (const pid of [grandchild, child.pid]) {
			try {
				process.kill(pid, "SIGKILL");
			} catch {
				// gone
			}
		}
		assert.fail("the shim did not end within 10 s of SIGTERM");
	}
	assert.equal(ended.signal, "SIGTERM", `the shim exited with ${ended.code}`);
	let gone = false;
	for (let i = 0; i < 100 && !gone; i++) {
		try {
			const stat = fs.readFileSync(`/proc/${grandchild}/stat`, "utf8");
			gone = / Z /.test(stat.slice(stat.lastIndexOf(")")));
		} catch {
			gone = true;
		}
		if (!gone) await new Promise((r) => setTimeout(r, 50));
	}
	assert.ok(gone, "the executable outlived the shim");
});

test("require('sessiondb').SessionManager.inMemory() works from Node", () => {
	const script = `
		const { SessionManager } = require("sessiondb");
		const sm = SessionManager.inMemory();
		const id = sm.appendMessage({ role: "user", content: "hi", timestamp: 1 });
		const [e] = sm.getEntries();
		console.log(JSON.stringify({ same: e.id === id, n: sm.getEntries().length }));`;
	const r = ok(sh("node", ["-e", script], { ...env, NODE_PATH: path.join(prefix, "lib/node_modules") }), "node -e");
	assert.deepEqual(JSON.parse(r.stdout), { same: true, n: 1 });
});

test("sessiondb-pi -p --no-session on pi 1.6.0 from npm", () => {
	// pi from the registry into the same prefix, as `npm install -g @earendil-works/pi-coding-agent`
	// does; npm's cache that .ci/node.sh filled saves the download.
	const piEnv = { ...env, npm_config_cache: process.env.SESSIONDB_NPM_CACHE || env.npm_config_cache };
	ok(sh("npm", ["install", "-g", "--prefix", prefix, "--prefer-offline", `${PI}@1.6.0`], piEnv), `npm install -g ${PI}`);
	const r = ok(
		sh(bin("sessiondb-pi"), ["-p", "--no-session", "-e", fauxExt, "--provider", "faux", "--model", "faux-1", "hello"], {
			...env,
			SESSIONDB_PATH: path.join(work, "pi.sqlite"),
			SESSIONDB_NODE_HOME: nodeHome,
		}, { cwd: work }),
		"sessiondb-pi -p",
	);
	assert.equal(r.stdout.trim(), "ok 0");
});

test("the pi package finds sessiondb through its dependency, with none on PATH", () => {
	const project = path.join(work, "pkg");
	fs.mkdirSync(project, { recursive: true });
	const penv = userEnv("pkg"); // no prefix/bin on PATH: no `sessiondb` command to fall back on
	ok(sh("npm", ["install", "--prefix", project, rootTgz, platformTgz, piTgz], penv), "npm install of the pi package");
	const pkgDir = path.join(project, "node_modules/pi-sessiondb");
	const pi = path.join(prefix, "bin", "pi");
	ok(sh(pi, ["install", pkgDir], penv, { cwd: project }), "pi install");
	const pdb = path.join(work, "pkg.sqlite");
	const cwd = path.join(work, "pkg-cwd");
	fs.mkdirSync(cwd, { recursive: true });
	const r = sh(pi, ["-p", "-e", fauxExt, "--provider", "faux", "--model", "faux-1", "remember zanzibar"], {
		...penv,
		SESSIONDB_PATH: pdb,
		SESSIONDB_NODE_HOME: nodeHome,
	}, { cwd });
	ok(r, "pi -p with the package");
	assert.doesNotMatch(r.stderr, /sessiondb is not available/);
	const exe = path.join(project, "node_modules", `sessiondb-${hostKey}`, "sessiondb");
	const hits = JSON.parse(ok(sh(exe, ["--db", pdb, "search", "zanzibar", "--json"], penv), "search").stdout);
	assert.ok(JSON.stringify(hits).includes("zanzibar"), `the package synced nothing: ${JSON.stringify(hits)}`);
});

test("no prebuilt package and no cargo: one line naming the platform, nothing installed", () => {
	// npm 10 runs install scripts; npm 11 runs a global package's only when allowed: allow it, as
	// npm 10 would run it.
	const bare = path.join(work, "bare");
	const benv = userEnv("bare", { prefix: bare });
	const r = sh("npm", ["install", "-g", "--prefix", bare, "--allow-scripts=sessiondb", rootTgz], benv);
	assert.notEqual(r.status, 0, "the install succeeded without a platform package or cargo");
	assert.match(r.stderr, new RegExp(`sessiondb: the prebuilt package sessiondb-${hostKey} for ${hostKey} was not installed.*no Rust toolchain \\(cargo\\)`));
	assert.equal(fs.existsSync(path.join(bare, "lib/node_modules/sessiondb")), false, "a half-installed package is left");
	assert.equal(fs.existsSync(path.join(bare, "bin/sessiondb")), false, "a bin of a failed install is left");
});

test("installed with its script skipped and no platform package, sessiondb says which platform lacks", () => {
	const bare = path.join(work, "bare-noscript");
	const benv = userEnv("bare-noscript", { prefix: bare });
	ok(sh("npm", ["install", "-g", "--prefix", bare, "--ignore-scripts", rootTgz], benv), "npm install --ignore-scripts");
	const r = sh(path.join(bare, "bin/sessiondb"), ["--version"], benv);
	assert.equal(r.status, 1);
	assert.equal(r.stdout, "");
	assert.match(r.stderr, new RegExp(`^sessiondb: the sessiondb executable for ${hostKey} is missing: its package sessiondb-${hostKey} is not installed.*\\n$`));
	const js = sh("node", ["-e", 'require("sessiondb")'], { ...benv, NODE_PATH: path.join(bare, "lib/node_modules") });
	assert.notEqual(js.status, 0);
	assert.match(js.stderr, new RegExp(`the native addon for ${hostKey} is missing`));
});

// Builds from source with cargo (crates.io only, nothing prebuilt is downloaded): the native addon
// to sessiondb.node and the `sessiondb` executable to native/sessiondb, beside index.cjs, where
// platform.cjs finds them before any prebuilt package. The source is the repository this folder
// sits in, or the copy a packed root package carries in source/ (pack.mjs). Run by install.cjs
// when no prebuilt package fits, and by `npm run build`; SESSIONDB_NODE_PROFILE=debug for a
// debug build.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const debug = process.env.SESSIONDB_NODE_PROFILE === "debug";
const cargo = process.env.CARGO || "cargo";

/** The folder holding the binding's Cargo.toml: this one in the repository, source/bindings/node when packed. */
function crateDir() {
	const inPackage = path.join(here, "source", "bindings", "node");
	return fs.existsSync(path.join(inPackage, "Cargo.toml")) ? inPackage : here;
}

// A packed package builds in a temporary target folder, removed afterwards: a global install must
// not keep gigabytes of build products inside node_modules. The repository uses its own target/.
const packed = crateDir() !== here;
const scratch = packed && !process.env.CARGO_TARGET_DIR ? fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-build-")) : null;
const cargoEnv = scratch ? { ...process.env, CARGO_TARGET_DIR: scratch } : process.env;
process.on("exit", () => {
	if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

/** Runs one cargo build and returns the files of the artifact named `name` of kind `kind`. */
function build(args, name, kind) {
	const run = spawnSync(
		cargo,
		["build", ...(debug ? [] : ["--release"]), ...(packed ? ["--locked"] : []), ...args, "--message-format=json-render-diagnostics"],
		{ cwd: crateDir(), env: cargoEnv, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8", maxBuffer: 256 << 20 },
	);
	if (run.error) {
		console.error(`sessiondb: cannot run ${cargo} (${run.error.message}); install Rust from https://rustup.rs`);
		process.exit(1);
	}
	if (run.status !== 0) {
		console.error(`sessiondb: cargo build ${args.join(" ")} failed (exit ${run.status})`);
		process.exit(run.status ?? 1);
	}
	for (const line of run.stdout.split("\n")) {
		if (!line.startsWith("{")) continue;
		const msg = JSON.parse(line);
		if (msg.reason === "compiler-artifact" && msg.target?.name === name && msg.target.kind.includes(kind)) {
			return msg.executable ? [msg.executable] : msg.filenames;
		}
	}
	console.error(`sessiondb: cargo built no ${name}`);
	process.exit(1);
}

/** Copy beside, then rename: a running process keeps its mapped copy intact. */
function place(from, dest) {
	fs.mkdirSync(path.dirname(dest), { recursive: true });
	fs.copyFileSync(from, `${dest}.tmp`);
	fs.renameSync(`${dest}.tmp`, dest);
	console.error(`sessiondb: built ${dest}`);
}

const lib = build(["-p", "sessiondb-node"], "sessiondb_node", "cdylib").find((f) => /\.(so|dylib|dll)$/.test(f));
if (!lib) {
	console.error("sessiondb: cargo built no sessiondb_node library");
	process.exit(1);
}
place(lib, path.join(here, "sessiondb.node"));
if (process.env.SESSIONDB_NODE_ADDON_ONLY !== "1") {
	const [exe] = build(["-p", "sessiondb", "--bin", "sessiondb"], "sessiondb", "bin");
	place(exe, path.join(here, "native", path.basename(exe)));
}

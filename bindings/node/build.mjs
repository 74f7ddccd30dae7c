// Builds the native addon with cargo (crates.io only, no prebuilt download) and copies it to
// sessiondb.node beside index.cjs. Run by `npm install`; SESSIONDB_NODE_PROFILE=debug for a
// debug build.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const profile = process.env.SESSIONDB_NODE_PROFILE === "debug" ? [] : ["--release"];
const cargo = process.env.CARGO || "cargo";
const run = spawnSync(
	cargo,
	["build", ...profile, "-p", "sessiondb-node", "--message-format=json-render-diagnostics"],
	{ cwd: here, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8", maxBuffer: 256 << 20 },
);
if (run.error) {
	console.error(`sessiondb: cannot run ${cargo} (${run.error.message}); install Rust from https://rustup.rs`);
	process.exit(1);
}
if (run.status !== 0) {
	console.error(`sessiondb: cargo build failed (exit ${run.status})`);
	process.exit(run.status ?? 1);
}
let lib = null;
for (const line of run.stdout.split("\n")) {
	if (!line.startsWith("{")) continue;
	const msg = JSON.parse(line);
	if (msg.reason === "compiler-artifact" && msg.target?.name === "sessiondb_node" && msg.target.kind.includes("cdylib")) {
		lib = msg.filenames.find((f) => /\.(so|dylib|dll)$/.test(f));
	}
}
if (!lib) {
	console.error("sessiondb: cargo built no sessiondb_node library");
	process.exit(1);
}
const dest = path.join(here, "sessiondb.node");
// Copy beside, then rename: a running process keeps its mapped copy intact.
fs.copyFileSync(lib, `${dest}.tmp`);
fs.renameSync(`${dest}.tmp`, dest);
console.error(`sessiondb: built ${dest}`);

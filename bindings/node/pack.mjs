#!/usr/bin/env node
// Makes the npm tarballs of one platform's release (napi-rs's layout, see README "Packages"):
//   OUT/sessiondb-<version>.tgz             the root package: JS API, `sessiondb` and
//                                           `sessiondb-pi` bins, and the Rust source for a
//                                           build on a platform with no prebuilt package
//   OUT/sessiondb-<platform>-<version>.tgz  the addon and the executable, stripped of debug info
//   OUT/pi-sessiondb-<version>.tgz          the pi package (integrations/pi)
//
//   node bindings/node/pack.mjs --out DIR [--target TRIPLE] [--no-build] [--json]
//
// --target picks a platform of platform.cjs by its Rust triple (the release workflow's
// cross builds); the default is this machine. --no-build packs what target/ holds.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const platform = require("./platform.cjs");
const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..", "..");

function fail(message) {
	process.stderr.write(`pack: ${message}\n`);
	process.exit(2);
}

function parseArgs(argv) {
	const a = { out: null, target: null, build: true, json: false };
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		const value = () => argv[++i] ?? fail(`${arg} needs a value`);
		if (arg === "--out") a.out = path.resolve(value());
		else if (arg === "--target") a.target = value();
		else if (arg === "--no-build") a.build = false;
		else if (arg === "--json") a.json = true;
		else if (arg === "--help" || arg === "-h") {
			process.stdout.write(fs.readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n").slice(1, 13).map((l) => l.replace(/^\/\/ ?/, "")).join("\n") + "\n");
			process.exit(0);
		} else fail(`unknown argument ${arg} (see --help)`);
	}
	if (!a.out) fail("--out DIR is required (see --help)");
	return a;
}

function run(cmd, args, opts = {}) {
	const r = spawnSync(cmd, args, { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8", ...opts });
	if (r.error) fail(`cannot run ${cmd} (${r.error.message})`);
	if (r.status !== 0) fail(`${cmd} ${args.join(" ")} failed (exit ${r.status})`);
	return r.stdout;
}

const args = parseArgs(process.argv.slice(2));
const target = args.target
	? (platform.PLATFORMS.find((p) => p.target === args.target) ?? fail(`no platform builds ${args.target}`))
	: (platform.host() ?? fail(`no package is made for ${platform.hostKey()}`));
const rootJson = JSON.parse(fs.readFileSync(path.join(here, "package.json"), "utf8"));
const version = rootJson.version;
const cargoVersion = /^version\s*=\s*"([^"]+)"/m.exec(fs.readFileSync(path.join(repo, "Cargo.toml"), "utf8"))?.[1];
if (cargoVersion !== version) fail(`package.json is ${version} but Cargo.toml is ${cargoVersion}: release one version`);

// The native files, built in release (the profile the tests use: no second build of the crates).
const cross = args.target ? ["--target", args.target] : [];
if (args.build) {
	run("cargo", ["build", "--release", "--locked", ...cross, "-p", "sessiondb-node"], { cwd: repo, stdio: "inherit" });
	run("cargo", ["build", "--release", "--locked", ...cross, "-p", "sessiondb", "--bin", "sessiondb"], { cwd: repo, stdio: "inherit" });
}
const targetDir = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(repo, "target");
const releaseDir = path.join(targetDir, ...(args.target ? [args.target] : []), "release");
const addonBuilt = path.join(
	releaseDir,
	target.os === "win32" ? "sessiondb_node.dll" : target.os === "darwin" ? "libsessiondb_node.dylib" : "libsessiondb_node.so",
);
const exeBuilt = path.join(releaseDir, platform.executableFile(target.key));
for (const f of [addonBuilt, exeBuilt]) if (!fs.existsSync(f)) fail(`${f} is missing: build it (or drop --no-build)`);

const stage = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-pack-"));
fs.mkdirSync(args.out, { recursive: true });

function copyTree(from, to, skip = () => false) {
	fs.mkdirSync(to, { recursive: true });
	for (const e of fs.readdirSync(from, { withFileTypes: true })) {
		const src = path.join(from, e.name);
		if (skip(src, e)) continue;
		if (e.isDirectory()) copyTree(src, path.join(to, e.name), skip);
		else if (e.isFile()) fs.copyFileSync(src, path.join(to, e.name));
	}
}

/**
 * Debug info and local symbols out of a copied native file (Linux and macOS; Windows keeps them
 * in a .pdb): the addon keeps the symbols Node loads it by.
 */
function strip(file, kind) {
	if (target.os === "win32") return;
	const tool = process.env.STRIP || "strip";
	const flags = target.os === "darwin" ? ["-S", "-x"] : [kind === "addon" ? "--strip-unneeded" : "--strip-all"];
	const r = spawnSync(tool, [...flags, file], { stdio: "inherit" });
	if (r.error || r.status !== 0) fail(`${tool} ${flags.join(" ")} ${file} failed: set STRIP to a strip for ${target.target}`);
}

function npmPack(dir) {
	// npm is npm.cmd on Windows, which only a shell runs.
	const out = run("npm", ["pack", "--json", "--pack-destination", args.out], { cwd: dir, shell: process.platform === "win32" });
	const [info] = JSON.parse(out);
	const file = path.join(args.out, info.filename);
	return { name: info.name, file, bytes: fs.statSync(file).size, unpackedBytes: info.unpackedSize };
}

// 1. The platform package.
const platDir = path.join(stage, "platform");
fs.mkdirSync(platDir);
const addonName = platform.addonFile(target.key);
const exeName = platform.executableFile(target.key);
fs.copyFileSync(addonBuilt, path.join(platDir, addonName));
fs.copyFileSync(exeBuilt, path.join(platDir, exeName));
strip(path.join(platDir, addonName), "addon");
strip(path.join(platDir, exeName), "executable");
fs.chmodSync(path.join(platDir, exeName), 0o755);
const platJson = {
	name: platform.packageName(target.key),
	version,
	description: `sessiondb's native addon and executable for ${target.key}`,
	license: rootJson.license,
	os: [target.os],
	cpu: [target.cpu],
	...(target.libc ? { libc: [target.libc] } : {}),
	main: addonName,
	files: [addonName, exeName],
	engines: rootJson.engines,
};
fs.writeFileSync(path.join(platDir, "package.json"), `${JSON.stringify(platJson, null, 2)}\n`);
fs.writeFileSync(
	path.join(platDir, "README.md"),
	`# ${platJson.name}\n\nThe ${target.key} build of [sessiondb](https://www.npmjs.com/package/sessiondb): install \`sessiondb\`, which depends on this package.\n`,
);

// 2. The root package: package.json's `files`, and the Rust source for a build from source.
const rootDir = path.join(stage, "root");
fs.mkdirSync(rootDir);
for (const f of rootJson.files) {
	const src = path.join(here, f);
	if (!fs.existsSync(src)) continue;
	if (fs.statSync(src).isDirectory()) copyTree(src, path.join(rootDir, f));
	else fs.copyFileSync(src, path.join(rootDir, f));
}
fs.copyFileSync(path.join(here, "package.json"), path.join(rootDir, "package.json"));
fs.copyFileSync(path.join(here, "README.md"), path.join(rootDir, "README.md"));
const source = path.join(rootDir, "source");
for (const f of ["Cargo.toml", "Cargo.lock", "build.rs"]) {
	fs.mkdirSync(source, { recursive: true });
	fs.copyFileSync(path.join(repo, f), path.join(source, f));
}
for (const d of ["src", "migrations"]) copyTree(path.join(repo, d), path.join(source, d));
for (const f of ["Cargo.toml", "build.rs"]) {
	fs.mkdirSync(path.join(source, "bindings", "node"), { recursive: true });
	fs.copyFileSync(path.join(here, f), path.join(source, "bindings", "node", f));
}
copyTree(path.join(here, "src"), path.join(source, "bindings", "node", "src"));

// 3. The pi package, as it is: it depends on `sessiondb` of the same version.
const piDir = path.join(stage, "pi");
const piSrc = path.join(repo, "integrations", "pi");
const piJson = JSON.parse(fs.readFileSync(path.join(piSrc, "package.json"), "utf8"));
if (piJson.dependencies?.sessiondb !== version) fail(`integrations/pi depends on sessiondb ${piJson.dependencies?.sessiondb}, not ${version}`);
copyTree(piSrc, piDir, (src, e) => e.isDirectory() && ["node_modules", "test"].includes(e.name));

const made = [npmPack(rootDir), npmPack(platDir), npmPack(piDir)];
fs.rmSync(stage, { recursive: true, force: true });
if (args.json) process.stdout.write(`${JSON.stringify({ platform: target.key, version, packages: made }, null, 2)}\n`);
else {
	const mib = (n) => `${(n / 1048576).toFixed(1)} MiB`;
	for (const m of made) process.stdout.write(`${m.file}  ${mib(m.bytes)} (${mib(m.unpackedBytes)} unpacked)\n`);
}

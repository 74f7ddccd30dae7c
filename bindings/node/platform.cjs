// Which prebuilt package serves this machine, and where its files are: the one owner of the
// platform names (napi-rs's: `linux-x64-gnu`, `darwin-arm64`, `win32-x64-msvc`, ...), used by the
// addon's loader (index.cjs), the `sessiondb` command's shim (bin/sessiondb.cjs), the install
// script (install.cjs) and the packer (pack.mjs). It loads no native code, so the pi package can
// ask it for the executable cheaply.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

/**
 * Every platform the release workflow builds (.github/workflows/release.yml): its key, npm's
 * `os`/`cpu`/`libc` fields and Rust's target triple. package.json's `optionalDependencies` list
 * exactly these (tests/install checks it).
 */
const PLATFORMS = [
	{ key: "linux-x64-gnu", os: "linux", cpu: "x64", libc: "glibc", target: "x86_64-unknown-linux-gnu" },
	{ key: "linux-arm64-gnu", os: "linux", cpu: "arm64", libc: "glibc", target: "aarch64-unknown-linux-gnu" },
	{ key: "linux-x64-musl", os: "linux", cpu: "x64", libc: "musl", target: "x86_64-unknown-linux-musl" },
	{ key: "linux-arm64-musl", os: "linux", cpu: "arm64", libc: "musl", target: "aarch64-unknown-linux-musl" },
	{ key: "darwin-x64", os: "darwin", cpu: "x64", target: "x86_64-apple-darwin" },
	{ key: "darwin-arm64", os: "darwin", cpu: "arm64", target: "aarch64-apple-darwin" },
	{ key: "win32-x64-msvc", os: "win32", cpu: "x64", target: "x86_64-pc-windows-msvc" },
];

const ROOT = "sessiondb";

/** glibc or musl, as npm's `libc` field names them (Linux only). */
function libc() {
	if (process.platform !== "linux") return null;
	try {
		// Node's diagnostic report names the glibc it runs on; a musl Node has none.
		const report = process.report?.getReport?.();
		const header = typeof report === "string" ? JSON.parse(report).header : report?.header;
		if (header) return header.glibcVersionRuntime ? "glibc" : "musl";
	} catch {
		// fall through to the loader's file name
	}
	try {
		return fs.readdirSync("/lib").some((f) => f.startsWith("ld-musl-")) ? "musl" : "glibc";
	} catch {
		return "glibc";
	}
}

/** This machine's platform key, whether or not a package is built for it: `linux-x64-gnu`. */
function hostKey() {
	const c = libc();
	const suffix = c === "glibc" ? "-gnu" : c === "musl" ? "-musl" : process.platform === "win32" ? "-msvc" : "";
	return `${process.platform}-${process.arch}${suffix}`;
}

/** The platform entry for this machine, or null when the release builds none for it. */
function host() {
	const key = hostKey();
	return PLATFORMS.find((p) => p.key === key) ?? null;
}

const packageName = (key) => `${ROOT}-${key}`;
const addonFile = (key) => `${ROOT}.${key}.node`;
const executableFile = (key) => (key.startsWith("win32-") ? `${ROOT}.exe` : ROOT);

/** The installed folder of this machine's prebuilt package, or null. */
function prebuiltDir() {
	const p = host();
	if (!p) return null;
	try {
		return path.dirname(require.resolve(`${packageName(p.key)}/package.json`));
	} catch {
		return null;
	}
}

/**
 * Where the native files are: a build from source beside this file (build.mjs: the repository's
 * own builds, or the fallback of install.cjs) wins over the prebuilt package, as napi-rs's
 * loaders prefer a local file.
 */
function addonPath() {
	const local = path.join(__dirname, "sessiondb.node");
	if (fs.existsSync(local)) return local;
	const dir = prebuiltDir();
	const p = host();
	return dir && p ? path.join(dir, addonFile(p.key)) : null;
}

function executablePath() {
	const name = process.platform === "win32" ? "sessiondb.exe" : "sessiondb";
	const local = path.join(__dirname, "native", name);
	if (fs.existsSync(local)) return local;
	const dir = prebuiltDir();
	const p = host();
	return dir && p ? path.join(dir, executableFile(p.key)) : null;
}

/** One line for a machine with neither a prebuilt package nor a local build. */
function missingMessage(what) {
	const p = host();
	const key = hostKey();
	return p
		? `sessiondb: the ${what} for ${key} is missing: its package ${packageName(key)} is not installed ` +
				`(npm skips optional dependencies with --no-optional or --omit=optional); reinstall sessiondb`
		: `sessiondb: no prebuilt ${what} for ${key} (prebuilt: ${PLATFORMS.map((x) => x.key).join(", ")}); ` +
				`install Rust (https://rustup.rs) and reinstall sessiondb to build it from source`;
}

module.exports = {
	PLATFORMS,
	ROOT,
	hostKey,
	host,
	packageName,
	addonFile,
	executableFile,
	addonPath,
	executablePath,
	missingMessage,
};

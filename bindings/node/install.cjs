// npm's install script of the root package. A prebuilt package for this platform (an optional
// dependency, platform.cjs) is all it needs, and then nothing is compiled. Without one it builds
// from source (build.mjs) when cargo is present; with neither it fails with one line naming the
// platform, so npm rolls the install back instead of leaving a package that cannot load.
"use strict";
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const platform = require("./platform.cjs");

function ready() {
	const addon = platform.addonPath();
	const exe = platform.executablePath();
	return addon && exe && fs.existsSync(addon) && fs.existsSync(exe);
}

function hasCargo() {
	const cargo = process.env.CARGO || "cargo";
	const r = spawnSync(cargo, ["--version"], { stdio: "ignore" });
	return !r.error && r.status === 0;
}

// In the repository (bindings/node of a checkout) the source is the truth: always build it.
const inRepository = fs.existsSync(path.join(__dirname, "..", "..", "Cargo.toml")) && fs.existsSync(path.join(__dirname, "src"));
if (!inRepository && ready()) process.exit(0);
const key = platform.hostKey();
if (!hasCargo()) {
	const p = platform.host();
	process.stderr.write(
		p
			? `sessiondb: the prebuilt package ${platform.packageName(key)} for ${key} was not installed ` +
					"(optional dependencies omitted?) and there is no Rust toolchain (cargo) to build from source\n"
			: `sessiondb: no prebuilt package for ${key} (prebuilt: ${platform.PLATFORMS.map((x) => x.key).join(", ")}) ` +
					"and no Rust toolchain (cargo) to build from source; install Rust from https://rustup.rs and reinstall\n",
	);
	process.exit(1);
}
if (!inRepository) process.stderr.write(`sessiondb: no prebuilt package for ${key}; building from source with cargo (a few minutes)\n`);
const r = spawnSync(process.execPath, [path.join(__dirname, "build.mjs")], { stdio: "inherit" });
process.exit(r.status ?? 1);

// The packages' platform lists agree: platform.cjs (the owner), the root package's
// optionalDependencies, the release workflow's matrix, and one version everywhere.
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const pkgDir = path.resolve(here, "..");
const repo = path.resolve(pkgDir, "..", "..");
const platform = createRequire(import.meta.url)(path.join(pkgDir, "platform.cjs"));
const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"));

test("optionalDependencies list every platform of platform.cjs, at the package's version", () => {
	const want = Object.fromEntries(platform.PLATFORMS.map((p) => [platform.packageName(p.key), pkg.version]));
	assert.deepEqual(pkg.optionalDependencies, want);
});

test("the release workflow builds exactly those platforms, each for its Rust target", () => {
	const yml = fs.readFileSync(path.join(repo, ".github/workflows/release.yml"), "utf8");
	const built = [...yml.matchAll(/\{ key: ([\w-]+), target: ([\w-]+),/g)].map((m) => ({ key: m[1], target: m[2] }));
	assert.deepEqual(built, platform.PLATFORMS.map((p) => ({ key: p.key, target: p.target })));
});

test("one version: the npm package, the crate, the pi package's dependency", () => {
	const cargo = /^version\s*=\s*"([^"]+)"/m.exec(fs.readFileSync(path.join(repo, "Cargo.toml"), "utf8"))[1];
	const pi = JSON.parse(fs.readFileSync(path.join(repo, "integrations/pi/package.json"), "utf8"));
	assert.equal(cargo, pkg.version);
	assert.equal(pi.dependencies.sessiondb, pkg.version);
});

test("the platform packages carry npm's os, cpu and (on Linux) libc fields", () => {
	for (const p of platform.PLATFORMS) {
		assert.ok(["linux", "darwin", "win32"].includes(p.os), p.key);
		assert.ok(["x64", "arm64"].includes(p.cpu), p.key);
		assert.equal(p.os === "linux", ["glibc", "musl"].includes(p.libc), p.key);
		assert.equal(p.key, `${p.os}-${p.cpu}${p.libc === "glibc" ? "-gnu" : p.libc === "musl" ? "-musl" : p.os === "win32" ? "-msvc" : ""}`);
	}
});

test("this machine's key names a platform the release builds", () => {
	assert.ok(platform.host(), `no prebuilt package for ${platform.hostKey()}`);
});

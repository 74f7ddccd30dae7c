// `pi install ./integrations/pi` accepts the package, and pi lists it.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { PKG } from "./harness.mjs";

const NODE_HOME = process.env.SESSIONDB_NODE_HOME || path.join(os.homedir(), ".cache", "sessiondb-node");
const PI = path.join(NODE_HOME, "node_modules/@earendil-works/pi-coding-agent/dist/cli.js");

test("the manifest is a pi package and `pi install` takes it", () => {
	const manifest = JSON.parse(fs.readFileSync(path.join(PKG, "package.json"), "utf8"));
	assert.ok(manifest.keywords.includes("pi-package"));
	for (const p of [...manifest.pi.extensions, ...manifest.pi.skills]) assert.ok(fs.existsSync(path.join(PKG, p)), p);
	const W = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-pi-install-"));
	try {
		const env = { ...process.env, HOME: W, PI_CODING_AGENT_DIR: path.join(W, "agent") };
		const out = execFileSync(process.execPath, [PI, "install", PKG], { env, encoding: "utf8" });
		assert.match(out, /Installed/);
		const settings = JSON.parse(fs.readFileSync(path.join(W, "agent", "settings.json"), "utf8"));
		assert.deepEqual(settings.packages.map((p) => path.resolve(path.join(W, "agent"), p)), [PKG]);
		const list = execFileSync(process.execPath, [PI, "list"], { env, encoding: "utf8" });
		assert.ok(list.includes(PKG), list);
	} finally {
		fs.rmSync(W, { recursive: true, force: true });
	}
});

// The published addon (the release build `npm install` makes) exports no test-only function:
// panicForTest exists only in the test copy test.sh builds with the `test-panic` feature.
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";

const require = createRequire(import.meta.url);
const here = path.join(import.meta.dirname, "..");
const testOnly = (name) => /test/i.test(name);

test("the published addon exports no test-only function", () => {
	const names = Object.keys(require(path.join(here, "sessiondb.node")));
	// What the JS half uses is there: the list read is the addon's.
	for (const name of ["Native", "Catalog", "defaultDatabase", "isServerUrl", "sessionsRoot"]) assert.ok(names.includes(name), `${name} in ${names}`);
	assert.deepEqual(names.filter(testOnly), []);
});

test("the test copy is the one that has panicForTest", () => {
	const copy = path.join(here, "sessiondb-test.node");
	assert.ok(fs.existsSync(copy), `${copy} is missing: bash test.sh builds it`);
	assert.deepEqual(Object.keys(require(copy)).filter(testOnly), ["panicForTest"]);
});

// A count of the entry bodies this process's binding read, for the test that resuming a long
// session costs its context and screen, not its length (test/parsed-bodies.test.mjs). Off
// unless $SESSIONDB_COUNT_PARSES names a file when the binding loads; then the counts are
// written there as JSON when the process exits. Not part of the API.
"use strict";
const fs = require("node:fs");

const file = process.env.SESSIONDB_COUNT_PARSES || null;
const counts = { lines: 0, usages: 0, rows: 0, results: 0, usageWalks: 0, treeLists: 0 };

if (file !== null) {
	process.on("exit", () => {
		try {
			fs.writeFileSync(file, `${JSON.stringify(counts)}\n`);
		} catch {
			// a count lost rather than an exit that throws
		}
	});
}

/**
 * Adds `n` to the count of `kind`: "lines" (stored lines parsed by JSON.parse), "usages"
 * (stored lines scanned natively for their usages), "rows" (what pi's tree selector reads of
 * assistants, read natively: stored rows or scanned lines), "results" (entries or messages
 * parsed from a native answer: a context), "usageWalks" (usage totals walks answered by the
 * store's usage rows: pi's footer) or "treeLists" (pi's tree selector rows built over the links).
 */
function count(kind, n) {
	if (file !== null) counts[kind] += n;
}

module.exports = { on: file !== null, count };

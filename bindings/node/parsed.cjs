"use strict";
// The entries a SessionManager has parsed in one epoch (one session), by storage key: the same
// object for a line each time it is asked for. Lazy entries ask whether their line is parsed on
// every property pi reads (its footer reads each assistant's usage a dozen times), so the
// session's own keys are also marked in a byte array by line number: a storage key is a double
// (session << 32 | line), and each Map lookup by one boxed a number for the collector.

const SEQS = 2 ** 32; // a storage key is (session << 32) | line number

class ParsedEntries {
	constructor(epoch) {
		this.epoch = epoch;
		this.byKey = new Map();
		this.base = undefined; // session << 32 of the first key set
		this.seqs = new Uint8Array(0); // 1 at the line number of each of the session's keys set
	}

	get(key) {
		return this.byKey.get(key);
	}

	has(key) {
		const seq = key % SEQS;
		if (seq >= 0 && key - seq === this.base) return seq < this.seqs.length && this.seqs[seq] === 1;
		return this.byKey.has(key);
	}

	set(key, entry) {
		this.byKey.set(key, entry);
		const seq = key % SEQS;
		if (seq < 0) return;
		this.base ??= key - seq;
		if (key - seq !== this.base) return;
		if (seq >= this.seqs.length) {
			const grown = new Uint8Array(Math.max(seq + 1, 2 * this.seqs.length, 1024));
			grown.set(this.seqs);
			this.seqs = grown;
		}
		this.seqs[seq] = 1;
	}
}

module.exports = { ParsedEntries, SEQS };

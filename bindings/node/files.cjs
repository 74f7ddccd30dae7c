// pi's JSONL files beside the database ("files mode", what `sessiondb-pi` runs by default).
//
// FileMirror writes one manager's session file exactly as pi 1.6 does: nothing until the
// session holds a user or assistant message (the moment the database saves it too), then the
// header and every line at once (`wx`, as pi), then each line as it is appended. The lines are
// the stored ones, byte for byte. After each write the database records the file's size,
// modification time and last bytes, so a later catch-up finds the file unchanged.
//
// Folders catches the database up with the files before it answers for them: a file written
// behind its back (plain pi, an editor, another machine) is read again (only its new lines
// when it grew), and a session whose file was deleted is removed from the database.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

class FileMirror {
	#n;
	#file = undefined; // the session file this mirror writes
	#flushed = false; // the file holds the session (pi's `flushed`)
	#key = null; // storage key of the last line in the file

	constructor(n) {
		this.#n = n;
	}

	/**
	 * The manager holds another session now (`how`: "open" for one that may be on disk,
	 * "new" for a fresh one, "fork" for a forked copy pi writes at once with `wx`, "branch"
	 * for createBranchedSession, which pi writes at once with `w` when it has a conversation).
	 */
	changed(file, how) {
		this.#file = file;
		this.#flushed = false;
		this.#key = null;
		if (!file || !this.#n.isSaved()) return;
		if (how === "open" && fs.existsSync(file)) {
			if (needsRewrite(file)) {
				this.#writeWhole("w"); // pi rewrites a v1/v2 file it migrated
				return;
			}
			this.#flushed = true;
			this.#key = this.#n.lastKey() ?? null;
			this.#catchUpFile();
			return;
		}
		// A saved session with no file yet (a fork, a branch, an empty file pi fills with a
		// header, or a session kept in the database only until now): written whole.
		this.#writeWhole(how === "fork" ? "wx" : "w");
	}

	/** After an append: writes the file once the session is saved, then each new line. */
	appended() {
		if (!this.#file) return;
		if (!this.#flushed) {
			if (this.#n.isSaved()) this.#writeWhole("wx");
			return;
		}
		const { lastKey, text } = this.#n.fileLinesAfter(this.#key ?? undefined);
		if (text.length === 0) return;
		fs.appendFileSync(this.#file, text);
		this.#key = lastKey ?? this.#key;
		this.#n.noteFileWritten();
	}

	/**
	 * A process killed between the database's append and the file's leaves the file one line
	 * behind: when the file does not end with the stored last line but holds a prefix of the
	 * stored session, the missing lines are appended.
	 */
	#catchUpFile() {
		if (this.#key === null) return;
		const last = this.#n.linesAt([this.#key]);
		const want = Buffer.concat([last.subarray(1, last.length - 1), Buffer.from("\n")]); // `[line]` -> `line\n`
		const fd = fs.openSync(this.#file, "r");
		let tail;
		try {
			const size = fs.fstatSync(fd).size;
			tail = Buffer.alloc(Math.min(size, want.length));
			fs.readSync(fd, tail, 0, tail.length, size - tail.length);
		} finally {
			fs.closeSync(fd);
		}
		if (tail.equals(want)) return;
		const stored = Buffer.concat([Buffer.from(`${this.#n.headerLine()}\n`), this.#n.fileLinesAfter(undefined).text]);
		const onDisk = fs.readFileSync(this.#file);
		if (onDisk.length < stored.length && stored.subarray(0, onDisk.length).equals(onDisk)) {
			fs.appendFileSync(this.#file, stored.subarray(onDisk.length));
			this.#n.noteFileWritten();
		}
	}

	#writeWhole(flag) {
		fs.mkdirSync(path.dirname(this.#file), { recursive: true });
		const { lastKey, text } = this.#n.fileLinesAfter(undefined);
		const fd = fs.openSync(this.#file, flag);
		try {
			fs.writeFileSync(fd, `${this.#n.headerLine()}\n`);
			fs.writeFileSync(fd, text);
		} finally {
			fs.closeSync(fd);
		}
		this.#flushed = true;
		this.#key = lastKey ?? null;
		this.#n.noteFileWritten();
	}
}

/**
 * What pi does to a file it loads: a v1/v2 file is migrated and rewritten (true: the caller
 * writes the stored, migrated lines); a last line without `\n` gets one (done here).
 */
function needsRewrite(file) {
	const fd = fs.openSync(file, "r");
	let first = "";
	let lastByte = 0x0a;
	try {
		const size = fs.fstatSync(fd).size;
		if (size === 0) return false;
		const buf = Buffer.alloc(Math.min(size, 64 * 1024));
		fs.readSync(fd, buf, 0, buf.length, 0);
		const nl = buf.indexOf(0x0a);
		first = buf.subarray(0, nl === -1 ? buf.length : nl).toString("utf8");
		const last = Buffer.alloc(1);
		fs.readSync(fd, last, 0, 1, size - 1);
		lastByte = last[0];
	} finally {
		fs.closeSync(fd);
	}
	try {
		const h = JSON.parse(first);
		if (h && h.type === "session" && (h.version ?? 1) < 3) return true;
	} catch {
		// not a header line: pi leaves such a file as it is
	}
	if (lastByte !== 0x0a) fs.appendFileSync(file, "\n");
	return false;
}

/** Catches the database up with session folders before it answers for them. */
class Folders {
	#catalog = null;
	#native;
	#db;

	constructor(native, db) {
		this.#native = native;
		this.#db = db;
	}

	#cat() {
		if (this.#catalog === null) this.#catalog = new this.#native.Catalog(this.#db);
		return this.#catalog;
	}

	/** Every file of folder `dir` (new, changed; a deleted file's session is removed). */
	folder(dir) {
		if (!dir || !fs.existsSync(dir)) return;
		this.#cat().syncDir(path.resolve(dir), true);
	}

	/** One file (it may be gone). */
	file(file) {
		if (!file) return;
		const p = path.resolve(file);
		if (!p.endsWith(".jsonl")) return;
		this.#cat().syncPaths(path.dirname(p), [p]);
	}

	/** Removes the session recorded at `file` from the database (true when there was one). */
	remove(file) {
		return this.#cat().deleteSession(path.resolve(file));
	}

	/** First start: every session below `dirs` (with a progress line when asked). */
	importAll(dirs, progress) {
		return JSON.parse(this.#cat().importFolders(dirs, progress));
	}
}

module.exports = { FileMirror, Folders };

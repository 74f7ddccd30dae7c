// `fs.realpathSync` memoised for the length of one synchronous call of pi's code.
//
// Node's realpathSync lstats every component of the path on each call. pi's modules import it by
// name from node:fs (a live binding: module.syncBuiltinESMExports() passes a replacement on), so
// while `fn` runs they get a version that resolves a folder once and then only asks whether the
// last component is a symbolic link: a file that is none resolves to its folder's real path
// joined with its name, which is what Node answers. Anything else (a symbolic link, a missing
// file, options, a Buffer or URL) is Node's own call. Nothing changes on disk within one
// synchronous call of the caller's, so the memo ends with it.
import fs from "node:fs";
import module from "node:module";
import path from "node:path";

const MEMO = Symbol("sessiondb.realpathMemo");

/** Runs `fn` with the memo in place; nested calls share the outer memo. */
export function withRealpathMemo(fn) {
	const original = fs.realpathSync;
	if (original[MEMO]) return fn();
	fs.realpathSync = memoOf(original);
	module.syncBuiltinESMExports();
	try {
		return fn();
	} finally {
		fs.realpathSync = original;
		module.syncBuiltinESMExports();
	}
}

/** Whether `p` is an absolute POSIX path that path.resolve leaves as it is. */
const plain = (p) => path.sep === "/" && p.startsWith("/") && !/\/\.{0,2}(?:\/|$)/.test(p);

function memoOf(original) {
	const folders = new Map(); // folder -> its real path
	const answers = new Map(); // path -> its real path, or { error } Node threw for it
	const listings = new Map(); // folder -> Map(name -> whether it is a symbolic link), or null
	// Whether `abs` (`name` in `folder`) is a symbolic link; undefined when it does not exist.
	// The first path asked in a folder is lstat'ed; from the second on, the folder is read once
	// with its entries' types (one getdents for the folder instead of an lstat a file: pi asks
	// for every session of the folder).
	const isLink = (folder, abs, name) => {
		let listing = listings.get(folder);
		if (listing === undefined) {
			listings.set(folder, null);
		} else if (listing === null) {
			try {
				listing = new Map(fs.readdirSync(folder, { withFileTypes: true }).map((d) => [d.name, d.isSymbolicLink()]));
			} catch {
				listing = false; // not a readable folder: lstat each path, as Node does
			}
			listings.set(folder, listing);
		}
		if (listing) return listing.get(name);
		try {
			return fs.lstatSync(abs).isSymbolicLink();
		} catch {
			return undefined;
		}
	};
	const resolve = (p) => {
		// Node resolves the path first, lexically, as here; an absolute path with no empty, `.`
		// or `..` component (pi's session paths) is its own resolution, split at its last slash.
		const abs = plain(p) ? p : path.resolve(p);
		const cut = path.sep === "/" ? abs.lastIndexOf("/") : -1;
		const folder = cut === -1 ? path.dirname(abs) : cut === 0 ? "/" : abs.slice(0, cut);
		const name = cut === -1 ? path.basename(abs) : abs.slice(cut + 1);
		if (folder === abs || name === "") return original(p); // the root
		// A link, or nothing there (Node's error), is Node's own call.
		if (isLink(folder, abs, name) !== false) return original(p);
		let real = folders.get(folder);
		if (real === undefined) {
			real = original(folder);
			folders.set(folder, real);
		}
		return cut === -1 ? path.join(real, name) : real === "/" ? `/${name}` : `${real}/${name}`;
	};
	const memo = function realpathSync(p, options) {
		if (typeof p !== "string" || options !== undefined) return original(p, options);
		let r = answers.get(p);
		if (r === undefined) {
			try {
				r = resolve(p);
			} catch (error) {
				r = { error };
			}
			answers.set(p, r);
		}
		if (typeof r !== "string") throw r.error;
		return r;
	};
	memo.native = original.native;
	memo[MEMO] = true;
	return memo;
}

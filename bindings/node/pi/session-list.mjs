// pi's session list (/resume) under sessiondb-pi. pi's SessionList threads its sessions
// (buildSessionTree) by each one's canonical path: two `fs.realpathSync` calls per session, each
// an lstat of every folder of the path. Listing every session of a big store spends more on those
// calls than on the list itself (10,000 sessions: 20,000 calls, 0.3-0.5 s). While pi's
// filterSessions runs (one synchronous call), `fs.realpathSync` answers from a memo that resolves
// each folder once and lstats only the file (realpath-memo.mjs); its answers are Node's.
import { withRealpathMemo } from "./realpath-memo.mjs";

const PATCHED = Symbol.for("sessiondb.sessionListPatched");

/** Patches pi's SessionList class once (given the class or one of its instances' prototype). */
export function patch(SessionList) {
	const proto = SessionList?.prototype;
	if (proto) patchPrototype(proto);
	return SessionList;
}

/** Patches the prototype of pi's SessionList (unbundled pi keeps the class to its module). */
export function patchPrototype(proto) {
	if (!proto || proto[PATCHED] || typeof proto.filterSessions !== "function") return;
	const filterSessions = proto.filterSessions;
	proto.filterSessions = function (query) {
		return withRealpathMemo(() => filterSessions.call(this, query));
	};
	Object.defineProperty(proto, PATCHED, { value: true });
}

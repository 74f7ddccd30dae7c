// pi's session selector under sessiondb-pi: with SESSIONDB_PI_FILES=off a session has no file,
// so /resume's delete (which moves the file to the trash or unlinks it) removes the session from
// the database first; pi's handler then finds no file, takes that as done and refreshes the list.
import fs from "node:fs";
import binding from "../index.cjs";
import { patchPrototype } from "./session-list.mjs";

const { SessionManager } = binding;

/**
 * pi's SessionSelectorComponent class `Base`, deleting database-only sessions too, with its
 * session list's threading patched (session-list.mjs).
 */
export function wrap(Base) {
	return class SessionSelectorComponent extends Base {
		constructor(...args) {
			super(...args);
			const list = this.sessionList;
			// pi's SessionList class is its module's own: patched through its first instance.
			if (list) patchPrototype(Object.getPrototypeOf(list));
			const piDelete = list?.onDeleteSession;
			if (typeof piDelete !== "function" || SessionManager.usesFiles()) return;
			list.onDeleteSession = async (sessionPath) => {
				if (!fs.existsSync(sessionPath)) {
					try {
						SessionManager.deleteSession(sessionPath);
					} catch (e) {
						list.onError?.(`Failed to delete: ${e.message}`);
						return;
					}
				}
				return piDelete(sessionPath);
			};
		}
	};
}
